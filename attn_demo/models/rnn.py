"""GRU encoder–decoder: a bidirectional encoder and the Bahdanau, Luong and no-attention decoders.

Every decoder offers the same entry points:
    forward(y_in, memory)       teacher-forced logits for a whole target (training)
    readouts(y_in, memory)      what the output layer reads at each of those steps (logits(readouts) = forward)
    readout_at(y_in, memory, steps)   the same at one step per row only, computing no step beyond the last asked for (attribution)
    step(y_prev, state, memory, coverage)   one output step with its trace (decoding); coverage is the
                                the step before's Step.coverage (None at the first step)
"""
import threading
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attn_demo.models.attention import KINDS, build_attention
from attn_demo.models.config import ModelConfig
from attn_demo.models.dropout import Dropout


class _CudnnOff:
    """cuDNN's GRU has a backward pass only for a forward run in training mode, and the app's models
    stay in eval mode: gradients through them (attribution) need cuDNN off. The switch is one for the
    whole process, so the threads inside are counted and it goes back as it was when the last one
    leaves, never while another's backward pass still needs it off."""

    def __init__(self):
        self.lock, self.inside, self.was_enabled = threading.Lock(), 0, True

    @contextmanager
    def __call__(self):
        with self.lock:
            if self.inside == 0:
                self.was_enabled = torch.backends.cudnn.enabled
                torch.backends.cudnn.enabled = False
            self.inside += 1
        try:
            yield
        finally:
            with self.lock:
                self.inside -= 1
                if self.inside == 0:
                    torch.backends.cudnn.enabled = self.was_enabled


gradients_through_eval_gru = _CudnnOff()  # `with gradients_through_eval_gru():` around such a forward and backward


@dataclass
class Memory:
    """What the decoder reads from the encoder, computed once per sentence."""

    annotations: torch.Tensor  # h_j (B, S, D)
    keys: torch.Tensor | None  # attention.project_keys(h) (B, S, ·); None without attention
    mask: torch.Tensor  # (B, S) True where there is a real piece
    init_state: torch.Tensor  # s_0 (B, H)
    context: torch.Tensor | None = None  # the fixed context c (B, D) of the decoder without attention
    heads_on: torch.Tensor | None = None  # a Transformer's cross-attention heads at work (B, L, H), 1 or 0 (turned off)

    def select(self, rows: torch.Tensor | slice) -> "Memory":
        """The memory of the given batch rows (beam search repeats each sentence K times)."""
        fields = (self.annotations, self.keys, self.mask, self.init_state, self.context, self.heads_on)
        return Memory(*(None if field is None else field[rows] for field in fields))


@dataclass
class Step:
    """One decoder step: its output and everything attention computed on the way. Without
    attention there is no query, no e and no α: those are None, and context is the fixed c."""

    logits: torch.Tensor  # (B, V)
    state: torch.Tensor  # s_t (B, H)
    query: torch.Tensor | None  # the query used: s_{t−1} (Bahdanau) or s_t (Luong)  (B, H)
    scores: torch.Tensor | None  # e_tj (B, S)
    attention: torch.Tensor | None  # α_tj (B, S)
    context: torch.Tensor  # c_t (B, D), or c at every step without attention
    coverage: torch.Tensor | None = None  # Σ_{t'≤t} α_t'j (B, S): the attention each piece has received up to and
    # including this step, i.e. C_{t+1}, what the next step reads; None without attention


