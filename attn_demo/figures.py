"""Plotly figures from plain arrays. Nothing here calls a model: each figure draws numbers
a Translation already holds, so the page can only show what the model computed.

Every piece of user text is HTML-escaped before it reaches Plotly, whose labels understand a
few tags: a piece such as "<img" is drawn as text, never interpreted. Axes are numeric with
tick labels, so a piece that occurs twice keeps two rows.
"""
import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

ALIGNMENT_COLORSCALE = "Viridis"  # one scale, fixed to [0, 1], so both models' grids compare
VECTOR_COLORSCALE = "RdBu"  # signed vector entries, centred on 0
HIGHLIGHT, MUTED = "#d62728", "#7f9ec9"


def label(piece: str) -> str:
    """A piece as Plotly should print it: markup escaped."""
    return html.escape(piece, quote=False)


def _font(large: bool) -> int:
    return 20 if large else 13


def _base_layout(fig: go.Figure, title: str, height: int, large: bool) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, x=0.01, font=dict(size=_font(large) + 3)), height=height,
        template="plotly_white", paper_bgcolor="white", plot_bgcolor="white",  # readable under light and dark page themes
        font=dict(size=_font(large), color="#222"), margin=dict(l=10, r=10, t=60, b=10),
        hoverlabel=dict(font_size=_font(large)),
    )
    return fig


def alignment_figure(source_tokens, target_tokens, attention, title: str, large: bool = False) -> go.Figure:
    """Heatmap of α (T, S): target pieces down, source pieces across."""
    attention = np.asarray(attention, dtype=np.float32)
    T, S = attention.shape
    src, tgt = [label(p) for p in source_tokens], [label(p) for p in target_tokens]
    pairs = np.array([[[tgt[t], src[s]] for s in range(S)] for t in range(T)], dtype=object)
    fig = go.Figure(go.Heatmap(
        z=attention, x=list(range(S)), y=list(range(T)), zmin=0.0, zmax=1.0, colorscale=ALIGNMENT_COLORSCALE,
        customdata=pairs, hovertemplate="%{customdata[0]} ← %{customdata[1]}: α = %{z:.2f}<extra></extra>",
        colorbar=dict(title=dict(text="α"), thickness=14, len=min(1.0, 0.35 + 0.02 * T)), xgap=1, ygap=1,
    ))
    fig.update_xaxes(tickmode="array", tickvals=list(range(S)), ticktext=src, tickangle=-50, side="top",
                     title_text="source (English)", showgrid=False)
    fig.update_yaxes(tickmode="array", tickvals=list(range(T)), ticktext=tgt, autorange="reversed",
                     title_text="output (French)", showgrid=False)
    cell = 34 if large else 24
    return _base_layout(fig, title, height=max(320, cell * T + 160 + 6 * max(len(p) for p in src)), large=large)


def pca_projection(encoder_states):
    """Mean and the top-2 principal directions of the annotations h_j of one sentence.

    The map h ↦ (h − mean) · basis is affine, so the projection of c_t = Σ_j α_tj h_j is exactly
    Σ_j α_tj P(h_j) (the α sum to 1): the drawn centroid is the real context, not an approximation.
    """
    states = np.asarray(encoder_states, dtype=np.float64)
    mean = states.mean(0)
    _, _, vt = np.linalg.svd(states - mean, full_matrices=False)
    basis = np.zeros((states.shape[1], 2))
    basis[:, :min(2, vt.shape[0])] = vt[:2].T
    return mean, basis


def project(vectors, projection) -> np.ndarray:
    mean, basis = projection
    return (np.asarray(vectors, dtype=np.float64) - mean) @ basis


