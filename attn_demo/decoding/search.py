"""Greedy and beam search over a batch, each returning what the model computed at every step
of the hypothesis it chose: the trace the app draws; forced decoding returns the same trace for
a target given in advance (teacher forcing).

Both searches can be steered ("what if?"): a Steer fixes the first pieces (the search continues
after them, greedy or beam) and sets α by hand at some steps (c_t = Σ_j α_tj h_j from those
weights; every later step is the model's own). Every number of a steered search is still the
model's: the log-probability of a fixed piece is the one the model gives it.

A beam search ranks the hypotheses it finishes by their log-probability, normalised for length
and, if asked, corrected by the coverage their attention left behind (Penalties), or, asked to,
ranks every beginning by that coverage at every step instead."""
from dataclasses import dataclass, field

import torch

from attn_demo.data.pairs import pad
from attn_demo.models.rnn import Memory, Seq2Seq

TRACE_FIELDS = ("query", "scores", "attention", "context")


@dataclass
class Hypothesis:
    tokens: list[int]  # y_1 … y_T, EOS last
    log_prob: float  # Σ_t log p(y_t | y_<t, x)
    trace: dict  # name → float32 array (T, ·), one row per output step, or None where the model has
    # no such thing (query, scores and attention of a decoder without attention); see TRACE_FIELDS
    score: float | None = None  # what a beam search ranked it by (Penalties); None from greedy or forced search


