"""Compare them all: a row and a bar for every model, and the README's models table is the shipped cards' table."""
from attn_demo.serving.catalogue import load_models
from attn_demo.ui.compare import CompareSection
from conftest import DEVICE, ROOT, plotly_figure


def test_compare_them_all_has_a_row_and_a_bar_for_every_model(models):
    compare = CompareSection(models)
    rows = compare.table_markdown().splitlines()[2:]
    assert len(rows) == len(models) and all(f"`{model.key}`" in row for model, row in zip(models, rows))
    ticks = plotly_figure(compare.figure(False)).data[0].y  # a long title broken into lines
    assert [tick.replace("<br>", " ") for tick in ticks] == [model.title for model in models]


def test_the_readme_models_table_is_the_compare_table_of_the_shipped_cards():
    """A checkpoint shipped or re-measured without the README following fails here."""
    table = CompareSection(load_models(device=DEVICE)[0]).table_markdown()
    assert table in (ROOT / "README.md").read_text(encoding="utf-8")
