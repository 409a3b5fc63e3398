"""Transformer encoder–decoder (Vaswani et al. 2017): scaled dot-product, multi-head attention inside the
encoder, inside the decoder and between them, with the entry points of the GRU models (attn_demo.models.rnn).

Letters of the shape comments, besides the package's B, S, T, V: D = d_model (every sublayer's size and
the annotations h_j), H heads of d_k = D / H each, L decoder layers, F the feed-forward size.

What one sentence needs is passed in, never kept on the modules (one model serves every user at once):
the cross-attention keys and values of every decoder layer, computed once per sentence (Memory.keys), and
the decoder's cache of its own keys and values so far (the decoder state, which grows by one position
a step). `trace` runs a whole target at once and returns every decoder layer's and head's numbers.
Its modules are called as their forward alone (models.plain): a decoding step makes some fifty calls.
"""
import math
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from attn_demo.models.attention import KINDS
from attn_demo.models.config import TransformerConfig
from attn_demo.models.plain import Embedding, LayerNorm, Plain, PlainDropout
from attn_demo.models.rnn import Memory, Step, no_coverage


# FBGEMM's product of float32 inputs with float16 weights, widened in its registers and summed in float32: PyTorch
# builds it on x86 CPUs with AVX2 and marks this entry to it deprecated; where it is gone, float32 weights stand in.
FLOAT16_WEIGHTS = hasattr(torch, "fbgemm_linear_fp16_weight") and "fbgemm" in torch.backends.quantized.supported_engines
FLOAT16_ROWS = 32  # up to this many rows a product is bound by reading W; FBGEMM's runs on one thread, torch's on all
warnings.filterwarnings("ignore", message=r"fbgemm_\w*fp16\w* is deprecated")


def product(owner: nn.Module, x, slot: str = "") -> torch.Tensor:
    """[W_1; …; W_n] x + [b_1; …; b_n] for the (W, b) pairs of owner.affine(slot) that read the same x (W_Q, W_K
    and W_V of a self-attention) in one product, each one's outputs after the one before's.

    A decoding step of one sentence is bound by reading the weights, not by multiplying with them: every layer's W
    is read from memory for one vector, and each product costs a call. Without gradients, the stacked W is kept on
    `owner` (under `slot`) until a weight changes (an optimizer step, a load); on a CPU with FBGEMM, where float16
    holds W exactly (a checkpoint's weights are stored so: attn_demo.checkpoints.folder), it is kept in float16 too
    and a product of a few rows (a step of a sentence, a beam, a class's batch) is made from it: the same products to
    float32 rounding (the sums' order), from half the bytes; a greedy translation a third sooner (CONTRIBUTING.md).
    Products that need gradients (training, attribution) stack the weights themselves."""
    if torch.is_grad_enabled():
        weights, biases = zip(*owner.affine(slot))
        return F.linear(x, _stacked(weights), _stacked(biases))
    kept = owner.__dict__.get("_kept" + slot)
    if kept is None or not kept.current():
        kept = _keep(owner, owner.affine(slot), slot)
    if kept.packed is not None and x.numel() <= FLOAT16_ROWS * x.size(-1):
        return torch.fbgemm_linear_fp16_weight(x, kept.packed, kept.bias)
    return F.linear(x, kept.weight, kept.bias)


class Kept(NamedTuple):
    """A stack of weights kept for products without gradients: the tensors it was made from (W_1, b_1, …), where each
    was registered (its module's table of parameters and its name there) and what they were then (their data pointers
    and counts of changes), W and b stacked, and W packed for FBGEMM's float16 product (None where float16 does not hold
    it exactly). It is checked in those tables, not by looking the weights up on the modules again: nn.Module's lookup
    of an attribute costs about a microsecond, and a step's products made some sixty (CONTRIBUTING.md)."""

    sources: tuple
    places: tuple
    version: list
    weight: torch.Tensor
    bias: torch.Tensor
    packed: torch.Tensor | None

    def current(self) -> bool:
        """Whether every tensor is still the one registered where it was, where it was and unchanged."""
        return (all(table.get(name) is t for (table, name), t in zip(self.places, self.sources))
                and [(t.data_ptr(), t._version) for t in self.sources] == self.version)


