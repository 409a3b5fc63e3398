"""Attention: one interface, six score functions.

Every attention module maps a decoder query and the encoder annotations to

    scores   e_tj   (B, T, S)   one energy per source piece j and output step t
    weights  α_tj   (B, T, S)   α_tj = exp(e_tj) / Σ_k exp(e_tk), padding gets exactly 0
    context  c_t    (B, T, D)   c_t = Σ_j α_tj h_j

The part of the score that depends only on h_j (W_h h_j, W h_j) is computed once per
sentence by `project_keys` and passed back in by the caller; the modules keep no state
between calls, so one model can serve every user at once. The coverage so far,

    coverage C_tj   (B, T, S)   C_tj = Σ_{t'<t} α_t'j, the attention h_j has received before step t

is passed in the same way (the decoder keeps the running sum); only the coverage score reads it.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn

from attn_demo.models.config import ATTENTION_SCORES


class Attention(nn.Module):
    """Base class: subclasses define `project_keys` and `score`."""

    def project_keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """Per-sentence part of the score, from h_j (B, S, D)."""
        raise NotImplementedError

    def score(self, query: torch.Tensor, keys: torch.Tensor, coverage: torch.Tensor | None = None) -> torch.Tensor:
        """Energies e_tj (B, T, S) for queries (B, T, H), projected keys and, for a score that keeps
        count, the coverage C_tj (B, T, S); the other scores do not read it."""
        raise NotImplementedError

    def forward(self, query, keys, annotations, mask, weights=None, coverage=None):
        """query (B, T, H), keys from project_keys, annotations h (B, S, D), mask (B, S) True = real piece.
        weights (B, T, S), when given, replace the softmax: c_t = Σ_j α_tj h_j from weights set by hand
        (the page's "move the attention"), while e_tj is still the model's. coverage C_tj (B, T, S)."""
        scores = self.score(query, keys, coverage)  # (B, T, S)
        if weights is None:
            masked = scores.masked_fill(~mask[:, None, :], float("-inf"))
            weights = torch.softmax(masked, dim=-1)  # (B, T, S)
        context = weights @ annotations  # (B, T, D)
        return scores, weights, context


class BahdanauAttention(Attention):
    """Additive attention (Bahdanau et al. 2015, eq. 6 and appendix A.1.2):

        e_tj = vᵀ tanh(W_h h_j + W_s s_{t−1})

    The query is the *previous* decoder state s_{t−1}; c_t then feeds the GRU that makes s_t.
    """

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int):
        super().__init__()
        self.W_h = nn.Linear(annotation_size, hidden_size)
        self.W_s = nn.Linear(query_size, hidden_size, bias=False)
        self.v = nn.Linear(hidden_size, 1, bias=False)

    def project_keys(self, annotations):
        return self.W_h(annotations)  # (B, S, A)

    def score(self, query, keys, coverage=None):
        hidden = torch.tanh(keys[:, None, :, :] + self.W_s(query)[:, :, None, :])  # (B, T, S, A)
        return self.v(hidden).squeeze(-1)  # (B, T, S)


class CoverageAttention(BahdanauAttention):
    """Additive attention that keeps count (Tu et al. 2016's linguistic coverage without fertility,
    in the form of See et al. 2017, eq. 11):

        e_tj = vᵀ tanh(W_h h_j + W_s s_{t−1} + w_c C_tj),   C_tj = Σ_{t'<t} α_t'j

    C_tj is how much attention h_j has received before step t, so the score can tell a piece
    already translated from one still waiting. w_c starts at zero: a model warm-started from
    Bahdanau's weights starts exactly where that model is and learns only what counting adds.
    """

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int):
        super().__init__(query_size, annotation_size, hidden_size)
        self.w_c = nn.Linear(1, hidden_size, bias=False)
        nn.init.zeros_(self.w_c.weight)

    def score(self, query, keys, coverage=None):
        if coverage is None:  # the first step: nothing attended yet
            coverage = keys.new_zeros(keys.size(0), query.size(1), keys.size(1))  # (B, T, S)
        counted = self.w_c(coverage[..., None])  # (B, T, S, A)
        hidden = torch.tanh(keys[:, None, :, :] + self.W_s(query)[:, :, None, :] + counted)  # (B, T, S, A)
        return self.v(hidden).squeeze(-1)  # (B, T, S)


class LuongConcatAttention(BahdanauAttention):
    """Luong "concat" score (Luong et al. 2015, eq. 8):

        e_tj = vᵀ tanh(W [s_t; h_j]) = vᵀ tanh(W_h h_j + W_s s_t)

    The same arithmetic as Bahdanau's, but the query is the *current* state s_t.
    """


class LuongDotAttention(Attention):
    """Luong "dot" score (Luong et al. 2015, eq. 8):  e_tj = s_tᵀ h_j   (needs H = D)."""

    def project_keys(self, annotations):
        return annotations  # (B, S, D)

    def score(self, query, keys, coverage=None):
        return query @ keys.transpose(1, 2)  # (B, T, S)


class LuongGeneralAttention(LuongDotAttention):
    """Luong "general" score (Luong et al. 2015, eq. 8):  e_tj = s_tᵀ W h_j.

    W h_j is computed once per sentence, so each step costs one batched dot product.
    """

    def __init__(self, query_size: int, annotation_size: int):
        super().__init__()
        self.W = nn.Linear(annotation_size, query_size, bias=False)

    def project_keys(self, annotations):
        return self.W(annotations)  # (B, S, H)


class LuongLowRankAttention(LuongDotAttention):
    """Reduced-rank multiplicative score (the general score with W = UᵀV of rank R):

        e_tj = (U s_t)ᵀ (V h_j) = s_tᵀ (Uᵀ V) h_j,   U: R × H,  V: R × D

    R(H + D) parameters instead of the H·D of W. V h_j is computed once per sentence, so a step
    costs the query projection U s_t and one batched dot product of size R.
    """

    def __init__(self, query_size: int, annotation_size: int, rank: int):
        super().__init__()
        self.U = nn.Linear(query_size, rank, bias=False)
        self.V = nn.Linear(annotation_size, rank, bias=False)

    def project_keys(self, annotations):
        return self.V(annotations)  # (B, S, R)

    def score(self, query, keys, coverage=None):
        return self.U(query) @ keys.transpose(1, 2)  # (B, T, R) @ (B, R, S) → (B, T, S)


def build_attention(name: str, query_size: int, annotation_size: int, hidden_size: int, rank: int) -> Attention:
    """The attention module for a score name; unknown names (and "none", which has no module) are
    refused with the valid ones. hidden_size is A (additive and concat), rank is R (low-rank)."""
    if name == "bahdanau":
        return BahdanauAttention(query_size, annotation_size, hidden_size)
    if name == "bahdanau-coverage":
        return CoverageAttention(query_size, annotation_size, hidden_size)
    if name == "luong-concat":
        return LuongConcatAttention(query_size, annotation_size, hidden_size)
    if name == "luong-general":
        return LuongGeneralAttention(query_size, annotation_size)
    if name == "luong-dot":
        return LuongDotAttention()
    if name == "luong-lowrank":
        return LuongLowRankAttention(query_size, annotation_size, rank)
    raise ValueError(f"unknown attention {name!r}; valid: {', '.join(ATTENTION_SCORES)}")


@dataclass(frozen=True)
class AttentionKind:
    """What the page, the model cards, the quiz and the step view say about one attention type.
    Text is Markdown with $…$ LaTeX, in the symbols the page shows (e_tj, α_tj, c_t, h_j, s_t, C_tj)."""

    title: str  # "Bahdanau (additive)"
    score: str | None  # the score e_tj in LaTeX; None: no attention
    source: str  # where the score comes from
    query: str | None  # the decoder state compared with each h_j, in LaTeX: "s_{t-1}", "s_t"; None: none
    context: str  # where c_t comes from and where it goes, in one or two sentences
    key_size: str | None  # the ModelConfig field (or property) giving the size of project_keys(h_j)
    # what reads c_t: "gru", the GRU that makes s_t (so attention runs first, on s_{t-1}; the output layer
    # reads c_t too), "output", the output layer alone (the GRU runs first and s_t is the query), or
    # "residual", a Transformer layer's residual stream x_t (its feed-forward layer and the layers above).
    # The network view (ui/network_view.js) draws each model's path from this and from `score`
    context_into: str
    counts: bool = False  # whether the score reads the coverage C_tj (the network view draws C_{t-1} into it)
    heads: str | None = None  # the config field giving how many heads attend at once; None: one
    combine: str = r"c_t = \sum_j \alpha_{tj} h_j"  # what the weights α_tj weigh, in LaTeX
    # the kind this one grows from and, in Markdown, what changed (the page's bridge under the equations)
    grows_from: tuple[str, str] | None = None

    def keys(self, config) -> int | None:
        """The size of the keys computed once per sentence from the h_j: (B, S, this)."""
        return None if self.key_size is None else getattr(config, self.key_size)


_BAHDANAU_ORDER = (r"Attention runs first, with the **previous** state $s_{t-1}$ as query; the GRU then reads $c_t$ to "
                   r"make the new state: $s_t = \mathrm{GRU}([E y_{t-1}; c_t], s_{t-1})$.")
_LUONG_ORDER = (r"The GRU runs first, $s_t = \mathrm{GRU}(E y_{t-1}, s_{t-1})$; attention then uses the **current** state "
                r"$s_t$ as query, and $c_t$ feeds the output: $\tilde h_t = \tanh(W_c [c_t; s_t])$ (no input feeding).")
KINDS = {
    "bahdanau": AttentionKind("Bahdanau (additive)", r"e_{tj} = v^\top \tanh(W_h h_j + W_s s_{t-1})",
                              "Bahdanau et al. 2015, eq. 6", "s_{t-1}", _BAHDANAU_ORDER, "attn_hidden_size", "gru"),
    "bahdanau-coverage": AttentionKind(
        "Bahdanau + coverage", r"e_{tj} = v^\top \tanh(W_h h_j + W_s s_{t-1} + w_c C_{tj})",
        "Tu et al. 2016; See et al. 2017, eq. 11", "s_{t-1}",
        _BAHDANAU_ORDER + r" The score also reads the coverage $C_{tj} = \sum_{t'<t} \alpha_{t'j}$, the attention each "
        r"$h_j$ has received so far, which is updated after every step: $C_{t+1} = C_t + \alpha_t$.",
        "attn_hidden_size", "gru", counts=True),
    "luong-general": AttentionKind("Luong (general)", r"e_{tj} = s_t^\top W h_j", "Luong et al. 2015, eq. 8", "s_t",
                                   _LUONG_ORDER, "dec_hidden_size", "output"),
    "luong-dot": AttentionKind("Luong (dot)", r"e_{tj} = s_t^\top h_j", "Luong et al. 2015, eq. 8", "s_t",
                               _LUONG_ORDER + " The keys are the $h_j$ themselves, so $H = D$.", "annotation_size", "output"),
    "luong-lowrank": AttentionKind("Luong (low-rank)", r"e_{tj} = (U s_t)^\top (V h_j)",
                                   "the general score with W = UᵀV of rank R", "s_t", _LUONG_ORDER, "attn_rank", "output"),
    "luong-concat": AttentionKind("Luong (concat)", r"e_{tj} = v^\top \tanh(W [s_t; h_j])", "Luong et al. 2015, eq. 8",
                                  "s_t", _LUONG_ORDER, "attn_hidden_size", "output"),
    "none": AttentionKind(
        "No attention (baseline)", None, "Cho et al. 2014, the RNNencdec baseline of Bahdanau et al. 2015", None,
        r"No scores, no weights: one fixed vector $c = [\overrightarrow{h}_S; \overleftarrow{h}_1]$, the last state of "
        r"each encoder direction, is read at every step, $s_t = \mathrm{GRU}([E y_{t-1}; c], s_{t-1})$. The whole "
        r"sentence must fit in those D numbers.", None, "gru"),
    "transformer": AttentionKind(
        "Transformer (scaled dot-product, multi-head)", r"e_{tj} = q_t \cdot k_j / \sqrt{d_k}",
        "Vaswani et al. 2017, eq. 1", "q_t",
        r"Every decoder layer attends to the $h_j$ in $H$ heads at once: each head projects its own query "
        r"$q_t = W_Q x_t$, keys $k_j = W_K h_j$ and values $v_j = W_V h_j$ and forms $o_t = \sum_j \alpha_{tj} v_j$; "
        r"the heads' outputs, concatenated, pass $W_O$ into the decoder's residual stream $x_t$, then a feed-forward "
        r"layer and the next layer. Attention works inside each side too: the encoder's self-attention lets every "
        r"$h_j$ read the whole sentence, and the decoder's masked self-attention lets $x_t$ read $y_{<t}$, where a GRU "
        r"carries a state instead.", "head_size", "residual", heads="heads",
        combine=r"o_t = \sum_j \alpha_{tj} v_j \qquad \mathrm{MultiHead}_t = W_O [o_t^1; \dots; o_t^H] + b_O",
        grows_from=("luong-dot", r"Written out, the score is $e_{tj} = (W_Q x_t)^\top (W_K h_j) / \sqrt{d_k}$: Luong's "
                    r"dot product, with four changes. **Projections**: the query and the keys are learned projections "
                    r"of $x_t$ and $h_j$, and what α weighs is a third one, $v_j = W_V h_j$. **Scaling**: the dot product "
                    r"of two vectors of $d_k$ entries of variance 1 has variance $d_k$; dividing by $\sqrt{d_k}$ keeps "
                    r"the softmax from saturating into one-hot α with vanishing gradients (Vaswani et al. 2017, "
                    r"§3.2.1). **Several heads**: $H$ heads attend at once, each in its own $d_k$-sized projection, and "
                    r"$W_O$ mixes what they read. **Attention inside each side**: the encoder and the decoder attend to "
                    r"themselves too (self-attention), where an RNN carries a state from piece to piece.")),
}
