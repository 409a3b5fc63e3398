"""Plotly figures from plain arrays. Nothing here calls a model: each figure draws numbers
a Translation already holds, so the page can only show what the model computed.

Every piece of user text is HTML-escaped before it reaches Plotly, whose labels understand a
few tags: a piece such as "<img" is drawn as text, never interpreted. Axes are numeric with
tick labels, so a piece that occurs twice keeps its own row or column.

Every figure carries its text alternative (WCAG 1.1.1) in layout.meta.text, written from the same
numbers it draws and escaped like its labels: ui/figure_text.js gives it to the plot as its
aria-label, so a screen reader hears what the picture shows (for a grid: where each row looks most).

A figure is a plain dict, {"data": [...], "layout": {...}}: the form plotly.js reads, and what
plotly.py's go.Figure holds. It is never wrapped in a go.Figure: validation cost 10–60 ms a figure,
and even unvalidated, building one and writing it out cost 2–3 ms a grid (two deep copies of every
hover label), more than the rest of a cached translation's request. to_json writes it as plotly.py
would (numpy arrays as typed arrays) in a tenth of a millisecond. tests/views/test_figures.py validates
every figure against Plotly's schema and checks to_json against plotly.py's own writing.
"""
import html
import re
import textwrap

import numpy as np
import orjson
from plotly.colors import make_colorscale, sample_colorscale, sequential

from attn_demo.views.steps import VECTOR_COLORSCALE  # signed numbers, white at 0: the step view's vectors and attributions
from attn_demo.views.steps import typed  # float32 grids as plotly.js reads them, as the step payload sends them
from attn_demo.views.titles import TITLE_LINE  # a model title's characters on one line on a phone

# The colour scale is spelled out, as unvalidated figures would hand its name to plotly.js.
ALIGNMENT_COLORSCALE = make_colorscale(sequential.Viridis)  # fixed to [0, 1] so both models' grids compare
HIGHLIGHT = "#d62728"
LANGUAGES = ("English", "French")  # what a grid's columns and rows are


def label(piece: str) -> str:
    """A piece as Plotly should print it: markup escaped."""
    return html.escape(piece, quote=False)


def _font(large: bool) -> int:
    return 20 if large else 13


# Plotly's buttons (the camera, zoom) sit at a figure's top right, always shown on a touch screen: a band of their
# height above the title keeps them off it (the figure grows by the band; the plot keeps its room).
MODEBAR_BAND = 24


def _layout(title: str, height: int, large: bool, top: int = 60, subtitle: str = "") -> dict:
    """A figure's common layout, `height` and `top` (the margin above the plot) as if its title were at the very top:
    the modebar's band is added to both; a subtitle (a line under the title) gets a line of room of its own."""
    font = _font(large)
    title = dict(text=title, x=0.01, y=1.0, yanchor="top", yref="container", pad=dict(t=8 + MODEBAR_BAND),
                 font=dict(size=font + 3))
    if subtitle:
        title["subtitle"] = dict(text=subtitle, font=dict(size=font, color="#555"))
        top += font + 8
    return dict(
        title=title, height=height + MODEBAR_BAND, margin=dict(l=10, r=10, t=top + MODEBAR_BAND, b=10),
        template="plotly_white", paper_bgcolor="white", plot_bgcolor="white",  # readable in light and dark pages
        font=dict(size=font, color="#222"),
        hoverlabel=dict(font=dict(size=font)), showlegend=False,
    )


# A legend under a figure whose width follows the screen: anchored to the figure's bottom edge, so Plotly makes room
# for it however many lines it wraps to (one placed under the plot area grows up into the axis title on a phone).
LEGEND_BELOW = dict(orientation="h", yref="container", y=0, yanchor="bottom")


def _title_text(layout: dict) -> str:
    """A figure's title and subtitle, as a screen reader's text begins."""
    title = layout["title"]
    return f"{title['text']} ({title['subtitle']['text']})" if "subtitle" in title else title["text"]


