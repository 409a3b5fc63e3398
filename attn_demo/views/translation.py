"""What the views of one translation draw, built in one place: the translate section, the export
file and anything else that shows a translation read it from here, so they can never differ.

A side is (model, view), view as catalogue.Model.view returns it: {"result": Translation,
"projection": …}.
    grid_figure(model, view, large, unit, pick)  its alignment grid, by piece or by word (None without attention);
                                            for a Transformer, the layer and head picked (read_pick), or the shown one
    grid_note(model, pick)                  under the grid: which of a Transformer's grids it is, and why that one
    under_grid(model, view, unit, pick)     under the grid: the coverage row, and a Transformer's every note and row
    coverage_row(model, view, unit, pick)   under the grid: the attention each English piece received in all, and
                                            the words barely looked at, where the model's measured marks are right
    coverage_marks(model, view)             the words that row marks, for the JSON trace
    step_data(sides)                        every decoder step of the sides, for step_views.js and network_view.js
    step_views(views)                       the same payload from (title, Translation, projection, forced steps)
                                            (the explorer's hypotheses, which share one projection)
"""
import dataclasses
import html
import re

from plotly.colors import hex_to_rgb, sample_colorscale, unlabel_rgb

from attn_demo.decoding.grids import PICK_KEY, grid_name, head_grids, pick_key, piece_words, words_view
from attn_demo.measures.marks import barely_looked_at
from attn_demo.views.figures import ALIGNMENT_COLORSCALE, HIGHLIGHT, alignment_figure, alignment_text
from attn_demo.views.steps import VECTOR_COLORSCALE, step_payload
from attn_demo.views.titles import grid_title


def read_pick(model, text: str | None) -> tuple[int, int | None] | None:
    """A Transformer's grid as the page names it (grids.PICK_KEY: "2.3", or "2.mean" for the mean of the
    layer's heads), as (layer, head) from 0, head None for the mean; None (the grid its config shows) for a model
    without heads, an empty text or one that names no grid of this model."""
    config = model.translator.config
    match = PICK_KEY.fullmatch(str(text or ""))
    if not model.kind.heads or not match:
        return None
    layer, head = int(match[1]) - 1, None if match[2] == "mean" else int(match[2]) - 1
    if not 0 <= layer < config.dec_layers or not (head is None or 0 <= head < config.heads):
        return None
    return layer, head


def picked_attention(model, view, pick=None):
    """The α (T, S) a side shows: Translation.attention, or a Transformer's grid `pick` (read_pick)."""
    result = view["result"]
    if pick is None or tuple(pick) == result.heads.shown:
        return result.attention
    return head_grids(result.heads)[tuple(pick)]


def grid_figure(model, view, large: bool, unit: str = "pieces", pick=None):
    """A side's alignment grid, None for a model without attention. By word, an English word's α is
    the sum of its pieces' (the attention mass on the word), a French word's row the mean of its
    pieces' rows. A Transformer's is the grid `pick` (read_pick), or the one its config shows, named in the title."""
    if not model.has_attention:
        return None
    result, attention = view["result"], picked_attention(model, view, pick)
    title = grid_title(model.title, unit, grid_name(*(pick or result.heads.shown)) if result.heads is not None else "")
    if unit == "words":
        source, target, attention = words_view(result.source_tokens, result.target_tokens, attention)
        return alignment_figure(source, target, attention, title, large, unit="words")
    return alignment_figure(result.source_tokens, result.target_tokens, attention, title, large)


def grid_note(model, pick=None) -> str:
    """Under a Transformer's grid: which of its layers' and heads' grids it is and why its config shows the one it
    does; nothing for a GRU model (one score, one grid)."""
    if not model.kind.heads:
        return ""
    config = model.translator.config
    shown = (config.layer_shown, config.shown_head)
    why = ("chosen by measurement: the lowest alignment error rate on the Hansards trial set (its model card)"
           if config.shown_layer is not None else "the mean over the penultimate layer's heads, which aligns best in "
           "Garg et al. 2019 (not yet measured for this model)")
    count = f"one of {config.dec_layers * (config.heads + 1)} grids ({config.dec_layers} layers × {config.heads} heads and each layer's mean)"
    if pick is not None and tuple(pick) != shown:
        return (f"**{grid_name(*pick).capitalize()}**, picked: {count}. The model's shown grid is "
                f"{grid_name(*shown)}, {why}.{measured_note(model, pick)}")
    return (f"**{grid_name(*shown).capitalize()}**: {count}, {why}.{measured_note(model, shown)} "
            "Pick another with Layer and Head.")


