"""Every decoder step of one translation, as the numbers the page's step view draws.

The server sends this once per translation; the browser (attn_demo/ui/step_views.js) draws any
step from it in a few milliseconds, without asking the server again. Only what the model
computed is sent, as float32 like the model holds it: the query, e_tj, α_tj and c_t of every
step, the annotations h_j once, and their 2-D projection. The page itself multiplies α_tj·h_j for
panel 4 (S×D numbers a step that it would otherwise receive), and shows the model's own c_t
beside those rows, never a sum it made up.

Pieces are sent as plain strings: step_views.js writes them with textContent, never as markup.
"""
import base64
import re

import numpy as np
from plotly.colors import diverging, make_colorscale

from attn_demo.decoding.grids import grid_name, pick_key
from attn_demo.models.attention import KINDS
from attn_demo.views.titles import grid_title

# signed vector entries, centred on 0 (red < 0 < blue); ColorBrewer's RdBu, whose middle is white
# (plotly.js's own "RdBu" is grey there): 0 should look like nothing
VECTOR_COLORSCALE = make_colorscale(diverging.RdBu)
# What the step view says where a step's most-attended piece is the end-of-sentence piece: what is
# seen, not a mechanism anyone has shown
EOS_NOTE = ("attention often rests on </s> when the piece being written depends on no single English piece "
            "(a first article, punctuation): an observation across many sentences, not a rule")

ACTIVATION_OPENINGS = {"relu": "max(0, ", "gelu": "GELU("}  # φ( of config.ACTIVATIONS, as the network view writes it

# What a model without heads (every GRU model) shows where a Transformer's heads and self-attention are drawn
NO_HEADS = "One score, one grid: this model attends with a single score, so it has no heads or layers to pick."
NO_SELF_ATTENTION = ("No self-attention: its encoder's GRUs read the sentence piece by piece, and its decoder's GRU "
                     "carries a state from step to step; that recurrence carries what a Transformer's self-attention reads.")


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


def step_payload(title: str, result, projection, forced: tuple[int, ...] = ()) -> dict:
    """One model's steps of a Translation for step_views.js: T output steps over S source pieces,
    queries of size H, annotations of size D. JSON-ready, arrays as typed arrays {dtype, bdata,
    shape}. Without attention there is no query, no e and no α (null), and every c_t is the one c.
    A Transformer has no single query and e: its every layer and head is in "heads" (heads_payload), and
    its h_j are not drawn in 2-D (projection None), as what its heads weigh are the v_j, not the h_j.
    forced: the steps (from 1) whose α a user set by hand (Translator.translate's force_attention),
    where α is not softmax(e) and the page must not say it is."""
    kind = KINDS[result.attention_type]
    return {
        "title": title, "source": list(result.source_tokens), "target": list(result.target_tokens),
        "forced": list(forced),
        "eos_note": EOS_NOTE if result.attention is not None else None,  # the source's last piece is </s>
        "query": symbol_parts(result.query_symbol),  # ["s", "t−1"] or ["s", "t"], or None
        # what reads c_t, "gru", "output" or "residual": the network view's order and arrows (a key named "path"
        # would make gradio_client read the dict as a file)
        "context_into": kind.context_into,
        "counts": kind.counts,  # whether the score reads the coverage C_tj (the network view draws it)
        "score": latex_parts(kind.score),  # e_tj's equation as text parts, or None
        "queries": typed(result.queries),  # (T, H)
        "scores": typed(result.scores),  # (T, S): e_tj
        "weights": typed(result.attention),  # (T, S): α_tj
        "contexts": typed(result.contexts),  # (T, D): the model's c_t
        "annotations": typed(result.encoder_states),  # (S, D): h_j
        "points": None if projection is None else typed(project(result.encoder_states, projection)),  # (S, 2): h_j in 2-D
        "centres": None if projection is None else typed(project(result.contexts, projection)),  # (T, 2): Σ_j α_tj P(h_j)
        "heads": None if result.heads is None else heads_payload(result.heads, title),
        "no_heads": NO_HEADS if result.heads is None else None,  # what the heads and self-attention views say instead
        "no_self_attention": NO_SELF_ATTENTION if result.heads is None else None,
    }


