"""The page's sections over a catalogue of tiny checkpoints, one of every attention type: every view
works for every type, the no-attention baseline included, and says plainly what it lacks."""
import json
import os
import time

import gradio as gr
import numpy as np
import pytest

from attn_demo.alignment import words_view
from attn_demo.catalogue import load_models
from attn_demo.search import Penalties
from attn_demo.checkpoint import save_checkpoint
from attn_demo.config import ATTENTION_TYPES
from attn_demo.figures import label
from attn_demo.ui.alignment_check import AlignmentCheckSection
from attn_demo.ui.attribution import AttributionSection
from attn_demo.ui.compare import CompareSection
from attn_demo.ui.explore import NOT_SHOWN, ExploreSection
from attn_demo.ui.export import ExportSection
from attn_demo.ui import translate
from attn_demo.ui.quiz import QuizSection
from attn_demo.ui.translate import (NO_GRID, TRACE_MAX_AGE_S, TranslateSection, client_reply, data_line, equations_markdown,
                                   remove_expired)
from attn_demo.ui.why_attention import WhyAttentionSection
from conftest import DEVICE, ROOT, plotly_figure, tiny_model, untyped

SENTENCE = "I see the red cat."


@pytest.fixture(scope="module")
def models(tmp_path_factory, toy_tokenizers):
    folder = tmp_path_factory.mktemp("checkpoints")
    for attention in ATTENTION_TYPES:
        save_checkpoint(folder / f"tiny-{attention}", tiny_model(attention), *toy_tokenizers)
    save_checkpoint(folder / "another", tiny_model("luong-general", seed=7), *toy_tokenizers)  # dropped in: no code change
    return load_models(folder, device=DEVICE)[0]


@pytest.fixture(scope="module")
def section(models):
    return TranslateSection(models, ("tiny-bahdanau", "tiny-luong-general"))


def sides(outputs) -> dict:
    """translate's outputs by side and field: {"left": {"heading": …, …}, "right": …}."""
    return client_reply(outputs[1:])


def test_the_pickers_offer_every_checkpoint_with_its_type(section, models):
    assert [key for _, key in section.choices()] == [model.key for model in models] and len(models) == len(ATTENTION_TYPES) + 1
    assert ("Luong (general) — another", "another") in section.choices()


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_every_view_works_for_every_attention_type_beside_bahdanau(section, attention):
    key = f"tiny-{attention}"
    outputs = section.translate(SENTENCE, 1, False, "pieces", key, "tiny-bahdanau")
    state, status, shown = outputs[0], outputs[1], sides(outputs)
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
        assert shown["left"]["note"] == "" and f"(B, S, {model.kind.keys(model.translator.config)})" in shown["left"]["equations"]
    words = section.grids(state, False, "words")
    assert words[1] == (NO_GRID if attention == "none" else "")  # the words view leaves the baseline out, with the note

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


def test_expired_trace_files_go_and_one_gone_meanwhile_is_passed_over(tmp_path, monkeypatch):
    old, new = tmp_path / "attention-trace-old.json", tmp_path / "attention-trace-new.json"
    for path in (old, new):
        path.write_text("{}")
    os.utime(old, (time.time() - TRACE_MAX_AGE_S - 1,) * 2)
    gone = tmp_path / "attention-trace-x.123.456.part"  # renamed by another request between glob and stat
    listed = [gone, old, new]
    monkeypatch.setattr(type(tmp_path), "glob", lambda self, pattern: iter(listed))
    remove_expired(tmp_path)
    assert not old.exists() and new.exists()