class Encoder(nn.Module):
    """Bidirectional GRU: h_j = [→h_j; ←h_j] (Bahdanau et al. 2015, §3.2)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.src_vocab_size, cfg.emb_size, padding_idx=cfg.pad_id)
        self.rnn = nn.GRU(cfg.emb_size, cfg.enc_hidden_size, batch_first=True, bidirectional=True)
        self.dropout = Dropout(cfg.dropout)

    def forward(self, src, lengths):
        """src (B, S) ids, lengths (B,) → annotations (B, S, D), ←h_1 (B, D/2)."""
        return self.annotate(self.embed(src), lengths)

    def annotate(self, x, lengths):
        """The same from the source embeddings E x_j (B, S, E): what gradient attribution varies."""
        x = self.dropout(x)  # (B, S, E)
        if bool((lengths == x.size(1)).all()):  # no padding (attribution's copies of one sentence): nothing to pack, and
            annotations, last = self.rnn(x)  # the packed GRU's backward writes zeros of the whole input's size at every j
            return annotations, last[1]
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, last = self.rnn(packed)  # last: (2, B, D/2); last[1] is the backward GRU at j = 1
        annotations, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return annotations, last[1]


class Decoder(nn.Module):
    """Shared parts: target embedding, attention (none for "none"), tied output layer, s_0 = tanh(W_init ←h_1)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        D, H = cfg.annotation_size, cfg.dec_hidden_size
        self.embed = nn.Embedding(cfg.tgt_vocab_size, cfg.emb_size, padding_idx=cfg.pad_id)
        self.attention = None if cfg.attention == "none" else build_attention(cfg.attention, H, D, cfg.attn_hidden_size, cfg.attn_rank)
        self.init = nn.Linear(cfg.enc_hidden_size, H)
        self.out_bias = nn.Parameter(torch.zeros(cfg.tgt_vocab_size))
        self.dropout = Dropout(cfg.dropout)

    def memory(self, annotations, backward_first, mask) -> Memory:
        keys = self.attention.project_keys(annotations)
        return Memory(annotations, keys, mask, torch.tanh(self.init(backward_first)))

    def logits(self, readout):
        """The output layer shares the target embedding matrix (Press & Wolf 2017): (…, E) → (…, V)."""
        return F.linear(*self.output_layer(readout))

    def output_layer(self, readout) -> tuple:
        """What the output layer computes with: its input (the readout after dropout), its weight E_y and bias."""
        return self.dropout(readout), self.embed.weight, self.out_bias


class BahdanauDecoder(Decoder):
    """s_t = GRU([E y_{t−1}; c_t], s_{t−1}) where c_t attends with the query s_{t−1};
    readout tanh(W_o [s_t; c_t; E y_{t−1}]) → tied softmax (Bahdanau et al. 2015, A.2.2)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        E, D, H = cfg.emb_size, cfg.annotation_size, cfg.dec_hidden_size
        self.cell = nn.GRUCell(E + D, H)
        self.readout = nn.Linear(H + D + E, E)

    def _attend(self, s_prev, memory, weights=None, coverage=None):
        """How c_t is obtained: attention with the query s_{t−1} (and the coverage C_t (B, S), which only a
        score that keeps count reads) → query, e, α (B, S), c_t (B, D); weights (B, S), when given, stand in for α."""
        forced = None if weights is None else weights[:, None]
        counted = None if coverage is None else coverage[:, None]
        scores, weights, context = self.attention(s_prev[:, None], memory.keys, memory.annotations, memory.mask, forced,
                                                  counted)
        return s_prev, scores[:, 0], weights[:, 0], context[:, 0]

    def _recur(self, y_emb, s_prev, memory, weights=None, coverage=None):
        """One recurrence: (B, E), (B, H) → s_t (B, H) and what _attend computed (query, e, α, c_t)."""
        attended = self._attend(s_prev, memory, weights, coverage)
        state = self.cell(torch.cat([y_emb, attended[-1]], dim=-1), s_prev)  # (B, H)
        return state, attended

    def _output(self, state, context, y_emb):
        """What the output layer reads, tanh(W_o [s_t; c_t; E y_{t−1}]): (…, H), (…, D), (…, E) → (…, E)."""
        return torch.tanh(self.readout(torch.cat([state, context, y_emb], dim=-1)))

    def forward(self, y_in, memory):
        """y_in (B, T) = BOS y_1 … y_{T−1} → logits (B, T, V). The step loop is the model: c_t feeds s_t."""
        return self.logits(self.readouts(y_in, memory))  # (B, T, V)

    def readouts(self, y_in, memory):
        """What the output layer reads at every step, tanh(W_o [s_t; c_t; E y_{t−1}]): (B, T, E)."""
        return self.readouts_and_attention(y_in, memory)[0]

    def readouts_and_attention(self, y_in, memory):
        """readouts (B, T, E) and α (B, T, S) at every step (the coverage loss reads α)."""
        y_emb = self.dropout(self.embed(y_in))  # (B, T, E)
        state, coverage, states, contexts, alphas = memory.init_state, no_coverage(memory), [], [], []
        for t in range(y_in.size(1)):
            state, (_, _, alpha, context) = self._recur(y_emb[:, t], state, memory, coverage=coverage)
            coverage = coverage + alpha  # C_{t+1} = C_t + α_t
            states.append(state)
            contexts.append(context)
            alphas.append(alpha)
        return self._output(torch.stack(states, 1), torch.stack(contexts, 1), y_emb), torch.stack(alphas, 1)

    def readout_at(self, y_in, memory, steps):
        """readouts(y_in, memory)[b, steps[b]] for every row b: (B, E). The rows go through the step loop
        sorted by their step, longest first, and the rows already done are dropped from the batch as it
        goes, so T copies of a sentence asking about steps 0 … T−1 cost about T²/2 recurrences, not T²."""
        order = steps.argsort(descending=True, stable=True)
        inputs, memory = self.dropout(self.embed(y_in[order])).unbind(1), memory.select(order)  # T × (B, E)
        reach = (steps[order][None, :] >= torch.arange(int(steps.max()) + 1, device=steps.device)[:, None]).sum(1).tolist()
        state, coverage, ended = memory.init_state, no_coverage(memory), []
        for t, rows in enumerate(reach):  # rows: how many reach step t (a prefix)
            if rows <= 3 * len(state) // 4:  # cut a quarter or more at once: each cut's backward writes zeros the size of the batch it cut
                state, coverage, memory = state[:rows], coverage[:rows], memory.select(slice(0, rows))
            state, (_, _, alpha, context) = self._recur(inputs[t][:len(state)], state, memory, coverage=coverage)
            coverage = coverage + alpha
            done = slice(reach[t + 1] if t + 1 < len(reach) else 0, rows)  # the rows whose step is t
            ended.append(self._output(state[done], context[done], inputs[t][done]))
        return torch.cat(ended[::-1])[order.argsort()]  # back from longest-first to the rows' order

    def step(self, y_prev, s_prev, memory, weights=None, coverage=None) -> Step:
        """One output step; weights (B, S), when given, replace this step's α (see Attention.forward);
        coverage (B, S) is the step before's Step.coverage, None at the first step."""
        y_emb = self.embed(y_prev)  # (B, E)
        coverage = no_coverage(memory) if coverage is None else coverage  # C_t
        state, (query, scores, weights, context) = self._recur(y_emb, s_prev, memory, weights, coverage)
        return Step(self.logits(self._output(state, context, y_emb)), state, query, scores, weights, context,
                    coverage + weights)