def step_figure(source_tokens, emitted_piece: str, query, query_name: str, scores, weights,
                encoder_states, context, projection, title: str, large: bool = False) -> go.Figure:
    """How c_t is formed at one output step, top to bottom:
    the query, the scores e_tj, the weights α_tj, the weighted annotations α_tj·h_j with their
    sum c_t, and the annotations in 2-D with c_t as their α-weighted centroid."""
    src = [label(p) for p in source_tokens]
    S, D = len(src), len(context)
    weights = np.asarray(weights, dtype=np.float32)
    best = int(weights.argmax())
    positions = list(range(S))
    fig = make_subplots(rows=5, cols=1, row_heights=[0.06, 0.16, 0.16, 0.3, 0.32], vertical_spacing=0.07,
                        subplot_titles=[f"1. query {query_name} ({len(query)} numbers)",
                                        "2. scores e<sub>tj</sub>", "3. weights α<sub>tj</sub> = softmax(e<sub>t·</sub>)",
                                        "4. α<sub>tj</sub>·h<sub>j</sub> per piece, and their sum c<sub>t</sub>",
                                        f"5. h<sub>j</sub> in 2-D (PCA of this sentence), c<sub>t</sub> ★ emits {label(emitted_piece)}"])
    fig.add_trace(_vector_heatmap(np.asarray(query)[None], [query_name], "query"), row=1, col=1)
    fig.add_trace(go.Bar(x=positions, y=np.asarray(scores, dtype=np.float32), marker_color=MUTED, customdata=src,
                         hovertemplate="e = %{y:.3f} for %{customdata}<extra></extra>"), row=2, col=1)
    colors = [HIGHLIGHT if j == best else MUTED for j in range(S)]
    fig.add_trace(go.Bar(x=positions, y=weights, marker_color=colors, customdata=src, text=[f"{w:.2f}" for w in weights],
                         textposition="outside", cliponaxis=False,
                         hovertemplate="α = %{y:.3f} for %{customdata}<extra></extra>"), row=3, col=1)
    weighted = np.asarray(weights)[:, None] * np.asarray(encoder_states, dtype=np.float32)  # (S, D)
    rows = np.vstack([weighted, np.asarray(context, dtype=np.float32)[None]])
    row_labels = [f"α·h<sub>{j + 1}</sub> {p}" for j, p in enumerate(src)] + ["c<sub>t</sub> = Σ"]
    fig.add_trace(_vector_heatmap(rows, row_labels, "value"), row=4, col=1)
    for trace in _centroid_traces(src, weights, encoder_states, context, projection, best):
        fig.add_trace(trace, row=5, col=1)
    for row in (2, 3):
        fig.update_xaxes(tickmode="array", tickvals=positions, ticktext=src, tickangle=-45, row=row, col=1)
    fig.update_yaxes(range=[0, 1.15], row=3, col=1)
    fig.update_yaxes(autorange="reversed", row=4, col=1)
    fig.update_xaxes(title_text=f"dimension of h<sub>j</sub> (D = {D})", row=4, col=1)
    fig.update_yaxes(showticklabels=False, row=1, col=1)
    fig.update_layout(showlegend=False)
    height = 1150 + (14 if large else 8) * S
    return _base_layout(fig, title, height=height, large=large)


def _vector_heatmap(z, row_labels, name) -> go.Heatmap:
    """Rows of signed vectors; row labels are unique categories, so hover can name the row."""
    z = np.asarray(z, dtype=np.float32)
    bound = float(np.abs(z).max()) or 1.0
    return go.Heatmap(z=z, y=row_labels, zmin=-bound, zmax=bound, zmid=0.0, colorscale=VECTOR_COLORSCALE,
                      showscale=False, hovertemplate="%{y} · dim %{x}: " + name + " = %{z:.3f}<extra></extra>")


def _centroid_traces(src, weights, encoder_states, context, projection, best) -> list:
    """The annotations in 2-D, sized by α, and c_t drawn where the projection puts it."""
    points = project(encoder_states, projection)  # (S, 2)
    centre = project(np.asarray(context)[None], projection)[0]  # (2,)
    weights = np.asarray(weights, dtype=np.float64)
    annotations = go.Scatter(
        x=points[:, 0], y=points[:, 1], mode="markers+text", text=src, textposition="top center", customdata=weights,
        marker=dict(size=10 + 40 * weights, color=[HIGHLIGHT if j == best else MUTED for j in range(len(src))], opacity=0.8),
        hovertemplate="h<sub>j</sub> of %{text}: α = %{customdata:.3f}<extra></extra>")
    context_point = go.Scatter(
        x=[centre[0]], y=[centre[1]], mode="markers+text", text=["c<sub>t</sub>"], textposition="bottom center",
        marker=dict(symbol="star", size=22, color=HIGHLIGHT, line=dict(color="black", width=1)),
        hovertemplate="c<sub>t</sub> = Σ<sub>j</sub> α<sub>tj</sub> h<sub>j</sub><extra></extra>")
    return [annotations, context_point]
