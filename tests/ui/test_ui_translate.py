"""The translate section over a catalogue of tiny checkpoints, one of every attention type: every view
works for every type, the no-attention baseline included, and says plainly what it lacks."""
import json
import re
from types import SimpleNamespace

import gradio as gr
import numpy as np
import pytest

from attn_demo.decoding.grids import words_view
from attn_demo.models.config import MODEL_KINDS
from attn_demo.ui.page import NO_GRID
from attn_demo.ui.translate import LINK_VIEW, client_reply, data_line, equations_markdown
from attn_demo.views.translation import under_grid
from conftest import plotly_figure, untyped

SENTENCE = "I see the red cat."


def sides(reply) -> dict:
    """A translation's Reply by side and field, as an API client receives it: {"left": {"heading": …, …}, "right": …}."""
    return client_reply(reply.values()[1:])



def test_the_pickers_offer_every_checkpoint_with_its_type(section, models):
    assert [key for _, key in section.models.choices()] == [model.key for model in models] and len(models) == len(MODEL_KINDS) + 1
    assert ("Luong (general) — another", "another") in section.models.choices()



@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_every_view_works_for_every_attention_type_beside_bahdanau(section, attention):
    key = f"tiny-{attention}"
    outputs = section.translate(SENTENCE, 1, False, "pieces", key, "tiny-bahdanau")
    state, status, shown = outputs.state, outputs.status, sides(outputs)
    model = section.models[key]
    result = state["views"]["left"]["result"]
    assert status == "" and state["picks"] == {"left": key, "right": "tiny-bahdanau"}
    assert shown["left"]["text"] == result.text and model.title in shown["left"]["heading"]
    assert shown["left"]["equations"] == equations_markdown(model)
    if attention == "none":  # no grid, and a sentence that says why
        assert shown["left"]["grid"] is None and shown["left"]["note"] == NO_GRID
        assert "fixed vector" in shown["left"]["equations"] and "e_{tj}" not in shown["left"]["equations"]
    else:
        figure = shown["left"]["grid"]
        np.testing.assert_array_equal(plotly_figure(figure).data[0].z, result.attention)
        keys = model.kind.keys(model.translator.config)
        assert (f"(B, L, 2, H, S, {keys})" if model.kind.heads else f"(B, S, {keys})") in shown["left"]["equations"]
        assert shown["left"]["note"] == "" and shown["left"]["coverage"] == under_grid(model, state["views"]["left"])
    words = section.grids(state, False, "words")
    assert words[1] == (NO_GRID if attention == "none" else "")  # the baseline's note says why it has none
    assert words[2] == under_grid(model, state["views"]["left"], "words")

    payload = untyped(json.loads(json.dumps(section.step_data(state))))  # as the page receives it
    left = payload["views"][0]
    assert left["title"] == model.title and payload["views"][1]["title"] == "Bahdanau (additive)"
    np.testing.assert_array_equal(left["contexts"], result.contexts)
    if attention == "none":  # the one fixed c and no query, scores or weights
        assert left["query"] is left["scores"] is left["weights"] is left["queries"] is None
        np.testing.assert_array_equal(left["centres"], np.tile(left["centres"][0], (len(result.target_tokens), 1)))
    else:
        np.testing.assert_array_equal(left["weights"], result.attention)

    trace = json.loads(open(section.trace_file(state)).read())
    assert set(trace["models"]) == {key, "tiny-bahdanau"} and trace["source"] == SENTENCE
    assert ("attention" in trace["models"][key]) == (attention != "none")  # the baseline's trace has no α



def test_the_same_checkpoint_on_both_sides_works(section):
    outputs = section.translate(SENTENCE, 2, False, "pieces", "tiny-luong-dot", "tiny-luong-dot")
    shown = sides(outputs)
    assert shown["left"]["text"] == shown["right"]["text"] and outputs.state["views"]["left"] is outputs.state["views"]["right"]



def test_changing_a_pick_decodes_only_the_new_model(section, monkeypatch):
    state = section.translate("I see the blue pen.", 1, False, "pieces", "tiny-bahdanau", "tiny-luong-general").state
    kept = section.models["tiny-bahdanau"]
    computed = []  # every model call goes through Model.run
    monkeypatch.setattr(kept, "run", lambda *args, **kwargs: computed.append(args))
    outputs = section.repick(state, False, "pieces", "tiny-bahdanau", "tiny-none")
    assert computed == []  # the kept side did not decode again
    assert outputs.state["views"]["left"] is state["views"]["left"] and outputs.state["text"] == state["text"]
    assert outputs.state["picks"]["right"] == "tiny-none" and sides(outputs)["right"]["note"] == NO_GRID