def pairs_of(linears) -> tuple:
    """The (W, b) pairs of these Linears, as an owner's affine gives them to product."""
    return tuple((linear.weight, linear.bias) for linear in linears)


def _stacked(tensors: tuple) -> torch.Tensor:
    """The tensors one after the other (dim 0); a single one as it is, not copied."""
    return torch.cat(tensors) if len(tensors) > 1 else tensors[0]


def _keep(owner: nn.Module, pairs: tuple, slot: str) -> Kept:
    """Kept on owner for the next products: one tuple swapped whole, so that requests in other threads see the old
    one or the new one. Weights made in inference mode keep no count of their changes: their stack is made anew for
    each product, in float32."""
    sources = tuple(t for pair in pairs for t in pair)
    with torch.no_grad():
        weight, bias = (_stacked(tensors).detach() for tensors in zip(*pairs))
        if sources[0].is_inference():
            return Kept(sources, (), [], weight, bias, None)
        exact = weight.dtype == torch.float32 and torch.equal(weight.half().float(), weight)
        packed = torch.fbgemm_pack_gemm_matrix_fp16(weight) if FLOAT16_WEIGHTS and weight.is_cpu and exact else None
    registered = {id(t): (module._parameters, name)
                  for module in owner.modules() for name, t in module._parameters.items()}
    places = tuple(registered[id(t)] for t in sources)
    version = [(t.data_ptr(), t._version) for t in sources]
    owner.__dict__["_kept" + slot] = kept = Kept(sources, places, version, weight, bias, packed)
    return kept


class Linear(Plain, nn.Linear):
    """y = W x + b: nn.Linear, the same weights and state dict, its product without gradients read from a kept
    float16 copy where that holds W exactly (product)."""

    def forward(self, x):
        return product(self, x)

    def affine(self, _slot: str) -> tuple:
        """Its own (W, b), for product."""
        return ((self.weight, self.bias),)


@dataclass
class Attended:
    """What one multi-head attention computed, every head at once."""

    queries: torch.Tensor  # q_t = (W_Q x_t) split into heads (B, H, T, d_k)
    scores: torch.Tensor | None  # e_tj = q_t · k_j / √d_k (B, H, T, S), before the mask; None where α is not kept
    weights: torch.Tensor | None  # α_tj (B, H, T, S), 0 where masked; None where α is not kept
    heads: torch.Tensor  # o_t = Σ_j α_tj v_j, each head's output (B, H, T, d_k)
    output: torch.Tensor  # W_O [o_t^1; …; o_t^H] + b_O (B, T, D)


