"""Explore the decoding: the beam laid open and what-if answered with the model's numbers, for every type."""
import gradio as gr
import numpy as np
import pytest

from attn_demo.config import MODEL_KINDS
from attn_demo.figures import label
from attn_demo.search import Penalties
from attn_demo.ui.explore import NOT_SHOWN, ExploreSection
from conftest import plotly_figure, untyped

SENTENCE = "I see the red cat."


@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_the_explorer_shows_the_beam_and_answers_what_if_with_the_models_numbers(section, attention):
    explore, key = ExploreSection(section.models), f"tiny-{attention}"
    state = section.translate(SENTENCE, 1, False, "pieces", "tiny-bahdanau", "tiny-luong-general").state
    explored, table, tree, rank = explore.beam(state, key, 4, 3, False)
    hypotheses = section.models[key].translator.translate(SENTENCE, beam_size=4, n_best=3)
    assert [h.target_tokens for h in explored["hypotheses"]] == [h.target_tokens for h in hypotheses]
    assert len(table.splitlines()) == 2 + 3 and len(rank["choices"]) == 3
    *_, nodes = plotly_figure(tree).data
    assert {label(h.target_tokens[0]) for h in hypotheses} <= set(nodes.text)  # each first piece is drawn
    assert sum(text.endswith((" #1", " #2", " #3")) for text in nodes.text) == 3  # where each of the 3 best ends
    grid, note, steps, pieces, payload, slider = explore.pick(explored, 0, False)
    assert (grid is not None) == (note == "") == (attention != "none") and len(steps["choices"]) == len(hypotheses[0].target_tokens)
    assert [view["target"] for view in payload["views"]] == [hypotheses[0].target_tokens]  # its step view
    assert payload["steps"] == len(hypotheses[0].target_tokens) and slider["maximum"] == max(2, payload["steps"])
    choices = explore.choices(explored, 0, 1)["choices"]
    top = section.models[key].translator.choices(SENTENCE, hypotheses[0].target_tokens, 1)
    assert [piece for _, piece in choices] == [piece for piece, _ in top] and f"p = {top[0][1]:.3f}" in choices[0][0]

    penalised = explore.beam(state, key, 4, 3, False, coverage=0.5, repeat=1.0)[0]["hypotheses"]  # the sliders
    ranked = section.models[key].translator.translate(SENTENCE, beam_size=4, n_best=3, penalties=Penalties(
        coverage=0.5 if attention != "none" else 0.0, repeat=1.0 if attention != "none" else 0.0))
    assert [(h.target_tokens, h.score) for h in penalised] == [(h.target_tokens, h.score) for h in ranked]
    assert f"{ranked[0].score:.3f} |" in explore.beam(state, key, 4, 3, False, 0.5, 1.0)[1]  # the table shows the score
    stepwise = explore.beam(state, key, 4, 3, False, 0.0, 3.0, True)[0]["hypotheses"]  # the box "at every step"
    searched = section.models[key].translator.translate(SENTENCE, beam_size=4, n_best=3, penalties=Penalties(
        repeat=3.0 if attention != "none" else 0.0, stepwise=attention != "none"))
    assert [(h.target_tokens, h.score) for h in stepwise] == [(h.target_tokens, h.score) for h in searched]

    other = choices[1][1]
    summary, result_grid, _, payload, _ = explore.change(explored, 0, 1, other, "", 0, False)
    edited = section.models[key].translator.translate(SENTENCE, beam_size=4, prefix=[other])
    assert f"log p {hypotheses[0].log_prob:.2f} → {edited.log_prob:.2f}" in summary
    assert [view["target"] for view in payload["views"]] == [hypotheses[0].target_tokens, edited.target_tokens]
    assert [view["forced"] for view in payload["views"]] == [[], []]  # a changed piece: every α is softmax(e)
    if attention != "none":
        (outline,) = plotly_figure(result_grid).layout.shapes  # the edited row, step 1
        assert (outline.y0, outline.y1, outline.x0) == (-0.5, 0.5, -0.5)
    summary, result_grid, result_note, payload, _ = explore.move(explored, 0, 2, None, "", 1, False)
    if attention == "none":
        assert "no attention" in summary and result_grid is None and result_note == "" and payload == gr.skip()
    else:
        alpha = plotly_figure(result_grid).data[0].z
        np.testing.assert_array_equal(alpha[1], np.eye(alpha.shape[1], dtype=np.float32)[1])  # step 2 all on piece 2
        (outline,) = plotly_figure(result_grid).layout.shapes  # the cell whose α was set
        assert (outline.x0, outline.y0) == (0.5, 0.5)
        np.testing.assert_array_equal(untyped(payload["views"][1]["weights"])[1], alpha[1])  # the step view shows this α
        assert [view["forced"] for view in payload["views"]] == [[], [2]]  # and says where it was set by hand
    assert explore.beam(None, key, 4, 3, False)[1] == "Translate a sentence first."



@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_the_explorer_forgets_its_beam_when_another_sentence_is_translated(section, attention):
    explore, key = ExploreSection(section.models), f"tiny-{attention}"
    state = section.translate(SENTENCE, 1, False, "pieces", "tiny-bahdanau", "tiny-luong-general").state
    explored = explore.beam(state, key, 4, 3, False)[0]
    repicked = section.translate(SENTENCE, 1, False, "pieces", key, "tiny-bahdanau").state
    assert explore.forget(repicked, explored) == [gr.skip()] * 8  # the same sentence, other models: kept
    other = section.translate("The dog sleeps.", 1, False, "pieces", "tiny-bahdanau", "tiny-luong-general").state
    for state_now in (other, None):  # another sentence, or a refused one
        gone, table, search, rank, piece, result, result_grid, result_note = explore.forget(state_now, explored)
        assert (gone, table, search, result) == (None, NOT_SHOWN, None, "")  # the instruction, in place of the table
        assert rank == piece == gr.update(choices=[], value=None)  # no hypothesis picked: pick clears what hangs on it
        assert result_grid is None and result_note == ""
        assert explore.pick(gone, rank["value"], False)[4] is None  # ... its step view too
    assert explore.forget(other, None) == [gr.skip()] * 8  # nothing explored: nothing to clear