def no_coverage(memory: Memory) -> torch.Tensor:
    """C_1 = 0: no piece has been attended to before the first step (B, S)."""
    return memory.annotations.new_zeros(memory.mask.shape)


class FixedContextDecoder(BahdanauDecoder):
    """No attention: the RNN encoder–decoder of Cho et al. 2014 (the RNNencdec baseline of
    Bahdanau et al. 2015), on the same bidirectional encoder as the attention models.

    One context per sentence, c = [→h_S; ←h_1]: the final states of the forward GRU (it read
    x_1 … x_S) and of the backward GRU (it read x_S … x_1), i.e. the forward half of the last
    annotation and the backward half of the first. Like Sutskever et al. 2014 it is the encoder's
    final state as is (no weights of its own); like Cho et al. 2014 it is read at every step:

        s_t = GRU([E y_{t−1}; c], s_{t−1}),   readout tanh(W_o [s_t; c; E y_{t−1}])

    This is the Bahdanau decoder with c_t replaced by c, so comparing the two isolates attention.
    """

    def memory(self, annotations, backward_first, mask) -> Memory:
        last = mask.sum(1) - 1  # (B,) position S of each sentence's EOS
        forward_last = annotations[torch.arange(annotations.size(0)), last, :backward_first.size(-1)]  # →h_S (B, D/2)
        context = torch.cat([forward_last, backward_first], dim=-1)  # c (B, D)
        return Memory(annotations, None, mask, torch.tanh(self.init(backward_first)), context)

    def _attend(self, s_prev, memory, weights=None, coverage=None):
        """No query, no e, no α: the same c at every step (there is no α to replace, nothing to count)."""
        return None, None, None, memory.context

    def readouts_and_attention(self, y_in, memory):
        """readouts (B, T, E) and no α. c is the same at every step, so the GRU's inputs [E y_{t−1}; c] are
        known in advance and one GRU call runs over the whole target (cuDNN on a GPU) instead of a step loop."""
        y_emb = self.dropout(self.embed(y_in))  # (B, T, E)
        context = memory.context[:, None].expand(-1, y_in.size(1), -1)  # (B, T, D)
        states = _gru_over_time(self.cell, torch.cat([y_emb, context], dim=-1), memory.init_state)  # (B, T, H)
        return self._output(states, context, y_emb), None

    def readout_at(self, y_in, memory, steps):
        """readouts(y_in, memory)[b, steps[b]] for every row b: (B, E). The GRU runs up to the furthest step
        asked for only, and only each row's step goes through the readout: attribution asks about neighbouring
        steps in one batch (attribution.integrate), so a sentence's T steps cost about T²/2 recurrences in
        all and T readouts, not T² of each. The GRU's input weights read c once per row, not at every step:
        W_ih [E y_{t−1}; c] = W_y E y_{t−1} + W_c c, and only W_c c carries the gradient to the source."""
        reach = int(steps.max()) + 1
        y_emb = self.dropout(self.embed(y_in[:, :reach]))  # (B, reach, E)
        weight_y, weight_c = self.cell.weight_ih.split([y_emb.size(-1), memory.context.size(-1)], dim=1)
        gates = F.linear(y_emb, weight_y) + F.linear(memory.context, weight_c, self.cell.bias_ih)[:, None]  # (B, reach, 3H)
        state, states = memory.init_state, []
        for step_gates in gates.unbind(1):  # unbind, not gates[:, t]: whose gradient would be a zeroed (B, reach, 3H) a step
            state = _gru_cell(self.cell, step_gates, state)
            states.append(state)
        rows = torch.arange(y_in.size(0), device=y_in.device)
        return self._output(torch.stack(states, 1)[rows, steps], memory.context, y_emb[rows, steps])

    def step(self, y_prev, s_prev, memory, weights=None, coverage=None) -> Step:
        """One output step: s_t = GRU([E y_{t−1}; c], s_{t−1}); no α, so no coverage."""
        y_emb = self.embed(y_prev)  # (B, E)
        state = self.cell(torch.cat([y_emb, memory.context], dim=-1), s_prev)  # (B, H)
        return Step(self.logits(self._output(state, memory.context, y_emb)), state, None, None, None, memory.context)


