import math
import re
from types import SimpleNamespace

import numpy as np
import pytest

from attn_demo import load_translator
from attn_demo.checkpoints.folder import save_checkpoint
from attn_demo.classroom.quiz import (
    Question, concept_questions, context_size, entropy, head_most_attended, head_to_ask, more_spread, most_attended,
    score_scale, size_choices, trace_questions)
from attn_demo.models.attention import KINDS
from attn_demo.models.config import MODEL_KINDS
from conftest import DEVICE, tiny_model

WITH_HEADS = [kind for kind in MODEL_KINDS if KINDS[kind].heads]

SOURCE = ["▁the", "▁red", "▁the", "▁car", "</s>"]  # a repeated piece


def result(rows, D=6):
    rows = np.asarray(rows, dtype=np.float32)
    return SimpleNamespace(source_tokens=SOURCE, target_tokens=[f"▁y{t}" for t in range(len(rows) - 1)] + ["</s>"],
                           attention=rows, encoder_states=np.zeros((len(SOURCE), D), dtype=np.float32), heads=None)


def with_heads(cross, d_k=4, seed=0):
    """A result of a model with heads: cross-attention α (L, H, T, S), queries and keys of size d_k, and
    scores e_tj = q_t · k_j / √d_k from them; the shown grid is layer 1's mean of heads."""
    cross = np.asarray(cross, dtype=np.float32)
    L, H, T, S = cross.shape
    rng = np.random.default_rng(seed)
    queries, keys = rng.normal(size=(L, H, T, d_k)), rng.normal(size=(L, H, S, d_k))
    heads = SimpleNamespace(cross=cross, queries=queries, keys=keys, shown=(0, None),
                            cross_scores=queries @ keys.swapaxes(-1, -2) / math.sqrt(d_k))
    return SimpleNamespace(**{**vars(result(cross[0].mean(0), D=H * d_k)), "heads": heads})


def asked(prompt: str) -> tuple[int, int, int]:
    """(layer, head, step) from 0, 0 and 1 of "At step 4, … head 2 of layer 1 attend to most?"."""
    step, head, layer = re.search(r"At step (\d+),.* head (\d+) of layer (\d+) attend", prompt).groups()
    return int(layer) - 1, int(head) - 1, int(step)


def test_check_says_right_wrong_or_asks_for_an_answer():
    q = Question("?", ("a", "b", "c"), 2, "because.")
    assert q.check("c") == (True, "**Right.** because.")
    right, feedback = q.check("a")
    assert not right and "“c”" in feedback and "because." in feedback
    assert q.check(None) == (False, "Choose an answer first.")


def test_most_attended_is_the_argmax_of_the_row_and_tells_repeated_pieces_apart():
    rows = [[0.2, 0.2, 0.2, 0.2, 0.2], [0.05, 0.1, 0.6, 0.2, 0.05]]
    q = most_attended(result(rows), "Luong", t=2)
    assert q.choices[q.answer] == "▁the (piece 3)"  # the second ▁the, not the first
    assert "▁the (piece 1)" in q.choices and len(set(q.choices)) == len(q.choices) == 4
    assert [int(c.split("piece ")[1][:-1]) for c in q.choices] == sorted(int(c.split("piece ")[1][:-1]) for c in q.choices)
    assert "α = 0.60" in q.explanation and "0.20 on `▁car`" in q.explanation


def test_a_head_question_asks_about_a_head_that_looks_elsewhere_than_the_grid_and_answers_with_its_argmax():
    even, on_car = [0.2] * 5, [0.05, 0.05, 0.1, 0.75, 0.05]
    on_red, on_first_the = [0.1, 0.6, 0.1, 0.1, 0.1], [0.9, 0.025, 0.025, 0.025, 0.025]
    # layer 1's heads, averaged, look at the first ▁the at step 2; layer 2's head 2 looks at ▁car, head 3 at ▁red
    cross = [[[even, on_first_the], [even, on_first_the], [even, on_red]],
             [[even, on_first_the], [even, on_car], [even, on_red]]]
    r = with_heads(cross)
    assert int(r.attention[1].argmax()) == 0
    assert head_to_ask(r.heads, 2, 0) == (1, 1)  # the surest of the heads looking elsewhere, not the surest (0.9)
    assert head_to_ask(r.heads, 2, 3) == (0, 0)  # every head but one looks elsewhere than ▁car: the surest of them
    q = head_most_attended(r, "Transformer", 1, 1, 2)
    assert asked(q.prompt) == (1, 1, 2) and "emitted `</s>`" in q.prompt
    assert q.choices[q.answer] == "▁car (piece 4)" == f"{SOURCE[int(np.argmax(cross[1][1][1]))]} (piece 4)"
    assert "layer 2, head 2" in q.explanation and "α = 0.75" in q.explanation
    agree = with_heads([[[even, on_car], [even, on_car], [even, on_car]]])
    assert head_to_ask(agree.heads, 2, 3) == (0, 0)  # every head agrees with the grid: the surest of all


