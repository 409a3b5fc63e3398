"""The quiz section asks about the translation on the page, about α only where a model has it, and about
heads only where a model has them."""
import math
import re

import numpy as np
import pytest

from attn_demo.checkpoints.folder import save_checkpoint
from attn_demo.classroom.quiz import entropy
from attn_demo.models.attention import KINDS
from attn_demo.models.config import MODEL_KINDS
from attn_demo.serving.catalogue import load_models
from attn_demo.ui.page import ModelsOnPage
from attn_demo.ui.quiz import TRACE_SLOTS, QuizSection
from attn_demo.ui.trace_files import TraceFiles
from attn_demo.ui.translate import TranslateSection
from conftest import DEVICE, tiny_model

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


@pytest.fixture(scope="module")
def transformers(tmp_path_factory, toy_tokenizers) -> list:
    """A catalogue of two different tiny Transformers and no GRU model."""
    folder = tmp_path_factory.mktemp("transformers")
    for seed in (0, 1):
        save_checkpoint(folder / f"heads-{seed}", tiny_model(WITH_HEADS[0], seed=seed), *toy_tokenizers)
    return load_models(folder, device=DEVICE)[0]


def piece(result, j: int) -> str:
    return f"{result.source_tokens[j]} (piece {j + 1})"


def test_a_page_of_two_transformers_asks_what_applies_to_them_and_every_answer_is_the_models(transformers, tmp_path):
    quiz = QuizSection(transformers)
    assert len(quiz.concepts) == 2 and not any("H × D" in q.prompt + q.explanation for q in quiz.concepts)
    keys = [model.key for model in transformers]
    section = TranslateSection(ModelsOnPage(transformers, keys), TraceFiles(tmp_path))
    state = section.translate(SENTENCE, 1, False, "pieces", *keys).state
    (left, first), (right, second) = [(model.title, model.translator.translate(SENTENCE)) for model in transformers]
    attended, spread, head, scale, size = quiz.questions_for(state)[len(quiz.concepts):]
    answer = lambda question: question.choices[question.answer]
    t = int(re.search(r"At step (\d+),", attended.prompt).group(1))
    assert f"{left} emitted" in attended.prompt and answer(attended) == piece(first, int(first.attention[t - 1].argmax()))
    t = int(re.search(r"At step (\d+),", spread.prompt).group(1))
    assert answer(spread) == [left, right][int(np.argmax([entropy(r.attention[t - 1]) for r in (first, second)]))]
    t, h, layer = (int(n) for n in re.search(r"At step (\d+),.* head (\d+) of layer (\d+) attend", head.prompt).groups())
    assert answer(head) == piece(first, int(first.heads.cross[layer - 1, h - 1, t - 1].argmax()))
    config = transformers[0].translator.config
    assert float(answer(scale)) == pytest.approx(math.sqrt(config.d_model / config.heads), abs=0.005)
    assert answer(size) == str(config.d_model) and f"of {left}'s layer" in size.prompt
    feedback = quiz.check(state, *[answer(q) for q in quiz.questions_for(state)])
    assert len(feedback) == 2 + TRACE_SLOTS and all(text.startswith("**Right.**") for text in feedback)


def test_the_conceptual_questions_read_their_sizes_from_a_gru_model_wherever_it_is_listed(models):
    by_key = {model.key: model for model in models}
    gru = by_key["tiny-luong-general"].translator.config
    quiz = QuizSection([by_key[f"tiny-{WITH_HEADS[0]}"], by_key["tiny-luong-general"]])  # a Transformer listed first
    assert len(quiz.concepts) == 5
    saved = quiz.concepts[-1]
    assert f"H × D = {gru.dec_hidden_size * gru.annotation_size:,} numbers" in saved.prompt