def heads_payload(heads, title: str) -> dict:
    """A Transformer's every decoder layer and head (translator.Heads) for the heads, self-attention and step
    views: L layers of H heads of size d_k, L_enc encoder layers; W_O itself stays on the server (D × D a layer),
    each layer's output W_O [o_t^1; …; o_t^H] + b_O is sent as the model computed it. Its grids are listed as the
    page lists them, each with its key (grids.PICK_KEY: what the page's pick slot takes), its name and its
    title by piece (title: the model's)."""
    L, H = heads.cross.shape[:2]
    grids = [{"key": pick_key(l, h), "layer": l, "head": h, "name": grid_name(l, h),
              "title": grid_title(title, "pieces", grid_name(l, h))} for l in range(L) for h in (None, *range(H))]
    return {
        "shown": pick_key(*heads.shown),  # the grid Translation.attention is (config.json's choice)
        "activation": ACTIVATION_OPENINGS[heads.activation],  # how the network view writes φ(…) of the feed-forward
        "grids": grids,
        "off": [list(pair) for pair in sorted(heads.off)],  # (layer, head) turned off: outputs zero, α still shown
        "cross": typed(heads.cross),  # (L, H, T, S): α_tj of each head
        "scores": typed(heads.cross_scores),  # (L, H, T, S): e_tj = q_t · k_j / √d_k
        "queries": typed(heads.queries),  # (L, H, T, d_k)
        "keys": typed(heads.keys),  # (L, H, S, d_k)
        "values": typed(heads.values),  # (L, H, S, d_k)
        "outputs": typed(heads.outputs),  # (L, H, T, d_k): o_t = Σ_j α_tj v_j
        "attended": typed(heads.attended),  # (L, T, D): W_O [o_t^1; …; o_t^H] + b_O
        "encoder": typed(heads.encoder),  # (L_enc, H, S, S): the encoder's self-attention
        "decoder": typed(heads.decoder),  # (L, H, T, T): the decoder's masked self-attention
    }


def symbol_parts(latex: str | None) -> list[str] | None:
    """A subscripted LaTeX symbol as the page writes it, base and subscript: "s_{t-1}" → ["s", "t−1"]."""
    return None if latex is None else latex_parts(latex)[0]


def latex_parts(latex: str | None) -> list | None:
    r"""The few LaTeX commands of KINDS' equations as the page writes them, plain strings and [base,
    subscript] pairs (step_views.js's write): r"s_t^\top h_j" → [["s", "t"], "ᵀ ", ["h", "j"]]."""
    if latex is None:
        return None
    text = latex.replace(r"^\top", "ᵀ").replace("\\", "").replace("-", "−")  # \tanh → tanh
    # split around each subscripted symbol: [text, base, {subscript} or one-character subscript, text, …]
    pieces = re.split(r"(\w)_(\{[^}]*\}|\w)", text)
    parts = [pieces[0]] if pieces[0] else []
    for k in range(1, len(pieces), 3):
        parts.append([pieces[k], pieces[k + 1].strip("{}")])
        if pieces[k + 2]:
            parts.append(pieces[k + 2])
    return parts


def typed(array) -> dict | None:
    """A float32 array as {dtype, bdata, shape} (the form plotly.js reads too): 5.3 bytes a number
    instead of the 10–20 of a number written out; None (a model without attention) stays None."""
    if array is None:
        return None
    array = np.ascontiguousarray(array, dtype="<f4")
    return {"dtype": "f4", "bdata": base64.b64encode(array.tobytes()).decode("ascii"),
            "shape": ", ".join(map(str, array.shape))}