class MultiHeadAttention(Plain, nn.Module):
    """Scaled dot-product attention in H heads (Vaswani et al. 2017, eq. 1 and §3.2.2):

        q_t = W_Q x_t,  k_j = W_K h_j,  v_j = W_V h_j,   each split into H heads of d_k = D / H
        e_tj = q_t · k_j / √d_k,   α_tj = softmax_j(e_tj),   o_t = Σ_j α_tj v_j        (per head)
        output_t = W_O [o_t^1; …; o_t^H]

    The dot product is Luong's e_tj = s_tᵀ h_j between learnt projections; dividing by √d_k keeps the
    scores' spread near 1 whatever d_k (a sum of d_k products of unit-variance numbers has variance
    d_k), so the softmax does not saturate. Queries, keys and values come from project (a cross-attention's keys
    and values once per sentence); the fused kernel stands in where α is not kept and no gradient asked.
    """

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads, self.d_k = heads, d_model // heads
        self.W_Q = Linear(d_model, d_model)
        self.W_K = Linear(d_model, d_model)
        self.W_V = Linear(d_model, d_model)
        self.W_O = Linear(d_model, d_model)

    def project(self, x: torch.Tensor, which: str) -> torch.Tensor:
        """Those of q = W_Q x, k = W_K x, v = W_V x that `which` names ("QKV", "KV" or "Q"), from x (B, N, D) in one
        product, each split into heads: (B, len(which), H, N, d_k)."""
        y = product(self, x, which)  # (B, N, n·D)
        return y.view(x.size(0), x.size(1), len(which), self.heads, self.d_k).permute(0, 2, 3, 1, 4)

    def affine(self, which: str) -> tuple:
        """The (W, b) pairs of W_Q, W_K, W_V that `which` names, for product."""
        return pairs_of(getattr(self, "W_" + letter) for letter in which)

    def forward(self, queries, keys, mask, forced=None, heads_on=None, keep: bool = True) -> Attended:
        """queries (B, H, T, d_k) of the positions that ask, keys (B, 2, H, S, d_k) the k_j and v_j they read (project),
        mask (B or 1, T or 1, S) True where a position may be attended to (None: every one). forced, when given, (B, H, T, S) weights that stand in
        for α where they are not NaN (the page's "move the attention"); heads_on (B, H), when given, 0 for a head
        turned off: its output is zeroed before W_O (Michel et al. 2019), its α still computed. keep=False: α is not
        kept (scores and weights None); without gradients (a search, an encoding) the fused kernel
        (F.scaled_dot_product_attention) computes the same Σ_j α_tj v_j without writing α out. With gradients the
        explicit product stays: on this project's CPUs the fused kernel's backward made bf16 training a quarter slower
        (2,784–3,506 against 4,029–4,766 target pieces/s, alternated)."""
        k, v = keys.unbind(1)  # (B, H, S, d_k) each; their gradients stacked back in one operation
        if not keep and forced is None and not torch.is_grad_enabled():
            heads = F.scaled_dot_product_attention(queries, k, v, None if mask is None else mask[:, None])
            return Attended(queries, None, None, *self.combine(heads, heads_on))
        scores = queries @ k.transpose(-1, -2) / math.sqrt(self.d_k)  # (B, H, T, S)
        masked = scores if mask is None else scores.masked_fill(~mask[:, None], float("-inf"))
        weights = masked.softmax(-1)  # (B, H, T, S)
        if forced is not None:
            weights = torch.where(forced.isnan(), weights, forced)
        return Attended(queries, scores, weights, *self.combine(weights @ v, heads_on))  # o_t (B, H, T, d_k)

    def combine(self, heads, heads_on) -> tuple[torch.Tensor, torch.Tensor]:
        """Each head's o_t (B, H, T, d_k), those turned off zeroed, and W_O [o_t^1; …; o_t^H] + b_O (B, T, D)."""
        if heads_on is not None:
            heads = heads * heads_on[:, :, None, None]
        concatenated = heads.transpose(1, 2).flatten(2)  # (B, T, D)
        return heads, self.W_O(concatenated)


class FeedForward(Plain, nn.Module):
    """FFN(x) = W_2 φ(W_1 x + b_1) + b_2, at every position apart (Vaswani et al. 2017, eq. 2), φ = max(0, ·) as
    there or GELU(u) = u Φ(u) (Hendrycks & Gimpel 2016; BERT, GPT). GELU is smooth: along integrated gradients' path
    the gradient does not jump where a unit turns on, and their quadrature converges on the integral far sooner
    (decoding.attribution.JUMPING_GRADIENT_NOTE). No dropout inside, as in the paper: on this CPU drawing its F-wide
    mask cost more than a sixth of a training step."""

    NONLINEARITIES = {"relu": F.relu, "gelu": F.gelu}

    def __init__(self, d_model: int, ff_size: int, activation: str):
        super().__init__()
        self.W_1, self.W_2 = Linear(d_model, ff_size), Linear(ff_size, d_model)
        self.phi = self.NONLINEARITIES[activation]

    def forward(self, x):
        return self.W_2(self.phi(self.W_1(x)))  # (B, N, D)


