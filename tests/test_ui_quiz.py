"""The quiz section asks about the session's translation, and about α only where a model has it."""
import pytest

from attn_demo.config import MODEL_KINDS
from attn_demo.ui.quiz import QuizSection

SENTENCE = "I see the red cat."


@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_the_quiz_asks_about_alpha_only_where_there_is_one(models, section, attention):
    quiz = QuizSection(models)
    state = section.translate(SENTENCE, 1, False, "pieces", f"tiny-{attention}", f"tiny-{attention}").state
    questions = quiz.questions_for(state)[len(quiz.concepts):]
    assert len(questions) == (1 if attention == "none" else 2)  # the same model twice: no comparison
    assert quiz.check(state, *[q.choices[q.answer] for q in quiz.questions_for(state)])[-1].startswith("**Right.**")