def test_the_trace_folder_is_swept_once_a_minute_not_for_every_new_file(section, tmp_path, monkeypatch):
    monkeypatch.setattr(translate, "TRACE_DIR", tmp_path)
    swept = []
    monkeypatch.setattr(translate, "remove_expired", swept.append)
    monkeypatch.setattr(section, "swept_at", float("-inf"))
    states = [section.translate(text, 1, False, "pieces")[0] for text in ("I see a cat.", "I see a dog.", "I see a pen.")]
    paths = [section.trace_file(state) for state in states[:2]]
    assert swept == [tmp_path] and all(os.path.exists(path) for path in paths)
    monkeypatch.setattr(section, "swept_at", time.monotonic() - translate.SWEEP_EVERY_S)  # a minute later
    assert section.trace_file(states[0]) == paths[0] and swept == [tmp_path]  # a file already written: no sweep
    section.trace_file(states[2])
    assert swept == [tmp_path, tmp_path]


def test_the_same_checkpoint_on_both_sides_works(section):
    outputs = section.translate(SENTENCE, 2, False, "pieces", "tiny-luong-dot", "tiny-luong-dot")
    shown = sides(outputs)
    assert shown["left"]["text"] == shown["right"]["text"] and outputs[0]["views"]["left"] is outputs[0]["views"]["right"]


def test_changing_a_pick_decodes_only_the_new_model(section, monkeypatch):
    state = section.translate("I see the blue pen.", 1, False, "pieces", "tiny-bahdanau", "tiny-luong-general")[0]
    kept = section.models["tiny-bahdanau"]
    computed = []  # every model call goes through Model.run
    monkeypatch.setattr(kept, "run", lambda *args, **kwargs: computed.append(args))
    outputs = section.repick(state, False, "pieces", "tiny-bahdanau", "tiny-none")
    assert computed == []  # the kept side did not decode again
    assert outputs[0]["views"]["left"] is state["views"]["left"] and outputs[0]["text"] == state["text"]
    assert outputs[0]["picks"]["right"] == "tiny-none" and sides(outputs)["right"]["note"] == NO_GRID


def test_before_any_translation_a_pick_shows_its_equations_and_nothing_else(section):
    outputs = section.repick(None, False, "pieces", "tiny-none", "tiny-luong-dot")
    shown = sides(outputs)
    assert outputs[0] is None and shown["left"]["text"] == "" and "No attention" in shown["left"]["heading"]
    assert "s_t^\\top h_j" in shown["right"]["equations"]


def test_words_never_seen_in_training_are_named_and_what_the_models_learned_from_is_one_line(section, models, monkeypatch):
    facts = {"dataset": "toy.tsv", "pairs": 1120, "mean_english_words": 3.52, "pairs_16_plus_words": 0,
             "english_words": frozenset(["i", "see", "the", "red", "cat"])}
    for model in models:
        monkeypatch.setattr(model.translator, "training_data", facts)
    status = section.translate("I see the red boat and the pen and the boat.", 1, False, "pieces", "tiny-none", "tiny-bahdanau")[1]
    assert status == ("ℹ️ Never seen in training: **boat**, **and**, **pen**. No English sentence the models learned from "
                      "contains any of them, so they can only guess them from pieces.")
    assert "contains it, so they can only guess it" in section.translate("I see the pen.", 1, False, "pieces", "tiny-none",
                                                                          "tiny-bahdanau")[1]
    assert section.translate(SENTENCE, 1, False, "pieces", "tiny-none", "tiny-bahdanau")[1] == ""
    assert data_line(models) == ("These models learned from 1,120 everyday sentence pairs of Tatoeba (toy.tsv), 3.5 English "
                                 "words on average and 0 of 16 words or more: expect less of long, technical or rare-word sentences.")
    monkeypatch.setattr(models[0].translator, "training_data", None)  # a checkpoint that does not say
    assert "model card" in data_line(models)
    status = section.translate("I see the red boat.", 1, False, "pieces", models[0].key, models[0].key)[1]
    assert status == ""  # no training data recorded: nothing is claimed


