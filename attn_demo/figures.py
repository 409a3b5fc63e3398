"""Plotly figures from plain arrays. Nothing here calls a model: each figure draws numbers
a Translation already holds, so the page can only show what the model computed.

Every piece of user text is HTML-escaped before it reaches Plotly, whose labels understand a
few tags: a piece such as "<img" is drawn as text, never interpreted. Axes are numeric with
tick labels, so a piece that occurs twice keeps its own row or column.

Figures are written as plain dicts and wrapped without Plotly's per-property validation
(`_validate=False`): validation cost 10–60 ms a figure, more than everything else a request
does. tests/test_figures.py re-validates every figure, so a typo still fails there.
"""
import html

import numpy as np
import plotly.graph_objects as go
from plotly.colors import make_colorscale, sequential

from attn_demo.steps import VECTOR_COLORSCALE  # signed numbers, white at 0: the step view's vectors and attributions

# The colour scale is spelled out, as unvalidated figures would hand its name to plotly.js.
ALIGNMENT_COLORSCALE = make_colorscale(sequential.Viridis)  # fixed to [0, 1] so both models' grids compare
HIGHLIGHT = "#d62728"


def label(piece: str) -> str:
    """A piece as Plotly should print it: markup escaped."""
    return html.escape(piece, quote=False)


def _font(large: bool) -> int:
    return 20 if large else 13


def _layout(title: str, height: int, large: bool, top: int = 60) -> dict:
    return dict(
        title=dict(text=title, x=0.01, y=1.0, yanchor="top", yref="container", pad=dict(t=8),
                   font=dict(size=_font(large) + 3)),
        height=height, template="plotly_white", paper_bgcolor="white", plot_bgcolor="white",  # readable in light and dark pages
        font=dict(size=_font(large), color="#222"), margin=dict(l=10, r=10, t=top, b=10),
        hoverlabel=dict(font=dict(size=_font(large))), showlegend=False,
    )