class EncoderLayer(Plain, nn.Module):
    """x ← x + SelfAttention(LN(x));  x ← x + FFN(LN(x))   (pre-norm)."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attention = MultiHeadAttention(cfg.d_model, cfg.heads)
        self.feed_forward = FeedForward(cfg.d_model, cfg.ff_size, cfg.activation)
        self.norm_1, self.norm_2 = LayerNorm(cfg.d_model), LayerNorm(cfg.d_model)
        self.dropout = PlainDropout(cfg.dropout)

    def forward(self, x, mask, keep: bool) -> tuple[torch.Tensor, Attended]:
        """x (B, S, D), mask (B, 1, S) → x (B, S, D) and its self-attention, α kept where asked."""
        y = self.norm_1(x)
        projected = self.self_attention.project(y, "QKV")  # (B, 3, H, S, d_k)
        attended = self.self_attention(projected[:, 0], projected[:, 1:], mask, keep=keep)
        x = x + self.dropout(attended.output)
        return x + self.dropout(self.feed_forward(self.norm_2(x))), attended


class DecoderLayer(Plain, nn.Module):
    """x ← x + MaskedSelfAttention(LN(x));  x ← x + CrossAttention(LN(x), h);  x ← x + FFN(LN(x))."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attention = MultiHeadAttention(cfg.d_model, cfg.heads)
        self.cross_attention = MultiHeadAttention(cfg.d_model, cfg.heads)
        self.feed_forward = FeedForward(cfg.d_model, cfg.ff_size, cfg.activation)
        self.norm_1, self.norm_2, self.norm_3 = (LayerNorm(cfg.d_model) for _ in range(3))
        self.dropout = PlainDropout(cfg.dropout)

    def forward(self, x, past, causal, cross_keys, cross_mask, forced=None, heads_on=None, keep_own=True,
                keep_cross=True, at=None):
        """x (B, T, D) the new positions; past (B, 2, H, t₀, d_k) the keys and values of the t₀ positions before
        them (t₀ = 0 for a whole target); causal (1, T, t₀ + T) which positions each may see; cross_keys (B, 2, H,
        S, d_k), cross_mask (B, 1, S), None where no row has padding; forced (B, H, T, S) and heads_on (B, H), or None
        (MultiHeadAttention); keep_own and keep_cross: whether the self- and the cross-attention keep α; at (B,), when
        given, the one position of each row that goes on past the self-attention's keys and values
        (Decoder.readout_at), T = 1 from there.
        → x (B, T, D), the keys and values of all t₀ + T positions (B, 2, H, t₀ + T, d_k), the self- and the
        cross-attention."""
        y = self.norm_1(x)
        projected = self.self_attention.project(y, "QKV")  # (B, 3, H, T, d_k)
        queries, keys = projected[:, 0], projected[:, 1:]  # (B, H, T, d_k), (B, 2, H, T, d_k)
        if past.size(3):  # a step after the first: the earlier positions' from the cache
            keys = torch.cat([past, keys], 3)  # (B, 2, H, t₀ + T, d_k)
        if at is not None:  # position at[b] of row b alone asks, and sees the positions up to it
            rows = torch.arange(x.size(0), device=x.device)
            x, queries = x[rows, at][:, None], queries[rows, :, at][:, :, None]  # (B, 1, D), (B, H, 1, d_k)
            causal = (torch.arange(keys.size(3), device=x.device) <= at[:, None])[:, None]  # (B, 1, t₀ + T)
        own = self.self_attention(queries, keys, causal, keep=keep_own)
        x = x + self.dropout(own.output)
        queries = self.cross_attention.project(self.norm_2(x), "Q")[:, 0]  # (B, H, T, d_k)
        cross = self.cross_attention(queries, cross_keys, cross_mask, forced, heads_on, keep_cross)
        x = x + self.dropout(cross.output)
        return x + self.dropout(self.feed_forward(self.norm_3(x))), keys, own, cross