def test_a_pick_that_does_not_exist_gets_a_message(section):
    outputs = section.translate(SENTENCE, 1, False, "pieces", "<script>", "tiny-bahdanau")
    assert outputs[0] is None and outputs[1].startswith("⚠️") and "<script>" not in outputs[1]


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_the_quiz_asks_about_alpha_only_where_there_is_one(models, section, attention):
    quiz = QuizSection(models)
    state = section.translate(SENTENCE, 1, False, "pieces", f"tiny-{attention}", f"tiny-{attention}")[0]
    questions = quiz.questions_for(state)[len(quiz.concepts):]
    assert len(questions) == (1 if attention == "none" else 2)  # the same model twice: no comparison
    assert quiz.check(state, *[q.choices[q.answer] for q in quiz.questions_for(state)])[-1].startswith("**Right.**")


def test_why_attention_puts_the_baseline_beside_an_attention_model_on_a_long_sentence(models):
    why = WhyAttentionSection(models)
    text, left, right = why.compare_long()
    assert (left, right) == ("tiny-none", "tiny-bahdanau") and 41 <= len(text.split()) <= 50
    assert WhyAttentionSection([m for m in models if m.has_attention]).pair is None  # no baseline: no button


def test_the_alignment_check_leaves_the_baseline_out_with_a_note(models, tmp_path, monkeypatch):
    gold = tmp_path / "gold"
    gold.mkdir()
    (gold / "test.e").write_text("the red cat\n")
    (gold / "test.f").write_text("le chat rouge\n")
    (gold / "test.wa.nonullalign").write_text("1 1 1 S\n1 2 3 S\n1 3 2 P\n")
    check = AlignmentCheckSection(models, gold)
    alpha = np.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8], [0.2, 0.7, 0.1]], dtype=np.float32)  # French words × English
    monkeypatch.setattr(check, "word_alpha", lambda key, number: alpha)  # the toy vocabulary has no capitals
    grid, note, other_grid, other_note = check.show(1, False, "tiny-none", "tiny-bahdanau")
    assert grid["visible"] is False and "no attention, so no α" in note
    assert other_grid["visible"] is True and "AER **0.00**" in other_note  # every argmax link is a human one
    np.testing.assert_array_equal(plotly_figure(other_grid["value"]).data[0].z, alpha)
    with gr.Blocks():
        check.render(gr.Checkbox(), [gr.Dropdown([("a", "tiny-none")], value="tiny-none"),
                                     gr.Dropdown([("b", "tiny-bahdanau")], value="tiny-bahdanau")])


def test_compare_them_all_has_a_row_and_a_bar_for_every_model(models):
    compare = CompareSection(models)
    rows = compare.table_markdown().splitlines()[2:]
    assert len(rows) == len(models) and all(f"`{model.key}`" in row for model, row in zip(models, rows))
    assert list(plotly_figure(compare.figure(False)).data[0].y) == [model.title for model in models]


def test_the_readme_models_table_is_the_compare_table_of_the_shipped_cards():
    """A checkpoint shipped or re-measured without the README following fails here."""
    table = CompareSection(load_models(device=DEVICE)[0]).table_markdown()
    assert table in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_baseline_note_reads_the_fall_of_each_line_from_the_cards(models, monkeypatch):
    curves = {"tiny-none": (25.0, 5.0), "tiny-bahdanau": (40.0, 38.0), "tiny-luong-general": (36.0, 36.0)}
    for model in models:
        short, long = curves.get(model.key, (None, None))
        curve = {"1-10": {"bleu": short}, "41-50": {"bleu": long}} if short else {}
        monkeypatch.setattr(model.translator, "length_curve", curve)
    note = WhyAttentionSection(models).baseline_note()
    assert "keeps 20% of its BLEU at 1–10 words (25.0 → 5.0)" in note and "keep 95%–100% of theirs" in note
    assert "(25.0 against 36.0–40.0 BLEU at 1–10 words)" in note
    assert WhyAttentionSection([m for m in models if m.key != "tiny-none"]).baseline_note() == ""  # no baseline: nothing said