def test_before_any_translation_a_pick_shows_its_equations_and_nothing_else(section):
    outputs = section.repick(None, False, "pieces", "tiny-none", "tiny-luong-dot")
    shown = sides(outputs)
    assert outputs.state is None and shown["left"]["text"] == "" and "No attention" in shown["left"]["heading"]
    assert "s_t^\\top h_j" in shown["right"]["equations"]



def test_words_never_seen_in_training_are_named_and_what_the_models_learned_from_is_one_line(section, models, monkeypatch):
    facts = {"dataset": "toy.tsv", "pairs": 1120, "mean_english_words": 3.52, "pairs_16_plus_words": 0,
             "english_words": frozenset(["i", "see", "the", "red", "cat"])}
    for model in models:
        monkeypatch.setattr(model.translator, "training_data", facts)
    status = section.translate("I see the red boat and the pen and the boat.", 1, False, "pieces", "tiny-none", "tiny-bahdanau").status
    assert status == ("ℹ️ Never seen in training: **boat**, **and**, **pen**. No English sentence the models learned from "
                      "contains any of them, so they can only guess them from pieces.")
    assert "contains it, so they can only guess it" in section.translate("I see the pen.", 1, False, "pieces", "tiny-none",
                                                                          "tiny-bahdanau").status
    assert section.translate(SENTENCE, 1, False, "pieces", "tiny-none", "tiny-bahdanau").status == ""
    assert data_line(models) == ("These models learned from 1,120 everyday sentence pairs of Tatoeba (toy.tsv), 3.5 English "
                                 "words on average and 0 of 16 words or more: expect less of long, technical or rare-word sentences.")
    monkeypatch.setattr(models[0].translator, "training_data", None)  # a checkpoint that does not say
    assert "model card" in data_line(models)
    status = section.translate("I see the red boat.", 1, False, "pieces", models[0].key, models[0].key).status
    assert status == ""  # no training data recorded: nothing is claimed



def test_a_pick_that_does_not_exist_gets_a_message(section):
    outputs = section.translate(SENTENCE, 1, False, "pieces", "<script>", "tiny-bahdanau")
    assert outputs.state is None and outputs.status.startswith("⚠️") and "<script>" not in outputs.status


def test_a_link_opens_a_transformers_layer_and_head_and_names_one_it_lacks(section):
    request = SimpleNamespace(query_params={"q": SENTENCE, "left": "tiny-transformer", "right": "tiny-bahdanau",
                                            "left_grid": "2.3", "right_grid": "1.1"})
    view, reply = open_link_view(section, request)
    assert view["left_grid"] == "2.3" and view["right_grid"] == ""  # a GRU model has no layer 1, head 1: its own grid
    assert "right grid &#x27;1.1&#x27; is not a layer and head of tiny-bahdanau" in reply["status"]  # escaped
    result = section.models["tiny-transformer"].view(SENTENCE, 1)["result"]
    np.testing.assert_array_equal(plotly_figure(reply["left"]["grid"]).data[0].z, result.heads.cross[1, 2])
    shown = re.search(r'<div class="coverage-pick" data-pick="2.3">(.*?)</div>', reply["left"]["coverage"])[1]
    assert shown.startswith("<p class=\"grid-note\"><strong>Layer 2, head 3</strong>, picked")  # the one not hidden
    assert reply["left"]["coverage"].count(" hidden>") == 2 * (3 + 1) - 1


def test_a_sides_layer_and_head_redraw_its_grid_alone(section):
    state = section.translate(SENTENCE, 1, False, "pieces", "tiny-transformer", "tiny-bahdanau").state
    result = state["views"]["left"]["result"]
    assert section.side_grid("left")(state, False, "pieces", "1.2") == [gr.skip()] * 3  # by piece, all in the page
    by_word, note, under = section.side_grid("left")(state, False, "words", "1.2")
    assert note == under == gr.skip()  # every grid's note and row are under it already, by word since the unit changed
    _, _, alpha = words_view(result.source_tokens, result.target_tokens, result.heads.cross[0, 1])
    np.testing.assert_allclose(plotly_figure(by_word).data[0].z, alpha, atol=1e-6)
    shown = section.side_grid("left")(state, False, "words", "<script>")  # forged: the shown grid
    _, _, alpha = words_view(result.source_tokens, result.target_tokens, result.attention)
    np.testing.assert_allclose(plotly_figure(shown[0]).data[0].z, alpha, atol=1e-6)
    assert section.side_grid("right")(state, False, "pieces", "1.2") == [gr.skip()] * 3  # a GRU model: its one grid


def open_link_view(section, request) -> tuple[dict, dict]:
    """What open_link sets on the page: the link's view (LINK_VIEW) and the translation as a client reads it."""
    values = section.open_link(False, request)
    return dict(zip(LINK_VIEW, values)), client_reply(values[len(LINK_VIEW) + 1:])