def sinusoids(length: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^{2i/D}), PE(pos, 2i+1) = cos(…) (Vaswani et al. 2017, §3.5): (length, D)."""
    position = torch.arange(length, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    table = torch.zeros(length, d_model)
    table[:, 0::2], table[:, 1::2] = torch.sin(position * frequency), torch.cos(position * frequency)
    return table


MAX_POSITIONS = 512  # a source has at most max_source_pieces (150), a translation 2 × that + 10 (search)


def embedding(vocab_size: int, cfg: TransformerConfig) -> Embedding:
    """E, its entries drawn with variance 1/D so that √D · E x has unit variance; padding's is zero."""
    table = Embedding(vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
    nn.init.normal_(table.weight, std=cfg.d_model ** -0.5)
    with torch.no_grad():
        table.weight[cfg.pad_id].zero_()
    return table


class Positions(Plain, nn.Module):
    """√D · E x_i + PE(i) (Vaswani et al. 2017, §3.4–3.5), then dropout: what the first layer reads."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.register_buffer("table", sinusoids(MAX_POSITIONS, cfg.d_model), persistent=False)
        self.dropout = PlainDropout(cfg.dropout)

    def forward(self, looked_up, start: int = 0):
        """E x (B, N, D) at positions start … start + N − 1 → (B, N, D)."""
        scaled = looked_up * math.sqrt(looked_up.size(-1))
        return self.dropout(scaled + self.table[start:start + looked_up.size(1)])


class Encoder(Plain, nn.Module):
    """h = LN(layer_N(… layer_1(√D · E x + PE)))."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.embed = embedding(cfg.src_vocab_size, cfg)  # E x_j: what attribution varies, as in the GRU encoder
        self.positions = Positions(cfg)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.enc_layers))
        self.norm = LayerNorm(cfg.d_model)

    def annotate(self, looked_up, lengths):
        """h_j (B, S, D) from E x_j (B, S, D) and the lengths (B,); None stands where the GRU encoder returns ←h_1."""
        return self.run(looked_up, _source_mask(lengths, looked_up.size(1)), keep=False)[0], None

    def run(self, looked_up, mask, keep: bool = True) -> tuple[torch.Tensor, list[Attended]]:
        """h (B, S, D) and each layer's self-attention (α kept where asked), from E x (B, S, D) and the mask (B, S)."""
        x, attended = self.positions(looked_up), []
        for layer in self.layers:
            x, own = layer(x, mask[:, None, :], keep)
            attended.append(own)
        return self.norm(x), attended


def _source_mask(lengths, S: int) -> torch.Tensor:
    """(B, S) True at the real pieces of each row."""
    return torch.arange(S, device=lengths.device)[None, :] < lengths[:, None]


