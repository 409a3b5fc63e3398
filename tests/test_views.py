"""What a translation's views draw, built once for the page and the export."""
import html

import numpy as np

from attn_demo.catalogue import load_models
from attn_demo.checkpoint import save_checkpoint
import re

from attn_demo.views import NO_COVERAGE, coverage_row, grid_figure, step_data
from conftest import DEVICE, plotly_figure, tiny_model


def test_grids_and_steps_come_from_the_sides_translations(tmp_path, toy_tokenizers, attention):
    save_checkpoint(tmp_path / "a", tiny_model(attention), *toy_tokenizers)
    save_checkpoint(tmp_path / "b", tiny_model("bahdanau", seed=3), *toy_tokenizers)
    models = {model.key: model for model in load_models(tmp_path, device=DEVICE)[0]}
    sides = [(models[key], models[key].view("I see the red cat.", 1)) for key in ("a", "b")]
    payload = step_data(sides)
    assert payload["steps"] == max(len(view["result"].target_tokens) for _, view in sides)
    assert [v["title"] for v in payload["views"]] == [model.title for model, _ in sides]
    model, view = sides[0]
    if attention == "none":
        assert grid_figure(model, view, False) is None  # no α, no grid
        assert NO_COVERAGE in coverage_row(model, view)  # and its coverage slot says why there is none
        return
    np.testing.assert_array_equal(plotly_figure(grid_figure(model, view, False)).data[0].z, view["result"].attention)
    by_word = plotly_figure(grid_figure(model, view, False, unit="words")).data[0].z
    np.testing.assert_allclose(by_word.sum(axis=1), 1, atol=1e-6)  # a French word's row still sums to 1


def test_the_coverage_row_shows_each_piece_s_column_sum_and_each_word_s_total(tmp_path, toy_tokenizers):
    save_checkpoint(tmp_path / "a", tiny_model("bahdanau"), *toy_tokenizers)
    model = load_models(tmp_path, device=DEVICE)[0][0]
    view = model.view("I see the <red> cat.", 1)
    result = view["result"]
    cells = re.findall(r'title="C = ([0-9.]+)"><span class="coverage-piece">(.*?)</span>', coverage_row(model, view))
    assert [piece for _, piece in cells] == [html.escape(p) for p in result.source_tokens]  # user text escaped
    np.testing.assert_allclose([float(c) for c, _ in cells], result.attention.sum(0), atol=5e-4)
    words = re.findall(r'title="C = ([0-9.]+)"', coverage_row(model, view, unit="words"))
    assert len(words) == len("I see the <red> cat.".split()) + 1  # </s> is a word of its own
    assert abs(sum(float(c) for c in words) - len(result.target_tokens)) < 5e-3  # every step's α sums to 1