def _figure(data: list, layout: dict) -> go.Figure:
    return go.Figure(dict(data=data, layout=layout), _validate=False)


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
    rather than piling labels on each other."""
    font, cell = _font(large), 34 if large else 24
    top = 50 + max(_text_px(text, font) for text in across)
    left = 30 + max(_text_px(text, font) for text in down)  # the tick labels and the axis title beside them
    right = 90  # the colour bar
    layout = _layout(title, height=top + max(cell * len(down), 120) + 10, large=large, top=top)  # room for the colour bar
    layout["width"] = max(left + cell * len(across) + right, _text_px(title, font + 3) + 20)
    layout["margin"].update(l=left, r=right, b=10)
    layout.update(xaxis=_ticks(across, tickangle=-90, side="top"),
                  yaxis=_ticks(down, autorange="reversed", title=dict(text=down_title, standoff=4)))
    return layout


def alignment_figure(source_tokens, target_tokens, attention, title: str, large: bool = False,
                     unit: str = "pieces") -> go.Figure:
    """Heatmap of α (T, S): target pieces (or words) down, source pieces (or words) across; the
    hover says which (unit)."""
    attention = np.asarray(attention, dtype=np.float32)
    T, S = attention.shape
    src, tgt = [label(p) for p in source_tokens], [label(p) for p in target_tokens]
    heatmap = dict(
        type="heatmap", z=attention, zmin=0.0, zmax=1.0, colorscale=ALIGNMENT_COLORSCALE, xgap=1, ygap=1,
        customdata=[[[tgt[t], src[s]] for s in range(S)] for t in range(T)],
        hovertemplate="%{customdata[0]} ← %{customdata[1]}: α = %{z:.2f} (by " + unit + ")<extra></extra>",
        colorbar=dict(title=dict(text="α"), thickness=14, len=min(1.0, 0.35 + 0.02 * T)),
    )
    return _figure([heatmap], _grid_layout(title, src, tgt, "French", large))


def gold_check_figure(english, french, alpha, sure, possible, links, title: str, large: bool = False) -> go.Figure:
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
    return _figure([heatmap, dots], layout)


def length_figure(curves: dict, large: bool = False) -> go.Figure:
    """BLEU by English sentence length, one line per model: {model title: {"1-10": {"bleu", "n"}, …}}
    (Bahdanau et al. 2015, Figure 2, for our own models)."""
    data = [dict(type="scatter", mode="lines+markers", name=label(title), x=[b.replace("-", "–") for b in buckets],
                 y=[v["bleu"] for v in buckets.values()], customdata=[v["n"] for v in buckets.values()],
                 hovertemplate=f"{label(title)}<br>%{{x}} words: BLEU %{{y:.1f}} (%{{customdata}} inputs)<extra></extra>")
            for title, buckets in curves.items()]
    layout = _layout("Translation quality by sentence length (long-sentence test set, beam 5)", 420, large)
    layout.update(showlegend=True, legend=dict(orientation="h", y=-0.25),
                  xaxis=dict(title=dict(text="English words"), type="category"),
                  yaxis=dict(title=dict(text="BLEU"), rangemode="tozero"))
    return _figure(data, layout)


def comparison_figure(rows: list[dict], large: bool = False) -> go.Figure:
    """Every model's test BLEU beside its BLEU on 41–50-word inputs, as grouped horizontal bars (the
    model names down the side, so they never overlap on a phone), from the rows of catalogue.summary;
    a model not measured on a set has no bar there."""
    titles = [label(row["title"]) for row in rows]
    data = [dict(type="bar", orientation="h", name=name, y=titles, x=[row[key] for row in rows], marker=dict(color=colour),
                 hovertemplate="%{y}<br>" + name + ": BLEU %{x:.1f}<extra></extra>")
            for key, name, colour in (("test_bleu", "Tatoeba test set", "#4c72b0"),
                                      ("long_41_50_bleu", "inputs of 41–50 words", "#dd8452"))]
    layout = _layout("BLEU on the test set and on long inputs (beam 5)", 140 + (60 if large else 44) * len(rows), large)
    layout.update(barmode="group", showlegend=True, legend=dict(orientation="h", y=-0.15, yanchor="top"),
                  yaxis=dict(type="category", autorange="reversed", automargin=True),
                  xaxis=dict(title=dict(text="BLEU"), rangemode="tozero"))
    return _figure(data, layout)


def attribution_figure(source_tokens, target_tokens, scores, title: str, large: bool = False, unit: str = "pieces") -> go.Figure:
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
    return _figure([heatmap], _grid_layout(title, src, tgt, "French", large))


def beam_tree_figure(hypotheses: list[list[str]], scores: list[float], large: bool = False) -> go.Figure:
    """The n best hypotheses of a beam search as a tree of shared prefixes: each piece a node at its
    step (across), on the row of the best hypothesis that reaches it (down), edges from a prefix to
    its continuations. Pieces are escaped; hover names the hypotheses through the node."""
    nodes, edges = {}, []  # prefix (tuple of pieces) → (step, row, hypotheses through it)
    for row, pieces in enumerate(hypotheses):
        for t in range(len(pieces)):
            prefix = tuple(pieces[:t + 1])
            if prefix not in nodes:
                nodes[prefix] = (t, row, [])
                if t:
                    edges.append((prefix[:-1], prefix))
            nodes[prefix][2].append(row + 1)
    xs, ys = [], []
    for parent, child in edges:
        xs += [nodes[parent][0], nodes[child][0], None]
        ys += [nodes[parent][1], nodes[child][1], None]
    lines = dict(type="scatter", mode="lines", x=xs, y=ys, hoverinfo="skip", line=dict(color="#9aa7b8", width=1.5))
    points = dict(type="scatter", mode="markers+text", x=[n[0] for n in nodes.values()], y=[n[1] for n in nodes.values()],
                  text=[label(prefix[-1]) for prefix in nodes], textposition="top center",
                  customdata=[", ".join(map(str, n[2])) for n in nodes.values()],
                  hovertemplate="step %{x}: %{text} (hypotheses %{customdata})<extra></extra>",
                  marker=dict(size=9 if large else 7, color=HIGHLIGHT))
    rows = [f"{i + 1}. {score:.2f}" for i, score in enumerate(scores)]
    steps, font = max(len(h) for h in hypotheses), _font(large)
    column = max(_text_px(label(prefix[-1]), font) for prefix in nodes) + 12  # labels side by side never overlap
    layout = _layout("The beam's best hypotheses as a tree of shared prefixes", 120 + (80 if large else 60) * len(rows), large)
    layout.update(xaxis=dict(title=dict(text="output step"), zeroline=False, showgrid=False, range=[-0.6, steps - 0.4],
                             tickvals=list(range(steps)), ticktext=[str(t + 1) for t in range(steps)]),
                  yaxis=dict(tickvals=list(range(len(rows))), ticktext=rows, title=dict(text="rank, log p / length"),
                             zeroline=False, showgrid=False, range=[len(rows) - 0.5, -0.8]))  # the best on top
    layout["margin"].update(l=40 + _text_px(rows[-1], font) + font, b=30 + 2 * font)  # rank labels and axis titles
    layout["width"] = column * steps + layout["margin"]["l"] + 20
    return _figure([lines, points], layout)