def measured_note(model, grid) -> str:
    """What the model card measured of one of a Transformer's grids, beyond this sentence: its argmax AER on the
    Hansards test split (evaluate --alignments) and, for a head, its confidence, its α on </s> and the BLEU lost
    with it turned off (evaluate --heads); "" where the card has none of them."""
    name = grid_name(*grid)
    card = model.translator.card
    aer = ((model.translator.alignment_scores.get("heads") or {}).get("test") or {}).get(name)
    heads = card.get("heads") or {}
    head = (heads.get("heads") or {}).get(name)
    said = [f"argmax AER {aer:.3f} on the Hansards test split"] if aer is not None else []
    if head:
        said.append(f"over {heads['n']:,} Tatoeba test sentences, confidence {head['confidence']:.2f}, "
                    f"{head['eos_share']:.0%} of its α on </s>, and BLEU {-head['bleu_cost']:+.2f} with it turned off")
    return f" Its model card measured: {'; '.join(said)}." if said else ""


def under_grid(model, view, unit: str = "pieces", pick=None) -> str:
    """What a side shows under its grid: the coverage row (coverage_row), and for a Transformer every grid's note
    (grid_note) and coverage row, each in a block named by its key (grids.PICK_KEY), the picked one shown: a
    pick in the browser shows another at once (heads_view.js), asking the server nothing."""
    if not model.kind.heads:
        return coverage_row(model, view, unit, pick)
    shown = pick_key(*(pick or view["result"].heads.shown))
    return "".join(f'<div class="coverage-pick" data-pick="{pick_key(*grid)}"{"" if pick_key(*grid) == shown else " hidden"}>'
                   f'<p class="grid-note">{markdown_bold(grid_note(model, grid))}</p>{coverage_row(model, view, unit, grid)}</div>'
                   for grid in head_grids(view["result"].heads))


def markdown_bold(text: str) -> str:
    """A plain text with **bold** spans as HTML, escaped."""
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html.escape(text))


# the grids' colour scale as step_views.js's colourTable reads one, "rgb(r,g,b)" a stop
GRID_COLOURS = [[at, "rgb(%d,%d,%d)" % hex_to_rgb(colour)] for at, colour in ALIGNMENT_COLORSCALE]


# the coverage row's cells, on the page and in the exported file: they wrap on a phone
COVERAGE_CSS = """
.coverage-title { margin: 0 0 4px; font-size: 0.9em; }
.coverage-cells { display: flex; flex-wrap: wrap; gap: 2px; }
.coverage-cell { display: inline-flex; flex-direction: column; align-items: center; padding: 2px 5px; border-radius: 3px;
                 font-size: 0.85em; line-height: 1.3; }
.coverage-cell span { color: inherit !important; }  /* the cell's ink, chosen for its background, over the theme's */
.coverage-value { font-variant-numeric: tabular-nums; }
.coverage-low { outline: 2px dashed %s; outline-offset: 1px; }
.coverage-note { margin: 4px 0 0; font-size: 0.85em; }
.coverage-pick[hidden] { display: none; }  /* a Transformer's other grids' notes and rows (heads_view.js shows one) */
.grid-note { margin: 4px 0; font-size: 0.9em; }
""" % HIGHLIGHT
NO_COVERAGE = ("No α, so no coverage: nothing in this model records which English words it has already translated, "
               "and nothing on the page can show it.")
NOT_MARKED = ("No word is marked: for this model a word it barely looked at was not reliably one without a "
              "counterpart in its translation (measured on long sentences; its model card).")


def coverage_row(model, view, unit: str = "pieces", pick=None) -> str:
    """A side's coverage C_j = Σ_t α_tj, the attention each English piece received over the whole
    translation, as cells on the grid's colour scale (by word: the sum over the word's pieces, as
    the grid sums α); for a model without attention, why there is none. 1 ≈ attended once. A Transformer's
    is its picked grid's (read_pick); its marks were measured on the shown grid alone."""
    if not model.has_attention:
        return f'<p class="coverage-none">{NO_COVERAGE}</p>'
    result, marks = view["result"], model.translator.marks
    attention = picked_attention(model, view, pick)
    if attention is not result.attention:
        result, marks = dataclasses.replace(result, attention=attention, coverage=attention.sum(0)), None
    labels, coverage = result.source_tokens, [float(c) for c in result.coverage]
    words, spans = piece_words(result.source_tokens)
    marked = marked_words(result, marks) + [False]  # per word; </s> is never marked
    if unit == "words":
        labels, coverage = words, [sum(coverage[j] for j in span) for span in spans]
    else:
        marked = [marked[w] for w, span in enumerate(spans) for _ in span]  # a piece as its word
    cells = "".join(_coverage_cell(label, c, low) for label, c, low in zip(labels, coverage, marked))
    return ('<div class="coverage-row"><p class="coverage-title">Coverage: the attention each English '
            f'{"word" if unit == "words" else "piece"} received in all, C<sub>j</sub> = Σ<sub>t</sub> α<sub>tj</sub> '
            f'(1 ≈ once; on the grid\'s colours)</p><div class="coverage-cells">{cells}</div>'
            f'{_marks_note(marks, any(marked))}</div>')