def _gru_cell(cell: nn.GRUCell, input_gates: torch.Tensor, s_prev: torch.Tensor) -> torch.Tensor:
    """cell's next state from its input's part of the gates, W_ih x + b_ih (B, 3H), computed beforehand: (B, H).
    The same operations as PyTorch's own GRUCell on the CPU (gru_cell in ATen's RNN.cpp)."""
    reset_in, update_in, new_in = input_gates.chunk(3, -1)
    reset_h, update_h, new_h = F.linear(s_prev, cell.weight_hh, cell.bias_hh).chunk(3, -1)
    reset, update = torch.sigmoid(reset_in + reset_h), torch.sigmoid(update_in + update_h)
    new = torch.tanh(new_in + reset * new_h)
    return (s_prev - new) * update + new


def _gru_over_time(cell: nn.GRUCell, inputs: torch.Tensor, s_0: torch.Tensor) -> torch.Tensor:
    """cell applied at every step of inputs (B, T, I) from s_0 (B, H) → states (B, T, H), in one call:
    nn.GRU's layer 0 computes exactly GRUCell's equations, so it runs with the cell's own weights. The
    nn.GRU is made for this call alone, on the meta device (no memory), because functional_call lends it
    the weights by setting them on the module: a shared one would mix requests made at once."""
    layer = nn.GRU(cell.input_size, cell.hidden_size, batch_first=True, device="meta")
    weights = {"weight_ih_l0": cell.weight_ih, "weight_hh_l0": cell.weight_hh,
               "bias_ih_l0": cell.bias_ih, "bias_hh_l0": cell.bias_hh}
    states, _ = torch.func.functional_call(layer, weights, (inputs, s_0[None].contiguous()))
    return states


