"""What a translation's views draw, built once for the page and the export."""
import html
import re

import numpy as np
import pytest

from attn_demo.checkpoints.card import write_model_card
from attn_demo.checkpoints.folder import save_checkpoint
from attn_demo.decoding.grids import grid_name, piece_words
from attn_demo.serving.catalogue import load_models
from attn_demo.views.translation import (
    NO_COVERAGE, NOT_MARKED, coverage_marks, coverage_row, grid_figure, grid_note, read_pick, step_data, under_grid)
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


def test_the_coverage_row_marks_the_words_below_the_threshold_the_card_chose_and_says_what_that_means(
        tmp_path, toy_tokenizers, monkeypatch):
    save_checkpoint(tmp_path / "a", tiny_model("bahdanau"), *toy_tokenizers)
    model = load_models(tmp_path, device=DEVICE)[0][0]
    view = model.view("I see the red cat.", 1)
    result = view["result"]
    words, spans = piece_words(result.source_tokens)
    totals = [float(result.coverage[list(span)].sum()) for span in spans][:-1]  # </s> is never marked
    threshold = float(np.median(totals))  # about half the words below it
    monkeypatch.setattr(model.translator, "marks", {"threshold": threshold, "low": {str(threshold): {"precision": 0.72}}})
    below = [word for word, total in zip(words, totals) if total < threshold and re.search(r"\w", word)]
    by_word = coverage_row(model, view, unit="words")
    dashed = re.findall(r'coverage-cell coverage-low"[^>]*><span class="coverage-piece">(.*?)</span>', by_word)
    assert dashed == [html.escape(w) for w in below] and below and "no counterpart in the translation 72% of the time" in by_word
    by_piece = coverage_row(model, view)
    assert by_piece.count("coverage-low") == sum(len(spans[words.index(w)]) for w in below)  # every piece of a marked word
    assert coverage_marks(model, view) == {"below": threshold, "words": below}  # what the JSON trace carries
    lowest = min(totals) / 2
    monkeypatch.setattr(model.translator, "marks", {"threshold": lowest, "low": {str(lowest): {"precision": 0.72}}})
    assert "coverage-low" not in coverage_row(model, view) and "every word got some attention" in coverage_row(model, view)
    monkeypatch.setattr(model.translator, "marks", {"threshold": None, "low": {}})
    assert NOT_MARKED in coverage_row(model, view) and "coverage-low" not in coverage_row(model, view)
    assert coverage_marks(model, view) is None
    monkeypatch.setattr(model.translator, "marks", None)  # not measured: the row alone
    assert "coverage-note" not in coverage_row(model, view) and coverage_marks(model, view) is None


@pytest.fixture(scope="module")
def transformer(tmp_path_factory, toy_tokenizers):
    """A tiny Transformer served as the page serves one (2 decoder layers of 3 heads), and its view of a sentence."""
    folder = tmp_path_factory.mktemp("transformer")
    save_checkpoint(folder / "t", tiny_model("transformer", seed=5), *toy_tokenizers)
    model = load_models(folder, device=DEVICE)[0][0]
    return model, model.view("I see the red cat.", 1)


def test_a_grids_note_says_what_the_card_measured_of_that_grid(tmp_path, toy_tokenizers):
    save_checkpoint(tmp_path / "t", tiny_model("transformer", seed=5), *toy_tokenizers)
    grids = [grid_name(layer, head) for layer in range(2) for head in (None, 0, 1, 2)]
    aer = {name: round(0.4 + i / 100, 4) for i, name in enumerate(grids)}
    write_model_card(tmp_path / "t", alignment_results={
        "aer": {"argmax": 0.5}, "precision": {"argmax": 0.5}, "recall": {"argmax": 0.5}, "aligner": {}, "n": 3,
        "skipped": 0, "dataset": "gold", "command": "python -m attn_demo.evaluation.evaluate",
        "heads": {"trial": aer, "test": {name: round(value + 0.0051, 4) for name, value in aer.items()}, "chosen": {"layer": 0, "head": None}}})
    write_model_card(tmp_path / "t", heads={"bleu": 30.0, "n": 2000, "of": 10000, "beam": 5, "dataset": "test.tsv",
                                            "command": "python -m attn_demo.evaluation.evaluate", "refused": 0, "heads": {
        grid_name(1, 2): {"confidence": 0.614, "eos_share": 0.083, "bleu_without": 28.75, "bleu_cost": 1.25}}})
    model = load_models(tmp_path, device=DEVICE)[0][0]  # read back from the card's facts, as the page reads it
    note = grid_note(model, (1, 2))
    assert ("argmax AER 0.475 on the Hansards test split; over 2,000 Tatoeba test sentences, confidence 0.61, "
            "8% of its α on </s>, and BLEU -1.25 with it turned off.") in note
    assert "argmax AER 0.445 on the Hansards test split." in grid_note(model, (1, None))  # a mean: no head to turn off


