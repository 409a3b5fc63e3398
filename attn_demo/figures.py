"""Plotly figures from plain arrays. Nothing here calls a model: each figure draws numbers
a Translation already holds, so the page can only show what the model computed.

Every piece of user text is HTML-escaped before it reaches Plotly, whose labels understand a
few tags: a piece such as "<img" is drawn as text, never interpreted. Axes are numeric with
tick labels, so a piece that occurs twice keeps its own row or column.

Figures are written as plain dicts and wrapped without Plotly's per-property validation
(`_validate=False`): validation cost 10–60 ms a figure, more than everything else a request
does. tests/test_figures.py re-validates every figure, so a typo still fails there.
"""
import base64
import html

import numpy as np
import plotly.graph_objects as go
from plotly.colors import diverging, make_colorscale, sequential

# Colour scales are spelled out: unvalidated figures would hand a name to plotly.js, whose "RdBu"
# has a grey middle, where ColorBrewer's (this one) is white: 0 should look like nothing.
ALIGNMENT_COLORSCALE = make_colorscale(sequential.Viridis)  # fixed to [0, 1] so both models' grids compare
VECTOR_COLORSCALE = make_colorscale(diverging.RdBu)  # signed vector entries, centred on 0 (red < 0 < blue)
HIGHLIGHT, MUTED = "#d62728", "#7f9ec9"
# step figure panels, top to bottom: relative heights and the gap between panels
PANEL_HEIGHTS = (0.06, 0.16, 0.16, 0.30, 0.32)
PANEL_GAP = 0.07


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
    return dict(tickmode="array", tickvals=list(range(len(labels))), ticktext=list(labels), showgrid=False,
                automargin=True, **extra)


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
    label_room = (10 if large else 7) * max(len(p) for p in source_tokens)  # the x ticks stand at the top, slanted
    layout = _layout(title, height=0, large=large, top=70 + label_room)
    layout.update(xaxis=_ticks(src, tickangle=-50, side="top"),
                  yaxis=_ticks(tgt, autorange="reversed", title=dict(text="output (French)")))
    cell = 34 if large else 24
    layout["height"] = max(320, cell * T + 100 + label_room)
    return _figure([heatmap], layout)


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
    label_room = (10 if large else 7) * max(len(w) for w in english)
    layout = _layout(title, height=0, large=large, top=70 + label_room)
    layout.update(xaxis=_ticks(en, tickangle=-50, side="top"), shapes=shapes,
                  yaxis=_ticks(fr, autorange="reversed", title=dict(text="French (human translation)")))
    layout["height"] = max(320, (34 if large else 24) * F + 100 + label_room)
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


def pca_projection(encoder_states):
    """Mean and the top-2 principal directions of the annotations h_j of one sentence.

    The map h ↦ (h − mean) · basis is affine, so the projection of c_t = Σ_j α_tj h_j is exactly
    Σ_j α_tj P(h_j) (the α sum to 1): the drawn centroid is the real context, not an approximation.
    The directions come from the small S×S Gram matrix (X Xᵀ = U Σ² Uᵀ, so Xᵀ u_k / σ_k is the
    k-th principal direction): a few times cheaper than an SVD of the S×D matrix, which matters
    when a whole class translates at once.
    """
    states = np.asarray(encoder_states, dtype=np.float64)
    mean = states.mean(0)
    centred = states - mean  # (S, D)
    eigenvalues, eigenvectors = np.linalg.eigh(centred @ centred.T)  # ascending, (S,), (S, S)
    basis = np.zeros((states.shape[1], 2))
    for k in range(min(2, len(eigenvalues))):
        variance = eigenvalues[-1 - k]
        if variance > 1e-12 * max(eigenvalues[-1], 1.0):  # a direction with no spread stays zero
            basis[:, k] = centred.T @ eigenvectors[:, -1 - k] / np.sqrt(variance)
    return mean, basis


def project(vectors, projection) -> np.ndarray:
    mean, basis = projection
    return (np.asarray(vectors, dtype=np.float64) - mean) @ basis


def _panel_domains():
    """Vertical [bottom, top] of each panel, first panel at the top."""
    scale = 1 - PANEL_GAP * (len(PANEL_HEIGHTS) - 1)
    domains, top = [], 1.0
    for height in PANEL_HEIGHTS:
        domains.append([max(0.0, top - height * scale), top])
        top -= height * scale + PANEL_GAP
    return domains