@dataclass(frozen=True)
class Penalties:
    """How a beam search ranks a finished hypothesis Y of |Y| pieces whose attention gave each source
    piece j the coverage C_j = Σ_t α_tj (Wu et al. 2016, eq. 14, and OpenNMT-py's "summary" penalty):

        score(Y) = log p(Y | x) / lp(Y) + β_cov Σ_j log min(C_j, 1) − β_rep Σ_j (max(C_j, 1) − 1)

    lp(Y) = ((5 + |Y|) / 6)^α, GNMT's length penalty, or |Y| (the average log-probability per piece)
    when α is None. The second term is below 0 for every piece left (partly) unattended, the third for
    every piece attended more than once in all: a dropped and a repeated phrase, if α tells the truth.
    Without attention there is no C, and only the length term applies.

    These terms re-rank what the search finished; they cannot save a beam whose k hypotheses all
    repeat, and they compare hypotheses of different lengths (a longer French collects more C). With
    `stepwise` (after OpenNMT-py's stepwise penalty) the coverage term, of the α so far, is instead
    added to the log p of every beginning the search weighs at every step, where all are equally
    long: one that attends again to what it has covered falls behind its rivals while they are still
    in the beam. What finished is then ranked by log p / lp(Y) alone."""

    length: float | None = None  # α
    coverage: float = 0.0  # β_cov
    repeat: float = 0.0  # β_rep
    stepwise: bool = False  # the coverage term ranks every beginning at every step instead of what finished

    def length_norm(self, pieces: int) -> float:
        return float(pieces) if self.length is None else ((5 + pieces) / 6) ** self.length

    def coverage_term(self, coverage: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """The coverage part of the score (B,) for rows of C (B, S) over their real pieces (mask (B, S));
        zeros for a model without α (coverage None) or without these penalties."""
        if coverage is None or not (self.coverage or self.repeat):
            return torch.zeros(mask.size(0), device=mask.device)
        # Σ_j log min(C_j, 1) (B,); C_j floored at e^-20: a piece whose α underflowed to 0 costs much, not infinitely much
        uncovered = coverage.clamp(min=2e-9, max=1.0).log().masked_fill(~mask, 0.0).sum(-1)
        again = (coverage.clamp(min=1.0) - 1.0).masked_fill(~mask, 0.0).sum(-1)  # Σ_j (max(C_j, 1) − 1) (B,)
        return self.coverage * uncovered - self.repeat * again

    def beginning_term(self, coverage: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """What the search adds to the log p of each beginning (B,) with coverage C so far (B, S) to
        rank it: the coverage term when stepwise, else nothing."""
        return self.coverage_term(coverage, mask) if self.stepwise else torch.zeros(mask.size(0), device=mask.device)

    def ending_term(self, coverage: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """What ranks a finished hypothesis (B,) besides log p / lp(Y): the coverage term of its whole
        C (B, S), unless stepwise (then the terms ranked its beginnings instead)."""
        return torch.zeros(mask.size(0), device=mask.device) if self.stepwise else self.coverage_term(coverage, mask)


NO_PENALTIES = Penalties()


@dataclass(frozen=True)
class Steer:
    """What a user fixed in advance, the same for every sentence of the batch: the first output
    pieces (ids, no EOS), α at some output steps, {t (1-based): weights (S,) summing to 1}, and a
    Transformer's cross-attention heads turned off, {(layer, head)} from 0."""

    prefix: tuple[int, ...] = ()
    attention: dict = field(default_factory=dict)
    heads_off: frozenset = frozenset()

    def weights(self, t: int, rows: int):
        """The α fixed at output step t + 1 (0-based t) for `rows` rows (rows, S), or None."""
        weights = self.attention.get(t + 1)
        return None if weights is None else weights.expand(rows, -1)


NO_STEER = Steer()


@dataclass(frozen=True)
class Candidate:
    """One extension a beam search weighed at a step: a kept beginning (its parent, the index of a
    kept Candidate of the step before, or -1 at step 1) followed by one more piece."""

    step: int  # output step t, from 1
    parent: int
    token: int
    log_p: float  # log p(y_t | y_<t, x) of this piece after its beginning
    score: float  # log p of the whole beginning: the parent's score + log_p
    fate: str  # one of FATES
    term: float = 0.0  # with stepwise Penalties, the coverage term of its beginning's α so far: ranked by score + term


# what became of a candidate: one of the k beams of the next step; an ended hypothesis (EOS among the
# k best); or pruned (among the 2k best weighed, but not kept)
FATES = ("kept", "ended", "pruned")


def max_target_length(src_lengths: torch.Tensor) -> torch.Tensor:
    """A French sentence is rarely more than twice as many pieces as its English source."""
    return 2 * src_lengths + 10


def _log_probs(step, t: int, limits, first_limit: int, eos_id: int, steer: Steer = NO_STEER):
    """log p(y_t | …) of one step; where a hypothesis reached its length limit, every piece but
    EOS becomes impossible (EOS keeps its own log-probability, so scores stay true model
    probabilities). Before the first limit (first_limit = limits.min()) there is nothing to force.
    Within a steered prefix, every piece but the fixed one is impossible (it keeps its own)."""
    log_probs = step.logits.log_softmax(-1)
    if t < len(steer.prefix):
        fixed = torch.full_like(log_probs, float("-inf"))
        piece = steer.prefix[t]
        fixed[:, piece] = log_probs[:, piece]
        return fixed
    if t + 1 < first_limit:
        return log_probs
    not_eos = torch.ones(log_probs.size(-1), dtype=torch.bool, device=log_probs.device)
    not_eos[eos_id] = False
    return log_probs.masked_fill((t + 1 >= limits)[:, None] & not_eos, float("-inf"))


def _trace_rows(step) -> dict:
    """This step's trace rows (B, ·); None stays None (no α is ever made up for a model without one)."""
    rows = {name: getattr(step, name) for name in TRACE_FIELDS}
    return {name: None if row is None else row.float().cpu() for name, row in rows.items()}


@torch.inference_mode()
def greedy_search(model: Seq2Seq, memory: Memory, limits, steer: Steer = NO_STEER) -> list[Hypothesis]:
    """Pick the most probable piece at every step, for every sentence of the batch at once;
    limits (B,) is each sentence's maximum output length. A sentence leaves the batch at its EOS:
    in a batch of test sentences over half the rows would otherwise be finished ones, decoded on."""
    eos, batch = model.config.eos_id, memory.mask.size(0)
    limits = limits.clamp(min=len(steer.prefix) + 1)  # room for the fixed pieces and an EOS
    first_limit = int(limits.min())
    rows = torch.arange(batch, device=memory.mask.device)  # the batch rows still decoding
    y = torch.full((batch,), model.config.bos_id, device=rows.device)
    state, coverage, steps = memory.init_state, None, []
    for t in range(int(limits.max())):
        step = model.decoder.step(y, state, memory, steer.weights(t, y.size(0)), coverage)
        best, y = _log_probs(step, t, limits, first_limit, eos, steer).max(-1)
        steps.append((rows, y, best, step))
        state, coverage, going = step.state, step.coverage, y != eos
        if not going.all():
            if not going.any():
                break
            rows, y, limits, state, memory = rows[going], y[going], limits[going], state[going], memory.select(going)
            coverage = None if coverage is None else coverage[going]
    return _greedy_hypotheses(steps, batch, eos)


def _greedy_hypotheses(steps, batch: int, eos: int) -> list[Hypothesis]:
    """Gather each sentence's tokens, log-probabilities and trace from the steps it took part in."""
    T = len(steps)
    tokens, log_probs = torch.full((batch, T), eos), torch.zeros(batch, T)
    present = [name for name in TRACE_FIELDS if getattr(steps[0][3], name) is not None]
    traces = {name: torch.zeros(batch, T, getattr(steps[0][3], name).size(-1)) for name in present}
    for t, (rows, y, best, step) in enumerate(steps):
        rows = rows.cpu()
        tokens[rows, t], log_probs[rows, t] = y.cpu(), best.float().cpu()
        for name, values in _trace_rows(step).items():
            if values is not None:
                traces[name][rows, t] = values
    hypotheses = []
    for b in range(batch):
        length = int((tokens[b] == eos).nonzero()[0]) + 1
        trace = {name: traces[name][b, :length].numpy() if name in traces else None for name in TRACE_FIELDS}
        hypotheses.append(Hypothesis(tokens[b, :length].tolist(), float(log_probs[b, :length].sum()), trace))
    return hypotheses


@torch.inference_mode()
def forced_search(model: Seq2Seq, memory: Memory, targets: list[list[int]]) -> list[Hypothesis]:
    """Feed each sentence its given target (ids ending in EOS) instead of the model's choice:
    the steps greedy search would take had it chosen exactly these pieces. A finished row keeps
    stepping on padding; the decoder treats rows independently, so the other rows never see it."""
    y_out = pad(targets, model.config.eos_id).to(memory.mask.device)  # (B, T)
    y = torch.full((y_out.size(0),), model.config.bos_id, device=y_out.device)
    state, coverage, log_probs, traces = memory.init_state, None, [], []
    for t in range(y_out.size(1)):
        step = model.decoder.step(y, state, memory, coverage=coverage)
        y, state, coverage = y_out[:, t], step.state, step.coverage
        log_probs.append(step.logits.log_softmax(-1).gather(1, y[:, None])[:, 0].float().cpu())
        traces.append(_trace_rows(step))
    log_probs = torch.stack(log_probs, 1)  # (B, T)
    trace = {name: None if traces[0][name] is None else torch.stack([rows[name] for rows in traces], 1)  # (B, T, ·)
             for name in TRACE_FIELDS}
    return [Hypothesis(list(target), float(log_probs[b, :len(target)].sum()),
                       {name: None if rows is None else rows[b, :len(target)].numpy() for name, rows in trace.items()})
            for b, target in enumerate(targets)]


def beam_search(model: Seq2Seq, memory: Memory, limits, beam_size: int, penalties: Penalties = NO_PENALTIES,
                steer: Steer = NO_STEER) -> list[Hypothesis]:
    """The best hypothesis of beam_search_n_best for every sentence."""
    return [best[0] for best in beam_search_n_best(model, memory, limits, beam_size, 1, penalties, steer)[0]]


@torch.inference_mode()
def beam_search_n_best(model: Seq2Seq, memory: Memory, limits, beam_size: int, n_best: int,
                       penalties: Penalties = NO_PENALTIES,
                       steer: Steer = NO_STEER) -> tuple[list[list[Hypothesis]], list[list[Candidate]]]:
    """Keep the beam_size best prefixes per sentence (by log p, plus the coverage term with stepwise
    penalties); a finished hypothesis is ranked as Penalties says. Stops for a sentence when it has
    beam_size finished hypotheses. Returns the n_best best of them per sentence, best first, and per
    sentence the search itself: every Candidate it weighed (the 2k best extensions of the kept
    beginnings at each step), in the order weighed."""
    if not 1 <= n_best <= beam_size:
        raise ValueError(f"n_best must be between 1 and the beam size ({beam_size}), not {n_best}")
    K, eos, device = beam_size, model.config.eos_id, memory.mask.device
    batch = memory.mask.size(0)
    limits = limits.clamp(min=len(steer.prefix) + 1).repeat_interleave(K)  # (B·K,)
    memory = memory.select(torch.arange(batch, device=device).repeat_interleave(K))
    y = torch.full((batch * K,), model.config.bos_id, device=device)
    state, coverage = memory.init_state, None
    beam_scores = torch.full((batch, K), float("-inf"), device=device)
    beam_scores[:, 0] = 0.0  # all K beams start identical: let only one of them expand
    finished = [[] for _ in range(batch)]  # (normalised score, log p, step, origin beam, token)
    weighed = [[] for _ in range(batch)]  # every sentence's Candidates
    beam_nodes = [[-1] * K for _ in range(batch)]  # the Candidate each beam of the step before is
    history = []  # per step: origins (B, K), tokens (B, K), trace rows (B·K, ·)
    first_limit = int(limits.min())
    for t in range(int(limits.max())):
        step = model.decoder.step(y, state, memory, steer.weights(t, y.size(0)), coverage)
        lp = _log_probs(step, t, limits, first_limit, eos, steer)
        vocab = lp.size(-1)
        term = penalties.beginning_term(step.coverage, memory.mask).view(batch, K)  # (B, K): 0 unless stepwise
        total = (beam_scores.view(-1, 1) + lp).view(batch, K * vocab)  # log p of every extension
        ranked = total + term.repeat_interleave(vocab, dim=1) if penalties.stepwise else total  # what the beam ranks by
        top_index = ranked.topk(2 * K, dim=-1).indices  # (B, 2K): enough to keep K after EOS ones
        top_scores, origins, words = total.gather(1, top_index), top_index // vocab, top_index % vocab
        top_log_p = lp.view(batch, K * vocab).gather(1, top_index)  # (B, 2K): each piece's own log p
        top_terms = term.gather(1, origins)  # (B, 2K)
        ending = penalties.ending_term(step.coverage, memory.mask)  # (B·K,): the term each beam would end with
        ending = ending.view(batch, K).tolist()
        new_scores, new_origins, new_words = _advance(finished, top_scores, origins, words, t, K, eos,
                                                      (penalties.length_norm(t + 1), ending),
                                                      (weighed, beam_nodes, top_log_p, top_terms))
        history.append((new_origins.cpu(), new_words.cpu(), _trace_rows(step)))
        if all(len(f) >= K for f in finished):
            break
        beam_scores = new_scores
        rows = (torch.arange(batch, device=device)[:, None] * K + new_origins).view(-1)
        state, y = step.state[rows], new_words.view(-1)
        coverage = None if step.coverage is None else step.coverage[rows]
    best = [[_backtrack(hyp, b, K, history) for hyp in sorted(f, reverse=True)[:n_best]] for b, f in enumerate(finished)]
    return best, weighed


def _advance(finished, top_scores, origins, words, t, K, eos, ranking, record):
    """Move EOS candidates to `finished`, ranked by log p / lp + the coverage term of their beam (ranking:
    lp at this length, and the term of each sentence's K beams); keep the K best others, in the order
    given, as the next beams. Every candidate weighed is recorded as a Candidate, with its fate
    (record: the Candidates of each sentence, the Candidate each current beam is, each candidate's
    own log p and the stepwise term it was ranked with)."""
    weighed, beam_nodes, top_log_p, top_terms = record
    length_norm, ending = ranking
    scores, next_origins, next_words = [], [], []
    for b in range(top_scores.size(0)):
        searching = len(finished[b]) < K  # a sentence done waits for the others of its batch: nothing to record
        kept, nodes = [], []
        candidates = zip(top_scores[b].tolist(), origins[b].tolist(), words[b].tolist(), top_log_p[b].tolist(),
                         top_terms[b].tolist())
        for rank, (score, origin, word, log_p, term) in enumerate(candidates):
            if score == float("-inf"):
                continue
            fate = "pruned"
            if word == eos:  # as in fairseq, EOS ends a hypothesis only from the top K candidates
                if rank < K and len(finished[b]) < K:
                    finished[b].append((score / length_norm + ending[b][origin], score, t, origin, word))
                    fate = "ended"
            elif len(kept) < K:
                kept.append((score, origin, word))
                nodes.append(len(weighed[b]))
                fate = "kept"
            if searching:
                weighed[b].append(Candidate(t + 1, beam_nodes[b][origin], word, log_p, score, fate, term))
        beam_nodes[b] = nodes + [-1] * (K - len(nodes))
        kept += [(float("-inf"), 0, eos)] * (K - len(kept))  # dead beams, never expanded again
        scores.append([k[0] for k in kept])
        next_origins.append([k[1] for k in kept])
        next_words.append([k[2] for k in kept])
    device = top_scores.device
    return (torch.tensor(scores, device=device), torch.tensor(next_origins, device=device),
            torch.tensor(next_words, device=device))


def _backtrack(best, b, K, history) -> Hypothesis:
    """Follow the origin pointers from a finished hypothesis back to the first step."""
    ranked, log_prob, t, origin, word = best
    tokens, rows = [word], [b * K + origin]
    for step in range(t - 1, -1, -1):
        origins, words, _ = history[step]
        tokens.append(int(words[b, origin]))
        origin = int(origins[b, origin])
        rows.append(b * K + origin)
    tokens.reverse()
    rows.reverse()
    trace = {name: None if history[0][2][name] is None else
             torch.stack([history[s][2][name][row] for s, row in enumerate(rows)]).numpy() for name in TRACE_FIELDS}
    return Hypothesis(tokens, log_prob, trace, ranked)
