"""Is attention an explanation?: every model's attribution beside its α, on the pieces on screen."""
import gradio as gr
import numpy as np
import pytest

from attn_demo.decoding.attribution import JUMPING_GRADIENT_NOTE
from attn_demo.decoding.grids import words_view
from attn_demo.models.config import MODEL_KINDS
from attn_demo.ui.attribution import AttributionSection
from attn_demo.views.figures import label
from conftest import plotly_figure, untyped

SENTENCE = "I see the red cat."


@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_attribution_is_drawn_for_every_model_and_compared_with_alpha_where_there_is_one(section, attention):
    state = section.translate(SENTENCE, 2, False, "pieces", f"tiny-{attention}", "tiny-bahdanau").state
    grid, note, other_grid, other_note, bars = AttributionSection(section.models).show(state, "input-x-gradient", False, "pieces")
    grid = plotly_figure(grid)
    left = state["views"]["left"]["result"]
    expected = section.models[f"tiny-{attention}"].translator.attribute(SENTENCE, left.target_tokens, "input-x-gradient")
    np.testing.assert_array_equal(grid.data[0].z, expected.scores)  # the pieces on screen (beam 2), not a new translation
    assert bars[0]["target"] == left.target_tokens and bars[0]["source"] == left.source_tokens  # the step view's pieces
    np.testing.assert_array_equal(untyped(bars[0]["scores"]), expected.scores)  # and the same numbers
    assert list(grid.layout.yaxis.ticktext) == [label(piece) for piece in left.target_tokens]
    assert ("no α to compare" in note) == (attention == "none") and "Spearman" in other_note
    words = plotly_figure(AttributionSection(section.models).show(state, "integrated-gradients", False, "words")[0])
    integrated = AttributionSection(section.models).show(state, "integrated-gradients", False, "pieces")[1]
    assert "by word" in words.layout.title.text and "path points" in integrated
    assert (JUMPING_GRADIENT_NOTE in integrated) == (attention == "transformer")  # the tiny Transformer's φ is ReLU
    assert JUMPING_GRADIENT_NOTE not in note  # input × gradient takes no path
    nothing = AttributionSection(section.models).show(None, "input-x-gradient", False, "pieces")
    assert nothing[1] == "Translate a sentence first." and nothing[-1] is None
    refused = AttributionSection(section.models).show(state, "lime", False, "pieces")  # through the API: said in words
    assert "unknown attribution method" in refused[1] and refused[0] is None and refused[-1] is None



@pytest.mark.parametrize("attention", MODEL_KINDS)
def test_attribution_on_screen_is_redrawn_by_word_with_the_method_it_was_drawn_with(section, attention):
    state = section.translate(SENTENCE, 1, False, "pieces", f"tiny-{attention}", "tiny-bahdanau").state
    attribution = AttributionSection(section.models)
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