@pytest.mark.parametrize("attention", ["bahdanau", "none"])
def test_the_html_export_holds_both_sides_and_no_text_can_close_its_script(section, attention):
    hostile = "I see the red cat </script><img src=x onerror=alert(1)> <!--"
    state = section.translate(hostile, 1, False, "pieces", f"tiny-{attention}", "tiny-luong-general")[0]
    path = ExportSection(section).export(state)["value"]
    text = open(path, encoding="utf-8").read()
    assert text.count("</script>") == text.count("<script>") == 2 and "<img src=x" not in text  # escaped or JSON-encoded
    assert f"<h2>{section.models['tiny-luong-general'].title}</h2>" in text and "&lt;img src=x" in text  # shown as text
    assert ("No attention, so no grid." in text) == (attention == "none")
    assert ExportSection(section).export(None)["visible"] is False


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_attribution_is_drawn_for_every_model_and_compared_with_alpha_where_there_is_one(section, attention):
    state = section.translate(SENTENCE, 2, False, "pieces", f"tiny-{attention}", "tiny-bahdanau")[0]
    grid, note, other_grid, other_note, bars = AttributionSection(section).show(state, "input-x-gradient", False, "pieces")
    grid = plotly_figure(grid)
    left = state["views"]["left"]["result"]
    expected = section.models[f"tiny-{attention}"].translator.attribute(SENTENCE, left.target_tokens, "input-x-gradient")
    np.testing.assert_array_equal(grid.data[0].z, expected.scores)  # the pieces on screen (beam 2), not a new translation
    assert bars[0]["target"] == left.target_tokens and bars[0]["source"] == left.source_tokens  # the step view's pieces
    np.testing.assert_array_equal(untyped(bars[0]["scores"]), expected.scores)  # and the same numbers
    assert list(grid.layout.yaxis.ticktext) == [label(piece) for piece in left.target_tokens]
    assert ("no α to compare" in note) == (attention == "none") and "Spearman" in other_note
    words = plotly_figure(AttributionSection(section).show(state, "integrated-gradients", False, "words")[0])
    assert "by word" in words.layout.title.text and "path points" in AttributionSection(section).show(
        state, "integrated-gradients", False, "pieces")[1]
    nothing = AttributionSection(section).show(None, "input-x-gradient", False, "pieces")
    assert nothing[1] == "Translate a sentence first." and nothing[-1] is None
    refused = AttributionSection(section).show(state, "lime", False, "pieces")  # through the API: said in words
    assert "unknown attribution method" in refused[1] and refused[0] is None and refused[-1] is None


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_attribution_on_screen_is_redrawn_by_word_with_the_method_it_was_drawn_with(section, attention):
    state = section.translate(SENTENCE, 1, False, "pieces", f"tiny-{attention}", "tiny-bahdanau")[0]
    attribution = AttributionSection(section)
    *_, bars = attribution.show(state, "input-x-gradient", False, "pieces")
    grid, note, other_grid, other_note = attribution.redraw(state, bars, True, "words")  # the method radio may differ
    grid = plotly_figure(grid)
    left = state["views"]["left"]["result"]
    scores = attribution.attribution(f"tiny-{attention}", SENTENCE, tuple(left.target_tokens), "input-x-gradient").scores
    source, target, by_word = words_view(left.source_tokens, left.target_tokens, scores)
    np.testing.assert_allclose(grid.data[0].z, by_word, rtol=1e-6)
    assert list(grid.layout.yaxis.ticktext) == [label(word) for word in target]
    assert list(grid.layout.xaxis.ticktext) == [label(word) for word in source]
    assert "input × gradient by word" in grid.layout.title.text and "Spearman" in other_note
    assert attribution.redraw(state, None, False, "words") == [gr.skip()] * 4  # none on screen: nothing drawn


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_the_explorer_shows_the_beam_and_answers_what_if_with_the_models_numbers(section, attention):
    explore, key = ExploreSection(section), f"tiny-{attention}"
    state = section.translate(SENTENCE, 1, False, "pieces", "tiny-bahdanau", "tiny-luong-general")[0]
    explored, table, tree, rank = explore.beam(state, key, 4, 3, False)
    hypotheses = section.models[key].translator.translate(SENTENCE, beam_size=4, n_best=3)
    assert [h.target_tokens for h in explored["hypotheses"]] == [h.target_tokens for h in hypotheses]
    assert len(table.splitlines()) == 2 + 3 and len(rank["choices"]) == 3
    *_, nodes = plotly_figure(tree).data
    assert {label(h.target_tokens[0]) for h in hypotheses} <= set(nodes.text)  # each first piece is drawn
    assert sum(text.endswith((" #1", " #2", " #3")) for text in nodes.text) == 3  # where each of the 3 best ends
    grid, note, steps, pieces, payload, slider = explore.pick(explored, 0, False)
    assert grid["visible"] == (attention != "none") and len(steps["choices"]) == len(hypotheses[0].target_tokens)
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

    other = choices[1][1]
    summary, result_grid, _, payload, _ = explore.change(explored, 0, 1, other, "", 0, False)
    edited = section.models[key].translator.translate(SENTENCE, beam_size=4, prefix=[other])
    assert f"log p {hypotheses[0].log_prob:.2f} → {edited.log_prob:.2f}" in summary
    assert [view["target"] for view in payload["views"]] == [hypotheses[0].target_tokens, edited.target_tokens]
    assert [view["forced"] for view in payload["views"]] == [[], []]  # a changed piece: every α is softmax(e)
    if attention != "none":
        (outline,) = plotly_figure(result_grid["value"]).layout.shapes  # the edited row, step 1
        assert (outline.y0, outline.y1, outline.x0) == (-0.5, 0.5, -0.5)
    summary, result_grid, result_note, payload, _ = explore.move(explored, 0, 2, None, "", 1, False)
    if attention == "none":
        assert "no attention" in summary and result_grid["visible"] is False and payload == gr.skip()
    else:
        alpha = plotly_figure(result_grid["value"]).data[0].z
        np.testing.assert_array_equal(alpha[1], np.eye(alpha.shape[1], dtype=np.float32)[1])  # step 2 all on piece 2
        (outline,) = plotly_figure(result_grid["value"]).layout.shapes  # the cell whose α was set
        assert (outline.x0, outline.y0) == (0.5, 0.5)
        np.testing.assert_array_equal(untyped(payload["views"][1]["weights"])[1], alpha[1])  # the step view shows this α
        assert [view["forced"] for view in payload["views"]] == [[], [2]]  # and says where it was set by hand
    assert explore.beam(None, key, 4, 3, False)[1] == "Translate a sentence first."


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_the_explorer_forgets_its_beam_when_another_sentence_is_translated(section, attention):
    explore, key = ExploreSection(section), f"tiny-{attention}"
    state = section.translate(SENTENCE, 1, False, "pieces", "tiny-bahdanau", "tiny-luong-general")[0]
    explored = explore.beam(state, key, 4, 3, False)[0]
    repicked = section.translate(SENTENCE, 1, False, "pieces", key, "tiny-bahdanau")[0]
    assert explore.forget(repicked, explored) == [gr.skip()] * 8  # the same sentence, other models: kept
    other = section.translate("The dog sleeps.", 1, False, "pieces", "tiny-bahdanau", "tiny-luong-general")[0]
    for state_now in (other, None):  # another sentence, or a refused one
        gone, table, search, rank, piece, result, result_grid, result_note = explore.forget(state_now, explored)
        assert (gone, table, search, result) == (None, NOT_SHOWN, None, "")  # the instruction, in place of the table
        assert rank == piece == gr.update(choices=[], value=None)  # no hypothesis picked: pick clears what hangs on it
        assert result_grid["visible"] is False and result_note["visible"] is False
        assert explore.pick(gone, rank["value"], False)[4] is None  # ... its step view too
    assert explore.forget(other, None) == [gr.skip()] * 8  # nothing explored: nothing to clear