def step_template(source_tokens, query_name: str, query_size: int, encoder_states, projection, large: bool = False) -> dict:
    """What every step figure of one translation shares, in five panels from top to bottom: the
    query, the scores e_tj, the weights α_tj, the weighted annotations α_tj·h_j with their sum c_t,
    and the annotations in 2-D with c_t as their α-weighted centroid. step_values holds what
    changes from step to step; merge_step joins the two."""
    src = [label(p) for p in source_tokens]
    points = project(encoder_states, projection).astype(np.float32)  # (S, 2)
    S, D = np.asarray(encoder_states).shape
    row_labels = [f"α·h<sub>{j + 1}</sub> {p}" for j, p in enumerate(src)] + ["c<sub>t</sub> = Σ"]
    # each panel names its tensor's shape as an implementer prints it (batch of B = 1 sentence)
    panel_titles = [
        f"1. query {query_name}: (B, 1, H) = (1, 1, {query_size})",
        f"2. scores e<sub>tj</sub>: (B, 1, S) = (1, 1, {S})",
        f"3. weights α<sub>tj</sub> = softmax(e<sub>t·</sub>): (B, 1, S) = (1, 1, {S})",
        f"4. α<sub>tj</sub>·h<sub>j</sub>: (S, D) = ({S}, {D}), and their sum c<sub>t</sub>: (B, 1, D) = (1, 1, {D})",
        "5. h<sub>j</sub> in 2-D (PCA of this sentence) and c<sub>t</sub> ★",
    ]
    data = [
        _vector_heatmap([query_name], "query", axes=1),
        dict(type="bar", x=list(range(len(src))), marker=dict(color=MUTED), customdata=src,
             hovertemplate="e = %{y:.3f} for %{customdata}<extra></extra>", xaxis="x2", yaxis="y2"),
        dict(type="bar", x=list(range(len(src))), customdata=src, textposition="outside", cliponaxis=False,
             hovertemplate="α = %{y:.3f} for %{customdata}<extra></extra>", xaxis="x3", yaxis="y3"),
        _vector_heatmap(row_labels, "value", axes=4),
        dict(type="scatter", x=points[:, 0], y=points[:, 1], mode="markers+text", text=src, textposition="top center",
             hovertemplate="h<sub>j</sub> of %{text}: α = %{customdata:.3f}<extra></extra>", xaxis="x5", yaxis="y5"),
        dict(type="scatter", mode="markers+text", textposition="bottom center",
             marker=dict(symbol="star", size=22, color=HIGHLIGHT, line=dict(color="black", width=1)),
             hovertemplate="c<sub>t</sub> = Σ<sub>j</sub> α<sub>tj</sub> h<sub>j</sub><extra></extra>", xaxis="x5", yaxis="y5"),
    ]
    layout = _layout("", height=(1450 if large else 1150) + (14 if large else 8) * len(src), large=large)
    layout["annotations"] = []
    for i, (domain, panel_title) in enumerate(zip(_panel_domains(), panel_titles), start=1):
        suffix = "" if i == 1 else str(i)
        layout[f"xaxis{suffix}"] = dict(domain=[0, 1], anchor=f"y{suffix}")
        layout[f"yaxis{suffix}"] = dict(domain=domain, anchor=f"x{suffix}")
        layout["annotations"].append(dict(text=panel_title, x=0.5, y=domain[1], xref="paper", yref="paper",
                                          xanchor="center", yanchor="bottom", showarrow=False,
                                          font=dict(size=_font(large) + 1)))
    layout["yaxis"].update(showticklabels=False)
    for i in (2, 3):
        layout[f"xaxis{i}"].update(_ticks(src, tickangle=-45), automargin=False)
    layout["margin"].update(l=_row_label_room(source_tokens, large), b=40 if large else 30)
    layout["yaxis3"].update(range=[0, 1.15])
    layout["yaxis4"].update(autorange="reversed")
    return dict(data=data, layout=layout)


def _row_label_room(source_tokens, large: bool) -> int:
    """Left margin for panel 4's row labels ("α·h12 ▁piece"). Computed, not left to Plotly's
    automargin, which redraws the figure until the labels fit: half of a step figure's drawing time."""
    characters = len(f"α·h{len(source_tokens)} ") + max(len(p) for p in source_tokens)
    return 16 + int(0.52 * _font(large) * characters)


