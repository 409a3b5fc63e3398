"""The quiz section asks about the translation on the page, about α only where a model has it, and about
heads only where a model has them."""
import pytest

from attn_demo.attention import KINDS
from attn_demo.config import MODEL_KINDS
from attn_demo.ui.quiz import TRACE_SLOTS, QuizSection

SENTENCE = "I see the red cat."
WITH_HEADS = [kind for kind in MODEL_KINDS if KINDS[kind].heads]


@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_the_quiz_asks_about_alpha_only_where_there_is_one(models, section, attention):
    quiz = QuizSection(models)
    state = section.translate(SENTENCE, 1, False, "pieces", f"tiny-{attention}", f"tiny-{attention}").state
    questions = quiz.questions_for(state)[len(quiz.concepts):]
    kind = KINDS[attention]  # c_t; α at a step (the same model twice: no comparison); where a head looks, its √d_k
    assert len(questions) == 1 + bool(kind.score) + 2 * bool(kind.heads)
    assert quiz.check(state, *[q.choices[q.answer] for q in quiz.questions_for(state)])[-1].startswith("**Right.**")


@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_every_question_beside_a_model_with_heads_has_a_slot_and_is_checked_right(models, section, attention):
    quiz = QuizSection(models)
    state = section.translate(SENTENCE, 1, False, "pieces", f"tiny-{attention}", f"tiny-{WITH_HEADS[0]}").state
    questions = quiz.questions_for(state)[len(quiz.concepts):]
    compared = KINDS[attention].score is not None and attention != WITH_HEADS[0]  # two different models with α
    assert len(questions) == 4 + compared <= TRACE_SLOTS  # α, (which spreads more), where a head looks, √d_k, c_t
    updates = quiz.show_trace_questions(state)
    prompts, radios = updates[0::3], updates[1::3]
    assert [prompt["visible"] for prompt in prompts] == [i < len(questions) for i in range(TRACE_SLOTS)]
    assert [radio["choices"] for radio in radios[:len(questions)]] == [list(q.choices) for q in questions]
    assert any("attend to most?" in prompt["value"] for prompt in prompts[:len(questions)])
    feedback = quiz.check(state, *[q.choices[q.answer] for q in quiz.questions_for(state)])
    assert all(text.startswith("**Right.**") for text in feedback)
    wrong = quiz.check(state, *[q.choices[q.answer - 1] for q in quiz.questions_for(state)])
    assert all(text.startswith("**Not quite:**") for text in wrong)


@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_the_check_answers_every_slot_the_page_has_whatever_the_translation_asks(models, section, attention):
    """Gradio takes one feedback a slot: a translation that asks fewer questions than there are slots leaves the
    rest empty, answered or not."""
    quiz = QuizSection(models)
    state = section.translate(SENTENCE, 1, False, "pieces", f"tiny-{attention}", f"tiny-{attention}").state
    questions = quiz.questions_for(state)
    slots = len(quiz.concepts) + TRACE_SLOTS
    feedback = quiz.check(state, *[q.choices[q.answer] for q in questions], *["stale"] * (slots - len(questions)))
    assert len(feedback) == slots and feedback[len(questions):] == [""] * (slots - len(questions))
    assert all(text.startswith("**Right.**") for text in feedback[:len(questions)])