@pytest.mark.parametrize("d_k, H", [(4, 3), (9, 2), (16, 4), (1, 5)])
def test_the_scale_question_answers_the_root_of_d_k_and_the_trace_proves_it(d_k, H):
    r = with_heads(np.full((1, H, 2, 5), 0.2), d_k=d_k)
    q = score_scale(r, "Transformer", 0, H - 1, 2)
    assert f"d_k = {d_k}" in q.prompt and f"H = {H}" in q.prompt
    assert float(q.choices[q.answer]) == pytest.approx(math.sqrt(d_k), abs=0.005)
    values = [float(choice) for choice in q.choices]
    assert values == sorted(values) and len(set(values)) == len(values) >= 3  # √d_k = H (16, 4) is offered once
    scores = r.heads.cross_scores[0, H - 1, 1]
    j = int(np.abs(scores).argmax())
    ratio = (r.heads.queries[0, H - 1, 1] @ r.heads.keys[0, H - 1, j]) / scores[j]
    assert f"= {ratio:.2f}." in q.explanation and f"{math.sqrt(d_k):.2f}" == f"{ratio:.2f}"
    assert f"on `{SOURCE[j]}`" in q.explanation and "saturate" in q.explanation and "layer 1, head " in q.explanation


def test_more_spread_picks_the_higher_entropy():
    even, peaked = result([[0.2] * 5]), result([[0.96, 0.01, 0.01, 0.01, 0.01]])
    assert more_spread({"Bahdanau": peaked, "Luong": even}, 1).answer == 1
    assert more_spread({"Bahdanau": even, "Luong": peaked}, 1).answer == 0
    assert entropy([0.2] * 5) == pytest.approx(np.log(5), rel=1e-12) and entropy([1.0, 0.0]) == 0.0


def test_context_size_is_the_annotation_size_not_the_sentence_length():
    q = context_size(result([[0.2] * 5], D=6), "Luong")
    assert q.choices[q.answer] == "6" and "S = 5" in q.prompt and "c_t" in q.prompt
    fixed = SimpleNamespace(**{**vars(result([[0.2] * 5], D=6)), "attention": None})
    q = context_size(fixed, "No attention")
    assert q.choices[q.answer] == "6" and "fixed c" in q.prompt and "α" not in q.explanation
    q = context_size(with_heads(np.full((2, 3, 2, 5), 0.2), d_k=4), "Transformer")
    assert q.choices[q.answer] == "12" and "layer 1 hold" in q.prompt
    assert "d_k = 4" in q.explanation and "h_j" not in q.explanation  # the heads mix values v_j, not the h_j


@pytest.mark.parametrize("S", [5, 1])
def test_the_c_t_choices_are_four_different_sizes_when_the_sentence_is_as_long_as_an_annotation(S):
    rows = np.full((2, S), 1 / S, dtype=np.float32)
    for r in (result(rows, D=S), with_heads(np.broadcast_to(rows, (1, 1, 2, S)), d_k=S)):  # a GRU, 1 head of d_k = S
        r.source_tokens, r.encoder_states = SOURCE[:S], np.zeros((S, S), dtype=np.float32)  # S pieces, D = S
        q = context_size(r, "Luong")
        assert f"S = {S}" in q.prompt and q.choices[q.answer] == str(S)
        assert len(set(q.choices)) == len(q.choices) == 4


def test_the_c_t_choices_keep_the_plausible_wrong_sizes_and_never_repeat_one():
    for D in range(1, 9):
        for S in range(1, 9):
            choices, answer = size_choices(D, S)
            assert choices[answer] == str(D) and len(set(choices)) == len(choices) == 4, (D, S)
            assert (S == D) or str(S) in choices  # the sentence length, the likeliest mistake, wherever it is wrong
            assert [int(c) for c in choices] == sorted(int(c) for c in choices)  # the order gives nothing away (D ≤ 8: no commas)
    assert size_choices(512, 7) == (("1", "7", "512", "3,584"), 2)


def test_concept_questions_without_a_gru_model_ask_nothing_of_its_sizes():
    questions = concept_questions(None, None)  # a page of Transformers: no decoder state H
    assert [q.prompt for q in questions] == [q.prompt for q in concept_questions(H=7, D=6)[:2]]
    words = [q.prompt + q.explanation + "".join(q.choices) for q in questions]
    assert not any(size in text for text in words for size in ("H ", "D ", "numbers"))


def test_concept_questions_use_the_model_sizes():
    questions = concept_questions(H=7, D=6)
    assert len(questions) == 5
    for q in questions:
        assert 0 <= q.answer < len(q.choices) and len(set(q.choices)) == len(q.choices)
    saved = questions[-1]
    assert "42" in saved.prompt and f"{64 * 13:,}" in saved.choices[saved.answer]