@pytest.mark.parametrize("text, pick", [
    ("", None), ("1.1", (0, 0)), ("2.3", (1, 2)), ("2.mean", (1, None)), ("1.mean", (0, None)),
    ("3.1", None), ("1.4", None), ("0.1", None), ("1.0", None), ("-1.1", None), ("1", None), ("1.1.1", None),
    ("a.b", None), ("x" * 10_000, None),
])
def test_a_pick_names_a_layer_and_head_of_this_model_or_none(transformer, text, pick):
    """The page's "layer.head" from 1; anything else (a forged value, another model's layer) is the shown grid."""
    model, _ = transformer
    assert read_pick(model, text) == pick


def test_a_model_without_heads_has_no_pick(tmp_path, toy_tokenizers):
    save_checkpoint(tmp_path / "a", tiny_model("luong-dot"), *toy_tokenizers)
    model = load_models(tmp_path, device=DEVICE)[0][0]
    assert read_pick(model, "1.1") is None and grid_note(model) == ""


@pytest.mark.parametrize("pick", [(0, 0), (1, 2), (0, None), (1, None)])
def test_a_picked_grid_and_its_coverage_are_that_heads_alpha(transformer, pick):
    model, view = transformer
    result = view["result"]
    alpha = result.heads.cross[pick[0]].mean(0) if pick[1] is None else result.heads.cross[pick]
    figure = plotly_figure(grid_figure(model, view, False, pick=pick))
    np.testing.assert_allclose(figure.data[0].z, alpha, rtol=1e-6, atol=1e-7)  # a head's exactly; a mean's to float32
    assert grid_name(*pick) in figure.layout.title.text
    cells = re.findall(r'title="C = ([0-9.]+)"', coverage_row(model, view, pick=pick))
    np.testing.assert_allclose([float(c) for c in cells], alpha.sum(0), atol=5e-4)  # written with 3 decimals
    assert grid_name(*pick).capitalize() in grid_note(model, pick)


def test_the_payloads_grids_say_what_the_servers_grids_say(transformer):
    """The page redraws a picked grid by piece from the payload: its title and screen-reader text are the server's."""
    model, view = transformer
    grids = step_data([(model, view)])["views"][0]["heads"]["grids"]
    assert len(grids) == 2 * (3 + 1)
    for grid in grids:
        layout = plotly_figure(grid_figure(model, view, False, pick=read_pick(model, grid["key"]))).layout
        assert (grid["title"], grid["text"]) == (layout.title.text, layout.meta["text"]) and layout.meta["unit"] == "pieces"
    assert plotly_figure(grid_figure(model, view, False, unit="words")).layout.meta["unit"] == "words"


def test_under_a_transformers_grid_is_every_grids_note_and_coverage_row_the_picked_one_shown(transformer):
    model, view = transformer
    under = under_grid(model, view, pick=(1, 2))
    blocks = re.findall(r'<div class="coverage-pick" data-pick="([^"]+)"( hidden)?><p class="grid-note">(.*?)</p>', under)
    assert [key for key, _, _ in blocks] == ["1.mean", "1.1", "1.2", "1.3", "2.mean", "2.1", "2.2", "2.3"]
    assert [key for key, hidden, _ in blocks if not hidden] == ["2.3"]
    for key, _, note in blocks:
        pick = read_pick(model, key)
        assert note == html.escape(grid_note(model, pick)).replace("**", "<strong>", 1).replace("**", "</strong>", 1)
        assert f'{note}</p>{coverage_row(model, view, pick=pick)}</div>' in under  # that grid's own row, under its note
    assert under_grid(model, view, "words").count("coverage-pick") == 8
    assert re.search(r'data-pick="1.mean">', under_grid(model, view))  # no pick: the config's shown grid (layer 1's mean)


def test_the_shown_grid_is_the_configs_and_its_note_says_why(transformer):
    model, view = transformer
    result, config = view["result"], model.translator.config
    assert result.heads.shown == (config.layer_shown, config.shown_head) == (0, None)  # 2 layers: the penultimate's mean
    np.testing.assert_array_equal(plotly_figure(grid_figure(model, view, False)).data[0].z, result.attention)
    np.testing.assert_array_equal(plotly_figure(grid_figure(model, view, False, pick=(0, None))).data[0].z, result.attention)
    assert "not yet measured" in grid_note(model) and "Garg et al. 2019" in grid_note(model)
    assert "model card measured" not in grid_note(model)  # nothing measured, nothing said
    assert grid_note(model, (1, 2)).startswith("**Layer 2, head 3**, picked")