class LuongDecoder(Decoder):
    """s_t = GRU(E y_{t−1}, s_{t−1}); c_t attends with the query s_t;
    h̃_t = tanh(W_c [c_t; s_t]) → tied softmax (Luong et al. 2015, eq. 5). No input feeding,
    so training runs the GRU over the whole target at once."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        E, D, H = cfg.emb_size, cfg.annotation_size, cfg.dec_hidden_size
        self.rnn = nn.GRU(E, H, batch_first=True)
        self.W_c = nn.Linear(D + H, E)

    def _run(self, y_emb, s_prev, memory, weights=None):
        """y_emb (B, T, E), s_prev (B, H) → states (B, T, H), e, α (B, T, S), c (B, T, D), h̃ (B, T, E);
        weights (B, T, S), when given, stand in for α."""
        states, _ = self.rnn(y_emb, s_prev[None].contiguous())  # (B, T, H)
        return (states, *self._attentional(states, memory, weights))

    def _attentional(self, states, memory, weights=None):
        """The queries s_t (B, T, H) → e, α (B, T, S), c (B, T, D) and the attentional state
        h̃_t = tanh(W_c [c_t; s_t]) (B, T, E)."""
        scores, weights, context = self.attention(states, memory.keys, memory.annotations, memory.mask, weights)
        attentional = torch.tanh(self.W_c(torch.cat([context, states], dim=-1)))  # h̃_t (B, T, E)
        return scores, weights, context, attentional

    def forward(self, y_in, memory):
        return self.logits(self.readouts(y_in, memory))  # (B, T, V)

    def readouts(self, y_in, memory):
        """What the output layer reads at every step, h̃_t: (B, T, E)."""
        return self.readouts_and_attention(y_in, memory)[0]

    def readouts_and_attention(self, y_in, memory):
        """readouts h̃_t (B, T, E) and α (B, T, S) at every step."""
        _, _, weights, _, attentional = self._run(self.dropout(self.embed(y_in)), memory.init_state, memory)
        return attentional, weights

    def readout_at(self, y_in, memory, steps):
        """readouts(y_in, memory)[b, steps[b]] for every row b: (B, E). The GRU reads each row up to its
        step only (packed), and attention runs once per row, for that step's s_t."""
        y_emb = pack_padded_sequence(self.dropout(self.embed(y_in)), (steps + 1).cpu(), batch_first=True, enforce_sorted=False)
        _, last = self.rnn(y_emb, memory.init_state[None].contiguous())  # s_t at each row's step (1, B, H)
        return self._attentional(last[0][:, None], memory)[-1][:, 0]

    def step(self, y_prev, s_prev, memory, weights=None, coverage=None) -> Step:
        """One output step; weights (B, S), when given, replace this step's α (see Attention.forward);
        coverage (B, S), the step before's Step.coverage, is only summed on (no Luong score reads it)."""
        forced = None if weights is None else weights[:, None]
        states, scores, weights, context, attentional = self._run(self.embed(y_prev)[:, None], s_prev, memory, forced)
        state, alpha = states[:, 0], weights[:, 0]
        coverage = no_coverage(memory) if coverage is None else coverage
        return Step(self.logits(attentional[:, 0]), state, state, scores[:, 0], alpha, context[:, 0], coverage + alpha)


DECODERS = {"bahdanau": BahdanauDecoder, "bahdanau-coverage": BahdanauDecoder, "none": FixedContextDecoder}  # every Luong score: LuongDecoder


class Seq2Seq(nn.Module):
    """x_1 … x_S → annotations h_j = [→h_j; ←h_j] → decoder states s_t → pieces y_t, with s_0 = tanh(W_init ←h_1).

        bahdanau   c_t = Σ_j α_tj h_j, α_tj = softmax_j(e_tj), e_tj from the query s_{t−1};
                   s_t = GRU([E y_{t−1}; c_t], s_{t−1}), p(y_t) from tanh(W_o [s_t; c_t; E y_{t−1}])
        bahdanau-coverage   the same, with e_tj also reading the coverage C_tj = Σ_{t'<t} α_t'j
        luong-*    s_t = GRU(E y_{t−1}, s_{t−1}); c_t = Σ_j α_tj h_j with e_tj from the query s_t;
                   p(y_t) from h̃_t = tanh(W_c [c_t; s_t])
        none       c = [→h_S; ←h_1] for every t (no e, no α);
                   s_t = GRU([E y_{t−1}; c], s_{t−1}), p(y_t) from tanh(W_o [s_t; c; E y_{t−1}])
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.encoder = Encoder(cfg)
        self.decoder = DECODERS.get(cfg.attention, LuongDecoder)(cfg)

    @property
    def query_symbol(self) -> str | None:
        """Which decoder state is the attention query, as the app labels it; None without attention,
        where no state is compared with the h_j (s_{t−1} still feeds the GRU, as in every decoder)."""
        return KINDS[self.config.attention].query

    def num_params(self, attention_only: bool = False) -> int:
        """How many parameters it has (the output layer's weight is the target embedding's, counted once);
        or its attention module's alone, 0 without one."""
        module = self.decoder.attention if attention_only else self
        return 0 if module is None else sum(p.numel() for p in module.parameters())

    def encode(self, src, lengths) -> Memory:
        """src (B, S) ids with EOS and padding, lengths (B,) → the decoder's Memory."""
        annotations, backward_first = self.encoder(src, lengths)
        return self.decoder.memory(annotations, backward_first, src != self.config.pad_id)

    def forward(self, src, lengths, y_in):
        return self.decoder(y_in, self.encode(src, lengths))  # (B, T, V)

    def readouts_with_attention(self, src, lengths, y_in):
        """Teacher-forced, what the output layer reads at every step (B, T, E) and α (B, T, S) (None without
        attention): training takes the output layer itself (decoder.output_layer) and the coverage loss α."""
        return self.decoder.readouts_and_attention(y_in, self.encode(src, lengths))
