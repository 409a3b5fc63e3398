from types import SimpleNamespace

import numpy as np
import pytest

from attn_demo import load_translator
from attn_demo.checkpoint import save_checkpoint
from attn_demo.quiz import Question, concept_questions, context_size, entropy, more_spread, most_attended, trace_questions
from conftest import DEVICE, tiny_model

SOURCE = ["▁the", "▁red", "▁the", "▁car", "</s>"]  # a repeated piece


def result(rows, D=6):
    rows = np.asarray(rows, dtype=np.float32)
    return SimpleNamespace(source_tokens=SOURCE, target_tokens=[f"▁y{t}" for t in range(len(rows) - 1)] + ["</s>"],
                           attention=rows, encoder_states=np.zeros((len(SOURCE), D), dtype=np.float32))


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
    attended, spread, _ = questions
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