class Decoder(Plain, nn.Module):
    """Masked self-attention over y_<t, cross-attention over h, feed-forward, in each of L layers;
    p(y_t) = softmax(E_y LN(x_t) + b): the output layer is the target embedding (Press & Wolf 2017).

    Its state is the cache of every layer's self-attention keys and values (B, L, 2, H, t, d_k): a step
    computes the new position's alone and reads the cache for the earlier ones. The Step it returns
    carries the cross-attention α of the grid the page shows (TransformerConfig.shown_layer and
    shown_head) and that layer's cross-attention output as its context; every head's numbers come from
    Transformer.trace."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.config = cfg
        self.embed = embedding(cfg.tgt_vocab_size, cfg)
        self.positions = Positions(cfg)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.dec_layers))
        self.norm = LayerNorm(cfg.d_model)
        self.out_bias = nn.Parameter(torch.zeros(cfg.tgt_vocab_size))

    def memory(self, annotations, _backward_first, mask) -> Memory:
        """Every layer's cross-attention keys and values, and an empty cache as s_0."""
        cfg = self.config
        empty = annotations.new_zeros(annotations.size(0), cfg.dec_layers, 2, cfg.heads, 0, cfg.head_size)
        return Memory(annotations, self.cross_keys(annotations), mask, empty)

    def cross_keys(self, annotations) -> torch.Tensor:
        """k_j and v_j of every layer's cross-attention from h (B, S, D), all in one product: (B, L, 2, H, S, d_k)."""
        cfg = self.config
        y = product(self, annotations, "cross")  # (B, S, L·2·D)
        y = y.view(*annotations.shape[:2], cfg.dec_layers, 2, cfg.heads, cfg.head_size)  # (B, S, L, 2, H, d_k)
        return y.permute(0, 2, 3, 4, 1, 5).contiguous()

    def logits(self, readout):
        """(…, D) → (…, V), through the target embedding matrix (a kept product: it is a step's largest)."""
        return product(self, readout, "out")

    def affine(self, slot: str) -> tuple:
        """For product: the output layer's (E_y, b) ("out"), or every layer's cross-attention W_K, W_V ("cross")."""
        if slot == "out":
            return ((self.embed.weight, self.out_bias),)
        return pairs_of(getattr(layer.cross_attention, "W_" + letter) for layer in self.layers for letter in "KV")

    def output_layer(self, readout) -> tuple:
        """What the output layer computes with: its input LN(x_t), its weight E_y and bias."""
        return (readout, *self.affine("out")[0])

    def run(self, y_in, cache, memory, forced=None, every: bool = True, at=None):
        """y_in (B, T) at positions t₀ … t₀ + T − 1 after the cache (B, L, 2, H, t₀, d_k) → LN(x) (B, T, D), each
        layer's keys and values of all t₀ + T positions (L × (B, 2, H, t₀ + T, d_k): step stacks them into the next
        cache, the other callers need none), and each layer's self- and cross-attention: every layer's α kept (the
        trace), or with every=False only the shown grid's (a search step, training, attribution). forced (B, T, S) α
        set by hand (NaN rows: the model's own) for the heads of the shown grid; memory.heads_on the cross-attention
        heads at work. at (B,), when given: the last layer computes position at[b] of each row b alone (no layer
        after it reads the others), LN(x) (B, 1, D)."""
        start, T = cache.size(4), y_in.size(1)
        x = self.positions(self.embed(y_in), start)  # (B, T, D)
        # which positions each may see (1, T, t₀ + T); one new position sees them all
        causal = None if T == 1 else torch.ones(T, start + T, dtype=torch.bool, device=x.device).tril(start)[None]
        # each layer's share taken apart at once: their gradients are stacked back in one operation, not each
        # written into a zero tensor of all layers' size (a select's backward)
        past, cross_keys = cache.unbind(1), memory.keys.unbind(1)  # L × (B, 2, H, t₀, d_k), L × (B, 2, H, S, d_k)
        # a batch without padding (a sentence, its beam) attends to every piece: no mask to apply
        cross_mask = None if memory.mask.all() else memory.mask[:, None, :]  # (B, 1, S)
        kept, own, cross, last = [], [], [], len(self.layers) - 1
        for l, layer in enumerate(self.layers):
            heads_on = None if memory.heads_on is None else memory.heads_on[:, l]  # (B, H)
            x, keys, mine, theirs = layer(x, past[l], causal, cross_keys[l], cross_mask, self._forced(forced, l),
                                          heads_on, every, every or l == self.config.layer_shown,
                                          at if l == last else None)
            kept.append(keys)
            own.append(mine)
            cross.append(theirs)
        return self.norm(x), kept, own, cross

    def _forced(self, forced, layer: int):
        """forced (B, T, S) as the weights of every head of the layer (B, H, T, S): those of the shown grid
        take them (all of its heads for a mean: then their mean is the weights set), the others none (NaN)."""
        cfg = self.config
        if forced is None or layer != cfg.layer_shown:
            return None
        per_head = forced[:, None].repeat(1, cfg.heads, 1, 1)  # (B, H, T, S)
        if cfg.shown_head is not None:
            others = torch.arange(cfg.heads, device=forced.device) != cfg.shown_head
            per_head[:, others] = float("nan")
        return per_head

    def shown(self, cross: list[Attended]) -> tuple[torch.Tensor, torch.Tensor]:
        """The page's grid α (B, T, S) and its layer's cross-attention output (B, T, D)."""
        cfg = self.config
        attended = cross[cfg.layer_shown]
        weights = attended.weights.mean(1) if cfg.shown_head is None else attended.weights[:, cfg.shown_head]
        return weights, attended.output

    def forward(self, y_in, memory):
        """y_in (B, T) = BOS y_1 … y_{T−1} → logits (B, T, V), every step at once."""
        return self.logits(self.readouts(y_in, memory))

    def readouts(self, y_in, memory):
        """LN(x_t) at every step (B, T, D), what the output layer reads."""
        return self.readouts_and_attention(y_in, memory)[0]

    def readouts_and_attention(self, y_in, memory):
        """The readouts (B, T, D) and the shown grid's α (B, T, S) of a whole target at once."""
        readouts, _, _, cross = self.run(y_in, memory.init_state, memory, every=False)
        return readouts, self.shown(cross)[0]

    def readout_at(self, y_in, memory, steps):
        """readouts(y_in, memory)[b, steps[b]] for every row b: (B, D). The mask keeps each step from
        seeing later ones, so the target is run once, up to the last step asked: what follows it cannot change
        it (attribution asks in batches of like steps, so a sentence costs about T²/2 positions, not T²); the last
        layer computes the asked step alone, after every position's keys and values."""
        y_in = y_in[:, : int(steps.max()) + 1]
        return self.run(y_in, memory.init_state, memory, every=False, at=steps)[0][:, 0]

    def step(self, y_prev, cache, memory, weights=None, coverage=None) -> Step:
        """One output step from the cache (B, L, 2, H, t, d_k); weights (B, S), when given, replace the shown
        grid's α at this step; coverage (B, S), the step before's Step.coverage, is summed on (no score reads it)."""
        forced = None if weights is None else weights[:, None]
        readout, keys, _, cross = self.run(y_prev[:, None], cache, memory, forced, every=False)
        alpha, context = (value[:, 0] for value in self.shown(cross))  # (B, S), (B, D)
        coverage = no_coverage(memory) if coverage is None else coverage
        return Step(self.logits(readout[:, 0]), torch.stack(keys, 1), None, None, alpha, context, coverage + alpha)