def step_values(emitted_piece: str, query, scores, weights, context, projection, title: str, large: bool = False) -> dict:
    """The numbers of one output step, trace by trace in step_template's order, and the figure's
    title. weights and context are also kept on their own: panel 4 is computed from them."""
    weights = np.asarray(weights, dtype=np.float32)
    query = np.asarray(query, dtype=np.float32)
    best = int(weights.argmax())
    colors = [HIGHLIGHT if j == best else MUTED for j in range(len(weights))]
    centre = project(np.asarray(context, dtype=np.float32)[None], projection)[0]  # (2,)
    data = [
        dict(z=query[None], **_symmetric_range(query)),
        dict(y=np.asarray(scores, dtype=np.float32)),
        dict(y=weights, marker=dict(color=colors), text=[f"{w:.2f}" for w in weights]),
        {},  # panel 4: weighted_annotations
        dict(customdata=weights, marker=dict(size=10 + 40 * weights, color=colors, opacity=0.8)),
        dict(x=[float(centre[0])], y=[float(centre[1])], text=[f"c<sub>t</sub> → {label(emitted_piece)}"]),
    ]
    return dict(weights=weights, context=np.asarray(context, dtype=np.float32), data=data,
                layout=dict(title=_layout(title, 0, large)["title"]))


def weighted_annotations(weights, encoder_states, context) -> dict:
    """Panel 4: the rows α_tj·h_j, then c_t (the model's own, which is their sum), on a colour
    scale centred on 0. The page computes these S×D numbers itself from α_tj and h_j
    (step_views.js) rather than receiving them for every step."""
    weighted = np.asarray(weights, dtype=np.float32)[:, None] * np.asarray(encoder_states, dtype=np.float32)  # (S, D)
    z = np.vstack([weighted, np.asarray(context, dtype=np.float32)[None]])  # (S + 1, D)
    return dict(z=z, **_symmetric_range(z))


def merge_step(template: dict, values: dict, encoder_states) -> dict:
    """One step figure as a dict: each trace and the layout of the template, updated by the
    step's values. step_views.js does exactly this in the browser."""
    data = [{**trace, **patch} for trace, patch in zip(template["data"], values["data"])]
    data[3].update(weighted_annotations(values["weights"], encoder_states, values["context"]))
    return dict(data=data, layout={**template["layout"], **values["layout"]})


def step_figure(source_tokens, emitted_piece: str, query, query_name: str, scores, weights,
                encoder_states, context, projection, title: str, large: bool = False) -> go.Figure:
    """How c_t is formed at one output step (see step_template for the five panels)."""
    template = step_template(source_tokens, query_name, len(query), encoder_states, projection, large)
    values = step_values(emitted_piece, query, scores, weights, context, projection, title, large)
    figure = merge_step(template, values, encoder_states)
    return _figure(figure["data"], figure["layout"])


def step_views(source_tokens, target_tokens, queries, query_name: str, scores, attention, encoder_states, contexts,
               projection, titles: list[str], large: bool = False) -> dict:
    """Every output step of one translation, for the page to draw any step without asking the
    server: the template once, h_j once, and each step's values (titles[t] is step t's title).
    JSON-ready, with arrays as the base64 typed arrays plotly.js reads."""
    template = step_template(source_tokens, query_name, queries.shape[1], encoder_states, projection, large)
    steps = [step_values(target_tokens[t], queries[t], scores[t], attention[t], contexts[t], projection, titles[t], large)
             for t in range(len(target_tokens))]
    return _typed(dict(template=template, annotations=np.asarray(encoder_states, dtype=np.float32), steps=steps))


def _typed(value):
    """A copy of value where every array is a plotly.js typed array {dtype, bdata, shape}: float32,
    as the model computed it, in 5.3 bytes a number instead of the 10–20 of a number written out."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value, dtype="<f4")
        return dict(dtype="f4", bdata=base64.b64encode(array.tobytes()).decode("ascii"),
                    shape=", ".join(map(str, array.shape)))
    return value


def _symmetric_range(z) -> dict:
    """Colour range for signed numbers, centred on 0 so 0 looks like nothing."""
    bound = float(np.abs(z).max()) or 1.0
    return dict(zmin=-bound, zmax=bound)


def _vector_heatmap(row_labels, name, axes: int) -> dict:
    """Rows of signed vectors; row labels are unique categories, so hover can name the row."""
    return dict(type="heatmap", y=row_labels, zmid=0.0, colorscale=VECTOR_COLORSCALE, showscale=False,
                hovertemplate="%{y} · dim %{x}: " + name + " = %{z:.3f}<extra></extra>",
                xaxis="x" if axes == 1 else f"x{axes}", yaxis="y" if axes == 1 else f"y{axes}")