def _figure(data: list, layout: dict, text: str) -> dict:
    """The figure, with `text` (escaped) as what a screen reader says in its place."""
    layout["meta"] = dict(text=text)
    return dict(data=data, layout=layout)


# what plotly.py writes as an escape, so that the JSON can sit in an HTML <script> (a piece "</script>" too)
HTML_SAFE = (("<", "\\u003c"), (">", "\\u003e"), ("/", "\\u002f"))


def to_json(figure: dict) -> str:
    """A figure as plotly.js reads it, written as plotly.py writes a go.Figure of it."""
    text = orjson.dumps(figure, default=_plotly_value).decode()
    for character, escape in HTML_SAFE:
        text = text.replace(character, escape)
    return text


def _plotly_value(value):
    """What orjson cannot write itself, as plotly.py writes it: a grid of float32 (a heatmap's z, the
    only arrays the builders hold) as the typed array {dtype, bdata, shape} (steps.typed), any other
    array or numpy number as numbers."""
    if isinstance(value, np.ndarray) and value.dtype == np.float32 and value.ndim > 1 and value.size:
        return typed(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise TypeError(f"a figure holds {type(value).__name__}, which JSON cannot write")


def _plain(title: str) -> str:
    """A title without its markup (α<sub>tj</sub> → α tj); user text in it stays escaped."""
    return " ".join(re.sub(r"<[^>]*>", " ", title).split())


def _strongest(values: np.ndarray, across, down, symbol: str, signed: bool = False) -> str:
    """Each row's strongest cell in words, "le ← the 0.62; …": the largest value, or with
    `signed` the largest in size (its sign kept). Labels as given (escaped)."""
    columns = (np.abs(values) if signed else values).argmax(axis=1)
    number = "{:+.2f}" if signed else "{:.2f}"
    return "; ".join(f"{down[t]} ← {across[j]} ({symbol} {number.format(values[t, j])})" for t, j in enumerate(columns))


def _links(links, english, french) -> str:
    """(English word, French word) links in words, in French order: "voiture ← car, …"."""
    return ", ".join(f"{french[f]} ← {english[e]}" for e, f in sorted(links, key=lambda link: link[::-1])) or "none"


def _ticks(labels, **extra) -> dict:
    return dict(tickmode="array", tickvals=list(range(len(labels))), ticktext=list(labels), showgrid=False, **extra)


def _text_px(text: str, size: int) -> int:
    """A generous estimate of an (escaped) label's printed width: margins are computed, not left to
    Plotly's automargin, so that every cell keeps its size."""
    return int(0.65 * size * len(html.unescape(text))) + 4


def _grid_layout(title: str, across, down, down_title: str, large: bool) -> dict:
    """The layout of a heatmap grid with labels (escaped) across, at the top, written vertically so
    that neighbours never overlap, and down. Cells are square and never smaller than a label's line
    height: a long sentence makes the figure wider, and the page scrolls it sideways (a phone)
    rather than piling labels on each other. A title in lines (<br>) gets the room of each line."""
    font, cell = _font(large), 34 if large else 24
    lines = title.split("<br>")
    top = 50 + max(_text_px(text, font) for text in across) + round(1.3 * (font + 3)) * (len(lines) - 1)
    left = 30 + max(_text_px(text, font) for text in down)  # the tick labels and the axis title beside them
    right = 90  # the colour bar
    layout = _layout(title, height=top + max(cell * len(down), 120) + 10, large=large, top=top)  # room for the colour bar
    layout["width"] = max(left + cell * len(across) + right, max(_text_px(line, font + 3) for line in lines) + 20)
    layout["margin"].update(l=left, r=right, b=10)
    layout.update(xaxis=_ticks(across, tickangle=-90, side="top"),
                  yaxis=_ticks(down, autorange="reversed", title=dict(text=down_title, standoff=4)))
    return layout


def alignment_figure(source_tokens, target_tokens, attention, title: str, large: bool = False,
                     unit: str = "pieces", marked: tuple[int, int | None] | None = None, sides=LANGUAGES) -> dict:
    """Heatmap of α (T, S): target pieces (or words) down, source pieces (or words) across; the
    hover says which (unit). marked (t, j), 0-based, outlines in red what a user changed: French
    row t (j None: its piece was edited) or the cell (t, j) (α at step t was set onto piece j).
    sides: what the columns and rows are, (input, output): the languages, or a toy task's strings."""
    attention = np.asarray(attention, dtype=np.float32)
    T, S = attention.shape
    src, tgt = [label(p) for p in source_tokens], [label(p) for p in target_tokens]
    heatmap = dict(
        type="heatmap", z=attention, zmin=0.0, zmax=1.0, colorscale=ALIGNMENT_COLORSCALE, xgap=1, ygap=1,
        customdata=[[[tgt[t], src[s]] for s in range(S)] for t in range(T)],
        hovertemplate="%{customdata[0]} ← %{customdata[1]}: α = %{z:.2f} (by " + unit + ")<extra></extra>",
        colorbar=dict(title=dict(text="α"), thickness=14, len=min(1.0, 0.35 + 0.02 * T)),
    )
    layout = _grid_layout(title, src, tgt, sides[1], large)
    if marked is not None:
        t, j = marked
        x0, x1 = (-0.5, S - 0.5) if j is None else (j - 0.5, j + 0.5)
        layout["shapes"] = [dict(type="rect", x0=x0, x1=x1, y0=t - 0.5, y1=t + 0.5, line=dict(color=HIGHLIGHT, width=3))]
    figure = _figure([heatmap], layout, alignment_text(source_tokens, target_tokens, attention, title, unit, sides))
    figure["layout"]["meta"]["unit"] = unit  # heads_view.js redraws a grid by piece from its payload
    return figure


def alignment_text(source_tokens, target_tokens, attention, title: str, unit: str = "pieces", sides=LANGUAGES) -> str:
    """What a screen reader says for an alignment grid (alignment_figure): its size and each row's strongest link."""
    T, S = np.shape(attention)
    src, tgt = [label(p) for p in source_tokens], [label(p) for p in target_tokens]
    (source, target) = sides
    return (f"{_plain(title)}: a grid of α, {T} {target} {unit} (rows) by {S} {source} {unit} (columns), each row summing "
            f"to 1. The {source} {unit[:-1]} each {target} {unit[:-1]} attends to most: "
            f"{_strongest(np.asarray(attention, dtype=np.float32), src, tgt, 'α')}.")


def gold_check_figure(english, french, alpha, sure, possible, links, title: str, large: bool = False) -> dict:
    """Word-level α (French words down, English words across) with the human links outlined
    (sure: solid, possible only: dashed) and the links drawn from α marked with a dot. Links
    are (English word, French word) pairs, 0-based."""
    alpha = np.asarray(alpha, dtype=np.float32)
    F, E = alpha.shape
    en, fr = [label(w) for w in english], [label(w) for w in french]
    gold = {link: "sure" for link in sure} | {link: "possible" for link in possible - set(sure)}
    heatmap = dict(
        type="heatmap", z=alpha, zmin=0.0, zmax=1.0, colorscale=ALIGNMENT_COLORSCALE, xgap=1, ygap=1,
        customdata=[[[fr[f], en[e], gold.get((e, f), "no"), "yes" if (e, f) in links else "no"] for e in range(E)]
                    for f in range(F)],
        hovertemplate="%{customdata[0]} ← %{customdata[1]}: α = %{z:.2f}<br>human link: %{customdata[2]} · "
                      "drawn from α: %{customdata[3]}<extra></extra>",
        colorbar=dict(title=dict(text="α"), thickness=14, len=min(1.0, 0.35 + 0.02 * F)),
    )
    drawn = sorted(links)
    dots = dict(type="scatter", mode="markers", x=[e for e, _ in drawn], y=[f for _, f in drawn], hoverinfo="skip",
                marker=dict(symbol="circle", size=9 if large else 7, color=HIGHLIGHT, line=dict(color="white", width=1)))
    shapes = [dict(type="rect", x0=e - 0.5, x1=e + 0.5, y0=f - 0.5, y1=f + 0.5,
                   line=dict(color="white", width=3 if kind == "sure" else 2, dash="solid" if kind == "sure" else "dot"))
              for (e, f), kind in gold.items()]
    layout = _grid_layout(title, en, fr, "French (human translation)", large)
    layout["shapes"] = shapes
    text = (f"{_plain(title)}: α by word, {F} French words (rows) by {E} English words (columns), with the human links "
            f"outlined. Links drawn from α: {_links(links, en, fr)}. Human links, sure: {_links(set(sure), en, fr)}; "
            f"possible only: {_links(gold.keys() - set(sure), en, fr)}. The English word each French one attends to most: "
            f"{_strongest(alpha, en, fr, 'α')}.")
    return _figure([heatmap, dots], layout, text)


def length_figure(curves: dict, large: bool = False) -> dict:
    """BLEU by English sentence length, one line per model: {model title: {"1-10": {"bleu", "n"}, …}}
    (Bahdanau et al. 2015, Figure 2, for our own models)."""
    data = [dict(type="scatter", mode="lines+markers", name=label(title), x=[b.replace("-", "–") for b in buckets],
                 y=[v["bleu"] for v in buckets.values()], customdata=[v["n"] for v in buckets.values()],
                 hovertemplate=f"{label(title)}<br>%{{x}} words: BLEU %{{y:.1f}} (%{{customdata}} inputs)<extra></extra>")
            for title, buckets in curves.items()]
    height = 480 if large else 420  # large text: the legend's six lines, wrapped on a narrow screen, leave the plot its room
    layout = _layout("BLEU by sentence length", height, large, subtitle="long-sentence test set, beam 5")
    layout.update(showlegend=True, legend=LEGEND_BELOW,  # the tick labels turn upright where they would collide
                  xaxis=dict(title=dict(text="English words"), type="category", automargin=True, autotickangles=[0, 90]),
                  yaxis=dict(title=dict(text="BLEU"), rangemode="tozero", automargin=True))  # room for "40", not "0"
    lines = "; ".join(f"{label(title)}: " + ", ".join(f"{b.replace('-', '–')} words {v['bleu']:.1f}" for b, v in buckets.items())
                      for title, buckets in curves.items())
    return _figure(data, layout, f"{_title_text(layout)}, one line per model, BLEU by English words: {lines}.")


def comparison_figure(rows: list[dict], large: bool = False) -> dict:
    """Every model's test BLEU beside its BLEU on 41–50-word inputs, as grouped horizontal bars (the
    model names down the side, so they never overlap on a phone), from the rows of catalogue.summary;
    a model not measured on a set has no bar there."""
    titles = [label(row["title"]) for row in rows]
    ticks = ["<br>".join(textwrap.wrap(title, TITLE_LINE, break_on_hyphens=False)) for title in titles]  # never cut off
    data = [dict(type="bar", orientation="h", name=name, y=ticks, x=[row[key] for row in rows], marker=dict(color=colour),
                 hovertemplate="%{y}<br>" + name + ": BLEU %{x:.1f}<extra></extra>")
            for key, name, colour in (("test_bleu", "Tatoeba test set", "#4c72b0"),
                                      ("long_41_50_bleu", "inputs of 41–50 words", "#dd8452"))]
    layout = _layout("BLEU of every model", 140 + (60 if large else 44) * len(rows), large,
                     subtitle="the test set and inputs of 41–50 words, beam 5")
    layout.update(barmode="group", showlegend=True, legend=LEGEND_BELOW,
                  yaxis=dict(type="category", autorange="reversed", automargin=True),
                  xaxis=dict(title=dict(text="BLEU"), rangemode="tozero", automargin=True))  # room above the legend
    bleu = lambda value: "not measured" if value is None else f"{value:.1f}"
    bars = "; ".join(f"{title}: test set {bleu(row['test_bleu'])}, 41–50 words {bleu(row['long_41_50_bleu'])}"
                     for title, row in zip(titles, rows))
    return _figure(data, layout, f"{_title_text(layout)}, per model: {bars}.")


def attribution_figure(source_tokens, target_tokens, scores, title: str, large: bool = False, unit: str = "pieces") -> dict:
    """Heatmap of an attribution (T, S) on the axes of the alignment grid: red where a source piece
    (or word) lowered the log-probability of the French piece, blue where it raised it, white at 0."""
    scores = np.asarray(scores, dtype=np.float32)
    T, S = scores.shape
    bound = float(np.abs(scores).max()) or 1.0
    src, tgt = [label(p) for p in source_tokens], [label(p) for p in target_tokens]
    heatmap = dict(
        type="heatmap", z=scores, zmin=-bound, zmax=bound, colorscale=VECTOR_COLORSCALE, xgap=1, ygap=1,
        customdata=[[[tgt[t], src[s]] for s in range(S)] for t in range(T)],
        hovertemplate="%{customdata[0]} ← %{customdata[1]}: A = %{z:.3f} (by " + unit + ")<extra></extra>",
        colorbar=dict(title=dict(text="A"), thickness=14, len=min(1.0, 0.35 + 0.02 * T)),
    )
    text = (f"{_plain(title)}: a grid of attributions A, {T} French {unit} (rows) by {S} English {unit} (columns); "
            "above 0 an English one raised the French one's log-probability, below 0 lowered it. The largest in size "
            f"for each French {unit[:-1]}: {_strongest(scores, src, tgt, 'A', signed=True)}.")
    return _figure([heatmap], _grid_layout(title, src, tgt, "French", large), text)


KEPT, PRUNED = "#4c72b0", "#b0b0b0"  # a beam search's kept beginnings, and the extensions it dropped


def beam_search_figure(weighed, pieces: list[str], hypotheses: list[list[str]], large: bool = False) -> dict:
    """A beam search as it went (search.Candidate's, with `pieces` the piece of each): at each output
    step (across), the extensions of the kept beginnings it weighed, most probable on top (down), an
    edge from each to the beginning it extends. The n best hypotheses (`hypotheses`, as pieces, best
    first) are drawn in red, the other kept beginnings in blue, the pruned extensions in grey; the
    hover gives each piece's own p, its beginning's log p (and the coverage term it was ranked with, when
    the penalties applied at every step) and what became of it. Pieces are escaped."""
    paths, rows, per_step = [], [], {}
    for candidate, piece in zip(weighed, pieces):
        paths.append((paths[candidate.parent] if candidate.parent >= 0 else ()) + (piece,))
        rows.append(per_step.get(candidate.step, 0))  # weighed most probable first within a step
        per_step[candidate.step] = rows[-1] + 1
    rank_of = {tuple(h): r for r, h in enumerate(hypotheses, start=1)}
    best = {path[:t] for path in map(tuple, hypotheses) for t in range(1, len(path) + 1)}  # on an n-best path
    colour = [HIGHLIGHT if path in best else PRUNED if c.fate == "pruned" else KEPT for c, path in zip(weighed, paths)]
    edges = {HIGHLIGHT: ([], []), KEPT: ([], []), PRUNED: ([], [])}
    for i, c in enumerate(weighed):
        if c.parent >= 0:
            xs, ys = edges[colour[i]]
            xs += [c.step - 1, c.step, None]
            ys += [rows[c.parent], rows[i], None]
    lines = [dict(type="scatter", mode="lines", x=xs, y=ys, hoverinfo="skip",
                  line=dict(color=edge, width=2.5 if edge == HIGHLIGHT else 1, dash="dot" if edge == PRUNED else "solid"))
             for edge, (xs, ys) in edges.items() if xs]
    text = [label(path[-1]) + (f" #{rank_of[path]}" if path in rank_of else "") for path in paths]
    font = _font(large)
    stepwise = any(c.term for c in weighed)  # ranked by log p + a coverage term at every step
    points = dict(type="scatter", mode="markers+text", x=[c.step for c in weighed], y=rows, text=text,
                  textposition="top center", textfont=dict(color=colour),
                  customdata=[[np.exp(c.log_p), c.score, _fate(c, path, rank_of), label(_beginning(path)), c.term]
                              for c, path in zip(weighed, paths)],
                  hovertemplate="step %{x}: %{text}, p = %{customdata[0]:.3f} after “%{customdata[3]}”<br>"
                                "log p of the beginning: %{customdata[1]:.2f}"
                                + (", coverage term: %{customdata[4]:.2f}" if stepwise else "")
                                + " · %{customdata[2]}<extra></extra>",
                  marker=dict(size=[(9 if large else 7) if c.fate != "pruned" else 5 for c in weighed], color=colour,
                              symbol=["diamond" if c.fate == "ended" else "circle" for c in weighed]))
    steps, depth = max(per_step), max(per_step.values())
    column = max(_text_px(t, font) for t in text) + 12  # labels side by side never overlap
    layout = _layout("The beam search, step by step: what it kept (blue, the n best in red) and pruned (grey)",
                     90 + int(2.6 * font) * depth, large)
    layout.update(xaxis=dict(title=dict(text="output step t"), zeroline=False, showgrid=False, range=[0.4, steps + 0.6],
                             tickvals=list(range(1, steps + 1))),
                  yaxis=dict(title=dict(text="rank at the step, by log p" + (" + coverage term" if stepwise else "")),
                             zeroline=False, showgrid=False,
                             tickvals=list(range(depth)), ticktext=[str(r + 1) for r in range(depth)],
                             range=[depth - 0.5, -0.9]))  # the most probable on top, room for its label
    layout["margin"].update(l=30 + 3 * font, b=30 + 2 * font)
    layout["width"] = column * steps + layout["margin"]["l"] + 20
    fates = [c.fate for c in weighed]
    best = "; ".join(f"#{r} {' '.join(label(p) for p in h)}" for r, h in enumerate(hypotheses, start=1))
    text = (f"{layout['title']['text']}. Over {steps} output steps it weighed {len(weighed)} extensions: kept "
            f"{fates.count('kept')}, finished {fates.count('ended')} hypotheses, pruned {fates.count('pruned')}. "
            f"The best, as pieces: {best}.")
    return _figure([*lines, points], layout, text)


def _beginning(path: tuple, shown: int = 6) -> str:
    """The pieces before a candidate's own, the last few of them."""
    before = path[:-1]
    return ("… " if len(before) > shown else "") + " ".join(before[-shown:]) if before else "(nothing yet)"


def _fate(candidate, path: tuple, rank_of: dict) -> str:
    if candidate.fate == "kept":
        return "kept as a beam"
    if candidate.fate == "ended":
        return f"ended: hypothesis #{rank_of[path]}" if path in rank_of else "ended: a hypothesis outside the n shown"
    return "pruned: not among the k best"


def grid_svg(figure: dict) -> str:
    """An alignment grid of alignment_figure as plain SVG, for a page that has not loaded plotly.js yet:
    the same cells, colours (α on [0, 1]), labels and text alternative, each cell's number in its title
    (hover, or a long press on a phone)."""
    heatmap, layout = figure["data"][0], figure["layout"]
    z, cells = np.asarray(heatmap["z"], dtype=np.float32), heatmap["customdata"]
    T, S = z.shape
    font, cell = layout["font"]["size"], 24
    across, down = layout["xaxis"]["ticktext"], layout["yaxis"]["ticktext"]  # escaped already
    left, top = 10 + max(_text_px(text, font) for text in down), 10 + max(_text_px(text, font) for text in across)
    colours = sample_colorscale(heatmap["colorscale"], [float(v) for v in z.ravel()])
    rects = "".join(
        f'<rect x="{left + j * cell}" y="{top + t * cell}" width="{cell - 1}" height="{cell - 1}" fill="{colours[t * S + j]}">'
        f"<title>{cells[t][j][0]} ← {cells[t][j][1]}: α = {z[t, j]:.2f}</title></rect>"
        for t in range(T) for j in range(S))
    columns = "".join(f'<text transform="translate({left + j * cell + cell / 2 + font / 3},{top - 6}) rotate(-90)">{text}</text>'
                      for j, text in enumerate(across))
    rows = "".join(f'<text x="{left - 6}" y="{top + t * cell + cell / 2 + font / 3}" text-anchor="end">{text}</text>'
                   for t, text in enumerate(down))
    width, height = left + S * cell + 10, top + T * cell + 10
    alternative = html.escape(layout["meta"]["text"])
    return (f'<svg class="light-grid" role="img" aria-label="{alternative}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-size="{font}" font-family="sans-serif" fill="#222">'
            f"{rects}{columns}{rows}</svg>")


def toy_loss_figure(runs: list[dict], large: bool = False) -> dict:
    """A toy lesson's training loss, one line per run: [{"title", "loss_curve": [[update, mean loss], …]}]."""
    data = [dict(type="scatter", mode="lines", name=label(run["title"]), x=[u for u, _ in run["loss_curve"]],
                 y=[loss for _, loss in run["loss_curve"]],
                 hovertemplate=f"{label(run['title'])}<br>update %{{x}}: loss %{{y:.3f}}<extra></extra>") for run in runs]
    layout = _layout("Training loss", 300, large, subtitle="cross-entropy per piece, mean of 10 updates")
    layout.update(showlegend=True, legend=LEGEND_BELOW, xaxis=dict(title=dict(text="update"), rangemode="tozero", automargin=True),
                  yaxis=dict(title=dict(text="loss"), rangemode="tozero", automargin=True))
    ends = "; ".join(f"{label(run['title'])}: " + (f"{run['loss_curve'][-1][1]:.3f} after {run['loss_curve'][-1][0]} updates"
                                                   if run["loss_curve"] else "not trained yet") for run in runs)
    return _figure(data, layout, f"{_title_text(layout)}, one line per model, the latest loss: {ends}.")


def toy_accuracy_figure(runs: list[dict], unit: str, large: bool = False) -> dict:
    """A toy lesson's held-out strings exactly right by length, one line per run: [{"title", "exact_by_length":
    {"3": 0.95, …}}] (Bahdanau et al. 2015, Figure 2, in half a minute)."""
    data = [dict(type="scatter", mode="lines+markers", name=label(run["title"]), x=[int(n) for n in run["exact_by_length"]],
                 y=[100 * share for share in run["exact_by_length"].values()],
                 hovertemplate=f"{label(run['title'])}<br>%{{x}} {unit}: %{{y:.0f}}% exactly right<extra></extra>")
            for run in runs]
    layout = _layout("Exactly right, by length", 300, large, subtitle="held-out strings, never trained on")
    layout.update(showlegend=True, legend=LEGEND_BELOW,
                  xaxis=dict(title=dict(text=f"input length ({unit})"), dtick=1, automargin=True),
                  yaxis=dict(title=dict(text="% exactly right"), range=[-3, 103], automargin=True))
    shares = "; ".join(f"{label(run['title'])}: " + ", ".join(f"{n} {unit} {100 * v:.0f}%" for n, v in run["exact_by_length"].items())
                       for run in runs)
    return _figure(data, layout, f"{_title_text(layout)}, one line per model: {shares}.")
