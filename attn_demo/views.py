"""What the views of one translation draw, built in one place: the translate section, the export
file and anything else that shows a translation read it from here, so they can never differ.

A side is (model, view), view as catalogue.Model.view returns it: {"result": Translation,
"projection": …}.
    grid_figure(model, view, large, unit)   its alignment grid, by piece or by word (None without attention)
    step_data(sides)                        every decoder step of the sides, for step_views.js and network_view.js
    step_views(views)                       the same payload from (title, Translation, projection, forced steps)
                                            (the explorer's hypotheses, which share one projection)
"""
from attn_demo.alignment import words_view
from attn_demo.figures import alignment_figure
from attn_demo.steps import VECTOR_COLORSCALE, step_payload


def grid_figure(model, view, large: bool, unit: str = "pieces"):
    """A side's alignment grid, None for a model without attention. By word, an English word's α is
    the sum of its pieces' (the attention mass on the word), a French word's row the mean of its
    pieces' rows."""
    if not model.has_attention:
        return None
    result = view["result"]
    if unit == "words":
        source, target, attention = words_view(result.source_tokens, result.target_tokens, result.attention)
        return alignment_figure(source, target, attention, f"{model.title}: α by word", large, unit="words")
    return alignment_figure(result.source_tokens, result.target_tokens, result.attention,
                            f"{model.title}: α<sub>tj</sub> by piece", large)


def steps_of(sides) -> int:
    """The most output steps of the sides: the scrubber's range."""
    return max(len(view["result"].target_tokens) for _, view in sides)


def step_data(sides) -> dict:
    """Every decoder step of the sides in one compact payload, in order: the browser draws any step
    from it, so scrubbing costs the server nothing."""
    return step_views([(model.title, view["result"], view["projection"], ()) for model, view in sides])


def step_views(views) -> dict:
    """The step payload of [(title, Translation, projection of its h_j, steps whose α was set by hand)]."""
    return {"steps": max(len(result.target_tokens) for _, result, _, _ in views), "colorscale": VECTOR_COLORSCALE,
            "views": [step_payload(title, result, projection, forced) for title, result, projection, forced in views]}