@dataclass
class Trace:
    """Every number of a Transformer's translation of one batch that the page shows, layer by layer (a list of L)."""

    decoder: list[Attended]  # each decoder layer's masked self-attention (T ask, T answer)
    cross: list[Attended]  # each decoder layer's cross-attention (T ask, S answer)
    cross_keys: torch.Tensor  # each decoder layer's k_j and v_j of the cross-attention (B, L, 2, H, S, d_k)


class Transformer(nn.Module):
    """x_1 … x_S → h_j = Encoder(x) → for each t: x_t from y_{t−1} through L decoder layers, each attending to
    y_<t (masked self-attention) and to every h_j (cross-attention) → p(y_t) (Vaswani et al. 2017)."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.config = cfg
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg)

    @property
    def query_symbol(self) -> str:
        return KINDS[self.config.attention].query

    def num_params(self, attention_only: bool = False) -> int:
        """How many parameters it has (the output layer's weight is the target embedding's, counted once);
        or those of its attention modules alone (every layer's self- and cross-attention)."""
        modules = [m for m in self.modules() if isinstance(m, MultiHeadAttention)] if attention_only else [self]
        return sum(p.numel() for module in modules for p in module.parameters())

    def encode(self, src, lengths) -> Memory:
        """src (B, S) ids with EOS and padding, lengths (B,) → the decoder's Memory."""
        annotations, _ = self.encoder.annotate(self.encoder.embed(src), lengths)
        return self.decoder.memory(annotations, None, src != self.config.pad_id)

    def encode_traced(self, src, lengths) -> tuple[Memory, torch.Tensor]:
        """encode, and α of every encoder layer's self-attention (B, L_enc, H, S, S), which the page's heads show."""
        annotations, attended = self.encoder.run(self.encoder.embed(src), _source_mask(lengths, src.size(1)))
        memory = self.decoder.memory(annotations, None, src != self.config.pad_id)
        return memory, torch.stack([layer.weights for layer in attended], 1)

    def forward(self, src, lengths, y_in):
        return self.decoder(y_in, self.encode(src, lengths))  # (B, T, V)

    def readouts_with_attention(self, src, lengths, y_in):
        """Teacher-forced, the readouts LN(x_t) (B, T, D) and the shown grid's α (B, T, S), as the GRU models give
        theirs: training takes the output layer itself (decoder.output_layer)."""
        return self.decoder.readouts_and_attention(y_in, self.encode(src, lengths))

    def trace(self, memory: Memory, y_in, forced=None) -> Trace:
        """Every decoder layer's and head's attention of a teacher-forced target y_in (B, T), all positions at once,
        after the encoding `memory` of its source (one row per target: Memory.select), its heads_on the heads at work;
        forced (B, T, S), NaN rows where α is the model's own, as Decoder.run. The encoder is not run again: its
        self-attention is encode_traced's, and no position goes through the output layer (the page shows no logits)."""
        _, _, decoder, cross = self.decoder.run(y_in, memory.init_state, memory, forced)
        return Trace(decoder, cross, memory.keys)