def marked_words(result, marks: dict | None) -> list[bool]:
    """For each English word of a Translation but </s>, whether the page marks it as barely looked at: below
    the threshold its model's measured marks chose (attn_demo.measures.marks), if they chose one."""
    if not marks or marks["threshold"] is None:
        return [False] * (len(piece_words(result.source_tokens)[0]) - 1)
    return barely_looked_at(result, marks["threshold"])


def coverage_marks(model, view) -> dict | None:
    """What a side's coverage row marks, for the JSON trace: {"below": threshold, "words": [the English words
    marked]}; None where the model's measured marks chose no threshold."""
    marks, result = model.translator.marks, view["result"]
    if not marks or marks["threshold"] is None:
        return None
    words = piece_words(result.source_tokens)[0]
    return {"below": marks["threshold"], "words": [w for w, low in zip(words, marked_words(result, marks)) if low]}


def _marks_note(marks: dict | None, any_marked: bool) -> str:
    """What the marks mean for this model, as measured; nothing where they were not measured."""
    if not marks:
        return ""
    if marks["threshold"] is None:
        return f'<p class="coverage-note">{NOT_MARKED}</p>'
    threshold = marks["threshold"]
    precision = marks["low"][str(threshold)]["precision"]
    if not any_marked:
        return (f'<p class="coverage-note">No word below C = {threshold:g}: every word got some attention (for this '
                f'model, a word below it had no counterpart in the translation {precision:.0%} of the time).</p>')
    return (f'<p class="coverage-note">Dashed: words this translation barely looked at (C &lt; {threshold:g}). For this '
            f'model such a word had no counterpart in the translation {precision:.0%} of the time (measured on long '
            'sentences): a word French does without, or a dropped phrase. α is a hint, not a proof.</p>')


def _luminance(rgb) -> float:
    """WCAG 2's relative luminance of an sRGB colour (0–255 a channel): black text is the more legible on a
    background above 0.179, where (L + 0.05) / 0.05 passes 1.05 / (L + 0.05)."""
    linear = [c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _cell_colours(steps: int = 1000) -> list[tuple[str, str]]:
    """(background, ink) of a coverage cell at C = k / steps, k = 0 … steps: the grid's colour scale and black or
    white, whichever reads better on it (the larger WCAG contrast; equal at luminance 0.179). Sampled once:
    plotly's sample_colorscale validates its scale at every call, 0.5 ms a cell."""
    colours = sample_colorscale(ALIGNMENT_COLORSCALE, [k / steps for k in range(steps + 1)])
    return [(colour, "#000" if _luminance(unlabel_rgb(colour)) > 0.18 else "#fff") for colour in colours]


CELL_COLOURS = _cell_colours()  # C to the nearest 0.001, the precision a cell's title shows


def _coverage_cell(label: str, coverage: float, low: bool = False) -> str:
    """One piece and its coverage, on the grid's colour scale (capped at 1, as the grid's is), in black or
    white, whichever reads better on it; dashed where it is marked as barely looked at."""
    colour, ink = CELL_COLOURS[round(min(max(coverage, 0.0), 1.0) * (len(CELL_COLOURS) - 1))]
    mark, title = (" coverage-low", ": barely looked at") if low else ("", "")
    return (f'<span class="coverage-cell{mark}" style="background:{colour};color:{ink}" title="C = {coverage:.3f}{title}">'
            f'<span class="coverage-piece">{html.escape(label)}</span><span class="coverage-value">{coverage:.2f}</span></span>')


def steps_of(sides) -> int:
    """The most output steps of the sides: the scrubber's range."""
    return max(len(view["result"].target_tokens) for _, view in sides)


def step_data(sides) -> dict:
    """Every decoder step of the sides in one compact payload, in order: the browser draws any step
    from it, so scrubbing costs the server nothing."""
    return step_views([(model.title, view["result"], None if model.kind.heads else view["projection"], ())
                       for model, view in sides])


def step_views(views) -> dict:
    """The step payload of [(title, Translation, projection of its h_j, steps whose α was set by hand)]."""
    return {"steps": max(len(result.target_tokens) for _, result, _, _ in views), "colorscale": VECTOR_COLORSCALE,
            "grid_colorscale": GRID_COLOURS,  # the alignment grids' α colours, for the heads' small multiples
            "views": [described(step_payload(title, result, projection, forced), result)
                      for title, result, projection, forced in views]}


def described(payload: dict, result) -> dict:
    """A step payload whose Transformer grids each carry what a screen reader says for it (figures.alignment_text),
    so that the page redraws a picked grid whole, without the server."""
    if payload["heads"] is not None:
        alphas = head_grids(result.heads)
        for grid in payload["heads"]["grids"]:
            grid["text"] = alignment_text(result.source_tokens, result.target_tokens, alphas[(grid["layer"], grid["head"])],
                                          grid["title"])
    return payload