def test_trace_questions_are_answered_from_a_real_trace(toy_checkpoint, attention):
    translator = load_translator(toy_checkpoint, device=DEVICE)
    results = [("greedy", translator.translate("I see the red cat.")), ("beam", translator.translate("I see the red cat.", beam_size=3))]
    questions = trace_questions(results)
    size = questions[-1]
    assert size.choices[size.answer] == str(results[0][1].contexts.shape[1])
    if attention == "none":  # no α: only the question about c
        assert len(questions) == 1
        return
    assert len(questions) == (5 if KINDS[attention].heads else 3)  # with heads: where one looks, and its √d_k
    attended, spread = questions[:2]
    step = lambda question: int(question.prompt.split()[2].rstrip(","))  # "At step 4, …"
    t = step(attended)
    best = int(results[0][1].attention[t - 1].argmax())
    assert attended.choices[attended.answer] == f"{results[0][1].source_tokens[best]} (piece {best + 1})"
    entropies = [entropy(r.attention[step(spread) - 1]) for _, r in results]
    assert spread.choices[spread.answer] == ["greedy", "beam"][int(np.argmax(entropies))]


def test_trace_questions_skip_alpha_for_the_baseline_and_compare_only_two_different_models(toy_tokenizers, tmp_path):
    translators = {}
    for attention in ("none", "bahdanau"):
        save_checkpoint(tmp_path / attention, tiny_model(attention), *toy_tokenizers)
        translators[attention] = load_translator(tmp_path / attention, device=DEVICE)
    none, bahdanau = (translators[a].translate("the red cat") for a in ("none", "bahdanau"))
    questions = trace_questions([("No attention", none), ("Bahdanau", bahdanau)])
    assert "Bahdanau emitted" in questions[0].prompt and len(questions) == 2  # no "which spreads more": one has α
    assert "fixed c of No attention" in questions[1].prompt  # the first side's c
    same = trace_questions([("Bahdanau", bahdanau), ("Bahdanau", bahdanau)])
    assert len(same) == 2  # the same model twice: nothing to compare


@pytest.mark.parametrize("kind", WITH_HEADS)
def test_head_questions_are_answered_from_a_real_trace(kind, toy_tokenizers, tmp_path):
    save_checkpoint(tmp_path / kind, tiny_model(kind), *toy_tokenizers)
    translator = load_translator(tmp_path / kind, device=DEVICE)
    r = translator.translate("I see the red cat.")
    _, head, scale, size = trace_questions([("Heads", r), ("Heads", r)])
    layer, h, t = asked(head.prompt)
    row = r.heads.cross[layer, h, t - 1]
    best = int(np.argmax(row))
    assert head.choices[head.answer] == f"{r.source_tokens[best]} (piece {best + 1})"
    shown_best = int(r.attention[t - 1].argmax())
    elsewhere = [(layer_, head_) for layer_ in range(r.heads.cross.shape[0]) for head_ in range(r.heads.cross.shape[1])
                 if r.heads.cross[layer_, head_, t - 1].argmax() != shown_best]
    assert elsewhere and best != shown_best  # the question asks about a head that looks elsewhere than the grid,
    assert row.max() == max(r.heads.cross[l_, h_, t - 1].max() for l_, h_ in elsewhere)  # the surest of them
    config = translator.config
    assert scale.choices[scale.answer] == f"{math.sqrt(config.d_model / config.heads):.2f}".rstrip("0").rstrip(".")
    scores = r.heads.cross_scores[layer, h, t - 1]
    j = int(np.abs(scores).argmax())
    ratio = float(r.heads.queries[layer, h, t - 1] @ r.heads.keys[layer, h, j]) / float(scores[j])
    assert ratio == pytest.approx(math.sqrt(config.d_model / config.heads), rel=1e-4)
    assert f"= {ratio:.2f}." in scale.explanation
    assert size.choices[size.answer] == str(config.d_model)
    assert f"d_k = {config.d_model // config.heads}" in size.explanation


def test_head_questions_ask_about_the_side_with_heads_and_nothing_of_heads_without_them(toy_tokenizers, tmp_path):
    translators = {}
    for kind in ("bahdanau", WITH_HEADS[0]):
        save_checkpoint(tmp_path / kind, tiny_model(kind), *toy_tokenizers)
        translators[kind] = load_translator(tmp_path / kind, device=DEVICE)
    gru, heads = (translators[kind].translate("the red cat") for kind in ("bahdanau", WITH_HEADS[0]))
    questions = trace_questions([("Bahdanau", gru), ("Heads", heads)])
    assert len(questions) == 5 and "Bahdanau emitted" in questions[0].prompt  # α of the first side
    assert "Heads emitted" in questions[2].prompt and "Each head of Heads" in questions[3].prompt
    assert "each c_t of Bahdanau" in questions[4].prompt  # the first side's c_t
    assert not any("head" in q.prompt for q in trace_questions([("Bahdanau", gru), ("Bahdanau", gru)]))
