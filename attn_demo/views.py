"""What the views of one translation draw, built in one place: the translate section, the export
file and anything else that shows a translation read it from here, so they can never differ.

A side is (model, view), view as catalogue.Model.view returns it: {"result": Translation,
"projection": …}.
    grid_figure(model, view, large, unit)   its alignment grid, by piece or by word (None without attention)
    coverage_row(model, view, unit)         under the grid: the attention each English piece received in all
    step_data(sides)                        every decoder step of the sides, for step_views.js and network_view.js
    step_views(views)                       the same payload from (title, Translation, projection, forced steps)
                                            (the explorer's hypotheses, which share one projection)
"""
import html

from plotly.colors import sample_colorscale, unlabel_rgb

from attn_demo.alignment import piece_words, words_view
from attn_demo.figures import ALIGNMENT_COLORSCALE, alignment_figure
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


# the coverage row's cells, on the page and in the exported file: they wrap on a phone
COVERAGE_CSS = """
.coverage-title { margin: 0 0 4px; font-size: 0.9em; }
.coverage-cells { display: flex; flex-wrap: wrap; gap: 2px; }
.coverage-cell { display: inline-flex; flex-direction: column; align-items: center; padding: 2px 5px; border-radius: 3px;
                 font-size: 0.85em; line-height: 1.3; }
.coverage-cell span { color: inherit !important; }  /* the cell's ink, chosen for its background, over the theme's */
.coverage-value { font-variant-numeric: tabular-nums; }
"""
NO_COVERAGE = ("No α, so no coverage: nothing in this model records which English words it has already translated, "
               "and nothing on the page can show it.")


def coverage_row(model, view, unit: str = "pieces") -> str:
    """A side's coverage C_j = Σ_t α_tj, the attention each English piece received over the whole
    translation, as cells on the grid's colour scale (by word: the sum over the word's pieces, as
    the grid sums α); for a model without attention, why there is none. 1 ≈ attended once."""
    if not model.has_attention:
        return f'<p class="coverage-none">{NO_COVERAGE}</p>'
    result = view["result"]
    labels, coverage = result.source_tokens, [float(c) for c in result.coverage]
    if unit == "words":
        labels, spans = piece_words(result.source_tokens)
        coverage = [sum(coverage[j] for j in span) for span in spans]
    cells = "".join(_coverage_cell(label, c) for label, c in zip(labels, coverage))
    return ('<div class="coverage-row"><p class="coverage-title">Coverage: the attention each English '
            f'{"word" if unit == "words" else "piece"} received in all, C<sub>j</sub> = Σ<sub>t</sub> α<sub>tj</sub> '
            f'(1 ≈ once; on the grid\'s colours)</p><div class="coverage-cells">{cells}</div></div>')


def _coverage_cell(label: str, coverage: float) -> str:
    """One piece and its coverage, on the grid's colour scale (capped at 1, as the grid's is), in black or
    white, whichever reads better on it."""
    colour = sample_colorscale(ALIGNMENT_COLORSCALE, [min(coverage, 1.0)])[0]
    ink = "#000" if _luminance(unlabel_rgb(colour)) > 0.18 else "#fff"  # the larger WCAG contrast (equal at 0.179)
    return (f'<span class="coverage-cell" style="background:{colour};color:{ink}" title="C = {coverage:.3f}">'
            f'<span class="coverage-piece">{html.escape(label)}</span><span class="coverage-value">{coverage:.2f}</span></span>')


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


def _luminance(rgb) -> float:
    """WCAG 2's relative luminance of an sRGB colour (0–255 a channel): black text is the more legible on a
    background above 0.179, where (L + 0.05) / 0.05 passes 1.05 / (L + 0.05)."""
    linear = [c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
