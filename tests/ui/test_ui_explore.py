"""Explore the decoding: the beam laid open and what-if answered with the model's numbers, for every type."""
import dataclasses
from concurrent.futures import ThreadPoolExecutor

import gradio as gr
import numpy as np
import pytest
from gradio_client import Client

from attn_demo.decoding.search import Penalties
from attn_demo.measures.heads import same_reading
from attn_demo.models.config import MODEL_KINDS
from attn_demo.ui.explore import NOT_SHOWN, SHOW_FIRST, ExploreSection
from attn_demo.ui.page import ModelsOnPage
from attn_demo.ui.trace_files import TraceFiles
from attn_demo.ui.translate import TranslateSection
from attn_demo.views.figures import label
from benchmarks.server import free_port
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


@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_a_head_turned_off_searches_again_without_it_and_a_model_without_heads_says_it_has_none(section, attention):
    explore, key = ExploreSection(section.models), f"tiny-{attention}"
    model = section.models[key]
    assert explore.turn_off(None, "1.2", False).summary == SHOW_FIRST and explore.heads(None)["choices"] == [("none", "none")]
    state = section.translate(SENTENCE, 1, False, "pieces", "tiny-bahdanau", "tiny-luong-general").state
    explored = explore.beam(state, key, 4, 3, False, coverage=0.5)[0]  # ranked with a coverage penalty: kept
    picker = explore.heads(explored)
    if attention != "transformer":
        assert picker["choices"] == [("none", "none")] and picker["info"].endswith("has no heads to turn off: " + (
            "it attends with one score, one α per step." if attention != "none" else "it has no attention at all, one fixed c."))
        reply = explore.turn_off(explored, "1.1", False)
        assert reply == (picker["info"], None, "", gr.skip(), gr.skip())  # it says so, and does nothing
        return
    assert [label for label, _ in picker["choices"]] == ["none", *(f"layer {layer}, head {head}" for layer in (1, 2)
                                                                   for head in (1, 2, 3))]
    translator, ranking = model.translator, dataclasses.replace(model.translator.penalties, coverage=0.5)
    original = explored["hypotheses"][0]
    assert translator.translate(SENTENCE, beam_size=4, penalties=ranking).target_tokens == original.target_tokens
    for layer, head in ((0, 1), (1, 2)):  # a head with a layer above it, and one of the top layer
        reply = explore.turn_off(explored, f"{layer + 1}.{head + 1}", False)
        off = translator.translate(SENTENCE, beam_size=4, penalties=ranking, heads_off=[(layer, head)])
        assert f"What if layer {layer + 1}, head {head + 1} were off?** {off.text}" in reply.summary
        assert f"log p {original.log_prob:.2f} → {off.log_prob:.2f}" in reply.summary
        np.testing.assert_array_equal(plotly_figure(reply.grid).data[0].z, off.attention)  # its α, in its own grid
        views = reply.steps["views"]  # hypothesis 1 with every head at work beside it, step by step
        assert [view["target"] for view in views] == [original.target_tokens, off.target_tokens]
        assert [view["heads"]["off"] for view in views] == [[], [[layer, head]]]
        assert reply.slider["maximum"] == max(2, reply.steps["steps"])
        every, without = (untyped(view["heads"]["cross"]) for view in views)
        np.testing.assert_array_equal(without, off.heads.cross)
        assert not untyped(views[1]["heads"]["outputs"])[layer, head].any()  # the head's output: zero at every step
        steps = same_reading(original.target_tokens, off.target_tokens)
        # while both read the same French, the layers up to the head's compute alike; those above it read its absence
        np.testing.assert_array_equal(every[:layer + 1, :, :steps], without[:layer + 1, :, :steps])
        assert (layer + 1 == translator.config.dec_layers) == np.allclose(every[layer + 1:, :, :steps], without[layer + 1:, :, :steps])
    for forged in ("3.1", "1.4", "0.1", "2.mean", "layer 2, head 3", "x", 7, 2.5):  # no such head, or not a head
        reply = explore.turn_off(explored, forged, False)
        assert f"is not a head of {model.title}: it has 2 decoder layers of 3 heads" in reply.summary
        assert reply[1:] == (None, "", gr.skip(), gr.skip())
    for nothing in ("none", "", None):
        assert explore.turn_off(explored, nothing, False).summary == "Every head is at work: pick one to turn off."


def test_a_class_turning_the_same_head_off_searches_once(section, monkeypatch):
    """Thirty sessions asking for one head off at once: one search, one reply for all; another head searches again."""
    explore = ExploreSection(section.models)
    state = section.translate(SENTENCE, 1, False, "pieces", "tiny-bahdanau", "tiny-transformer").state
    explored = explore.beam(state, "tiny-transformer", 3, 2, False)[0]
    searches, search = [], explore._head_off
    monkeypatch.setattr(explore.searched_without, "compute", lambda *key: searches.append(key[-1]) or search(*key))
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda _: explore.turn_off(explored, "2.3", False), range(30)))
    assert searches == [(1, 2)] and len({reply.summary for reply in replies}) == 1
    explore.turn_off(explored, "1.1", False)
    assert searches == [(1, 2), (0, 0)]


@pytest.mark.slow  # a page served
def test_turning_a_head_off_through_the_rest_api_answers_with_a_message(models, tmp_path):
    section = TranslateSection(ModelsOnPage(models, ("tiny-transformer", "tiny-bahdanau")), TraceFiles(tmp_path))
    with gr.Blocks() as demo:
        large_text = gr.Checkbox(False)
        ExploreSection(section.models).render(section.render(demo, large_text), large_text)
    demo.queue().launch(prevent_thread_lock=True, server_port=free_port(), quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        assert client.predict("none", False, api_name="/explore_head_off")[0] == SHOW_FIRST  # nothing explored yet
        client.predict(api_name="/translate")  # the first example, with the Transformer on the left
        client.predict(api_name="/explore_beam")  # which the explorer opens on
        for forged in ("9.9", "<img src=x>", "2.mean"):  # named by a client: none of its heads, said so, escaped
            answer = client.predict(forged, False, api_name="/explore_head_off")[0]
            assert "is not a head of" in answer and "<img" not in answer
        assert client.predict(api_name="/explore_heads")["choices"][-1] == ["layer 2, head 3", "2.3"]
        summary = client.predict("2.3", False, api_name="/explore_head_off")[0]
        assert summary.startswith("**What if layer 2, head 3 were off?**")
    finally:
        demo.close()
