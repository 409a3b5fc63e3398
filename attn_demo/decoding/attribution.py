"""What does the model rely on? Gradient attribution of each output piece to the source pieces,
beside α, and how well the two agree (Jain & Wallace 2019; Wiegreffe & Pinter 2019; Ding, Xu &
Koehn 2019 found saliency aligns words better than attention).

For output step t the attributed quantity is f_t(x) = log p(y_t | y_<t, x), the French teacher-forced
(the model's own translation, or a given sentence). Captum attributes it to the source embeddings
E x_j, summed over the embedding dimensions into one number per source piece j:

    integrated gradients   A_tj = Σ_d (x_jd − x'_jd) ∫_0^1 ∂f_t(x' + a(x − x')) / ∂x_jd da,
                           baseline x' = 0 (the padding embedding); completeness: Σ_j A_tj = f_t(x) − f_t(x')
    input × gradient       A_tj = Σ_d x_jd ∂f_t(x) / ∂x_jd

The steps are attributed in batches (the sentence repeated, copy t asking about y_t): all T at once
for input × gradient; for integrated gradients, pieces of the integration path of many steps, each
piece's Gauss–Legendre points batched too (Captum's internal_batch_size). A step's path is first cut where
f_t changes (a scan of f_t along it, forward only); where its integral misses completeness, the pieces that miss
it are halved and integrated again (below). error_controlled also halves the pieces whose own points see a single
score's error; benchmarks.attribution_accuracy weighs it against this rule.
Copy t runs the decoder up to step t only (Decoder.readout_at), so a sentence's T copies cost about
T²/2 decoder steps, not T².

The embeddings are looked up once and handed to the model as an input (Encoder.annotate), so no
hook is set on the model: many requests attribute with the one shared model at once, each on its
own tensors. For the same reason the batches of one attribution are independent, and `workers` threads
may integrate them at once (each with torch's own threads: one in the app): the same numbers, sooner."""
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from captum.attr import InputXGradient, IntegratedGradients, Saliency

from attn_demo.models.rnn import gradients_through_eval_gru

METHODS = ("integrated-gradients", "input-x-gradient")
# Integrated gradients on a path cut where it turns: the integral is additive over pieces of the path,
# and each piece has its own completeness, Σ_j A_tj over [a, b] = f_t(b·x) − f_t(a·x) (x' = 0), so a miss
# can be found and mended where it happens. Every step's f_t is first read at SCAN_POINTS + 1 evenly spaced
# points of the path (a forward pass each, no gradient) and the path cut into FIRST_PIECES pieces that each
# hold an equal share of its change Σ|Δf_t| (fewer where the change is within one interval of the scan); each piece
# is integrated on PIECE_POINTS points. While a step's gap is over MAX_GAP, each of its pieces whose own miss is
# over its share of MAX_GAP (its length's) is halved, each half on PIECE_POINTS points, down to 2^-MAX_HALVINGS of
# the path. Why the scan: the Transformer's f_t(a·x) turns within a ∈ [0.15, 0.45] (the scaled embedding
# overtaking the positions) and is flat after, where 20 evenly spread points left its shown scores 3–18% of a
# row's largest away from the integral; cut where f_t changes, 3–6.5%, in less time (CONTRIBUTING.md).
# Measured on the page's 41-word example: Bahdanau's late steps turn sharply between a = 0.56 and 0.6, where 40 and
# then 80 evenly spread points still left a 74.5% gap; halved pieces bring every step under 5%.
SCAN_POINTS = 8
FIRST_PIECES = 3
PIECE_POINTS = 6
MAX_HALVINGS = 6
MAX_GAP = 0.05
POINTS_PER_PASS = 160  # path points in one batch: 8 steps of 20 at once was fastest (all T of a 20-word sentence: 1.9 → 2.4 s, Bahdanau)


# Completeness bounds a step's sum, not its single scores: where the pieces' errors differ in sign across the source
# pieces they cancel in the sum. A feed-forward ReLU's gradient jumps wherever one of its units turns on along the path,
# and there quadrature converges slowly: on the page's first six examples and a 15-word sentence, set against 96
# evenly spread pieces of 4 points each (`python -m benchmarks.attribution_accuracy`), the Transformer's scores (ReLU)
# lay up to 25% of a row's largest from the integral (median 4%), the GRU models' within 4.1%; on 16 evenly spread
# pieces of 4 points, the Transformer's up to 7.8%. GELU is smooth, but smooth is not enough: against the same
# reference, a Transformer trained with GELU from scratch (9.2M target pieces) lay within 0.8%, the shipped ReLU
# weights with GELU for ReLU up to 13.8% (median 1.0%), and fine-tuned back to their validation BLEU (89 updates)
# up to 11.4% (median 1.2%), their units presumably still turning on within short stretches of the path, as they
# learnt to under ReLU.
# The page says so beside a model whose gradient jumps.
JUMPING_GRADIENT_NOTE = ("Its feed-forward ReLUs make the gradient jump along the path: the attributions of a step can "
                         "add up to the right total while a single score still lies some way from its integral.")


def gradient_jumps(config) -> bool:
    """Whether a model's gradient jumps along the path: a Transformer whose feed-forward φ is ReLU (the GRUs' tanh
    and σ, and GELU, are smooth)."""
    return getattr(config, "activation", None) == "relu"


@dataclass(frozen=True, eq=False)
class Attribution:
    """Attribution of every output piece's log-probability to the source pieces."""

    method: str
    source_tokens: list[str]  # S pieces, EOS last
    target_tokens: list[str]  # T pieces, EOS last
    scores: np.ndarray  # A_tj (T, S), float32
    log_probs: np.ndarray  # f_t(x) (T,)
    completeness_gap: np.ndarray | None  # integrated gradients: |Σ_j A_tj − (f_t(x) − f_t(x'))| / |f_t(x) − f_t(x')| (T,)
    path_points: int | None  # integrated gradients: the most points of the integration path a step took


def log_likelihood(model, embedded, lengths, y_in, y_out, steps) -> torch.Tensor:
    """log p(y_t | y_<t, x) of a teacher-forced target at one step t per row, from the source
    embeddings (B, S, E), steps (B,) from 0: (B,). The decoder runs each row up to its step only, and
    only that step goes through the output layer (a vocabulary-wide softmax at every step of every row
    would cost T times as much; Decoder.readout_at). The source mask
    comes from the lengths, so that the all-zero baseline still reads as a sentence of that length."""
    annotations, backward_first = model.encoder.annotate(embedded, lengths)
    mask = torch.arange(embedded.size(1), device=embedded.device)[None, :] < lengths[:, None]  # (B, S)
    readouts = model.decoder.readout_at(y_in, model.decoder.memory(annotations, backward_first, mask), steps)  # (B, E)
    logits = model.decoder.logits(readouts)  # (B, V)
    rows = torch.arange(embedded.size(0), device=embedded.device)
    return logits.log_softmax(-1).gather(-1, y_out[rows, steps][:, None])[:, 0]


def attribute(model, source_ids: list[int], target_ids: list[int], method: str, workers: int = 1,
              integrator: Callable | None = None) -> tuple:
    """A_tj (T, S), f_t(x) (T,) and, for integrated gradients, the completeness gap (T,) and the
    most path points any step's integral took (`integrator`: integrated_gradients, or e.g. evenly(…) for a
    reference; its batches on `workers` threads)."""
    if method not in METHODS:
        raise ValueError(f"unknown attribution method {method!r}; valid: {', '.join(METHODS)}")
    device, T = next(model.parameters()).device, len(target_ids)
    src = torch.tensor([source_ids] * T, device=device)  # (T, S): copy t asks about y_t
    embedded = model.encoder.embed(src).detach().requires_grad_()  # E x_j (T, S, E), what is attributed to
    lengths = torch.full((T,), len(source_ids), device=device)
    y_in = torch.tensor([[model.config.bos_id, *target_ids[:-1]]] * T, device=device)  # (T, T)
    y_out = torch.tensor([target_ids] * T, device=device)
    forward = lambda *inputs: log_likelihood(model, *inputs)  # noqa: E731
    args = (lengths, y_in, y_out, torch.arange(T, device=device))  # Captum repeats them along the path
    with torch.enable_grad(), gradients_through_eval_gru():
        log_probs = forward(embedded, *args)  # f_t(x) (T,)
        if method == "input-x-gradient":
            scores = InputXGradient(forward).attribute(embedded, additional_forward_args=args)
            return scores.sum(-1).detach().float().cpu().numpy(), log_probs.detach().float().cpu().numpy(), None, None
        # Captum differentiates at its own points of the path: a graph back to `embedded` would cost 15%
        with threads(workers) as on_threads:
            scores, gap, points = (integrator or integrated_gradients)(IntegratedGradients(forward), embedded.detach(),
                                                                       args, log_probs.detach(), on_threads)
    return scores, log_probs.detach().float().cpu().numpy(), gap, points


@dataclass(frozen=True)
class Workers:
    """The threads that integrate an attribution's batches: `count` of them, `map` running a function over the
    batches on them (the built-in map: one after the other, on the caller's thread)."""

    count: int = 1
    map: Callable = map

    def run(self, work: Callable, items: int, points: int = 1) -> list:
        """work(block) for blocks of the indices of `items` in order, each of about POINTS_PER_PASS path points (`points`
        an item), as many blocks for each worker; the results in order."""
        batches = min(items, self.count * -(-items * points // POINTS_PER_PASS))
        return list(self.map(work, np.array_split(np.arange(items), batches)))


@contextmanager
def threads(count: int):
    """Workers: the caller's thread alone, or with a count over one a pool of that many threads."""
    if count < 1:
        raise ValueError(f"an attribution needs at least one worker, not {count}")
    if count == 1:
        yield Workers()
        return
    with ThreadPoolExecutor(count, thread_name_prefix="integrate") as pool:
        yield Workers(count, pool.map)


@dataclass(eq=False)
class Piece:
    """A piece [start, end] of step t's integration path, from start·x to end·x (x' = 0), with f_t at its
    ends; once integrated, its A_tj (S,) on `points` points and its miss, Σ_j A_tj − (f_t(end·x) − f_t(start·x))."""

    step: int
    start: float
    end: float
    f_start: float
    f_end: float
    points: int = 0
    scores: np.ndarray | None = None
    miss: float = 0.0
    unresolved: np.ndarray | None = None  # error_controlled: what its points leave unresolved, per source piece (S,)


def integrated_gradients(ig, embedded, args, log_probs, workers: Workers = Workers()) -> tuple:
    """Integrated gradients of every step, its path first cut where f_t changes, then halved where it misses
    completeness (SCAN_POINTS … MAX_HALVINGS above), each round's batches integrated by `workers` (threads).
    Returns A (T, S), the completeness gap (T,) and the most points any step's integral took."""
    paths, change = first_cut(ig, embedded, args, log_probs, workers)
    todo = [piece for path in paths for piece in path]
    while todo:
        integrate(ig, embedded, args, todo, PIECE_POINTS, workers)
        todo = halve(ig, embedded, args, paths, missing(paths, change), workers)
    return totals(paths, change)


def evenly(pieces: int, points: int) -> Callable:
    """An integrator of the path as integrated_gradients is, on `pieces` evenly spread pieces of `points` points each
    for every step (no scan, no halving): with many, a reference that does not rely on completeness."""
    def integrate_evenly(ig, embedded, args, log_probs, workers: Workers = Workers()) -> tuple:
        T = embedded.size(0)
        paths = [[Piece(t, i / pieces, (i + 1) / pieces, 0.0, 0.0) for i in range(pieces)] for t in range(T)]
        integrate(ig, embedded, args, [piece for path in paths for piece in path], points, workers)
        scores = np.stack([sum(piece.scores for piece in path) for path in paths])
        change = log_probs.float().cpu().numpy() - values_at(ig, embedded, args, np.arange(T), np.zeros(T), workers)
        return scores, np.abs(scores.sum(1) - change) / np.maximum(np.abs(change), 1e-12), pieces * points

    return integrate_evenly


# An integrator that watches single scores, not only their sum: each piece of a step's path is sampled at PIECE_POINTS
# Gauss–Legendre points, the integrand g_j(a) = Σ_d x_jd ∂f_t(a·x)/∂x_jd of every source piece j at each (Captum's
# Saliency, times x). On the piece the samples give g_j's Legendre coefficients c_0 … c_{N−1} (legendre: exact for a
# polynomial of degree < N); the integral is the piece's length × c_0, what Gauss–Legendre's sum gives, and the last two
# coefficients times the length estimate what its points leave unresolved: small where g_j is smooth on the piece,
# large where it turns or jumps. Besides the pieces that miss completeness (as integrated_gradients halves them: a turn
# that falls between all the points of a piece is seen only there), a step's pieces that leave the most unresolved are
# halved until what its others leave sums to at most `tolerance` × the row's largest |A_tj|. Where the integrand is
# smooth it costs what the page's rule does and keeps single scores near their integral: on the page's first six
# examples and the 15-word sentence, tolerance 0.3, one thread (benchmarks.attribution_accuracy --tolerance 0.3),
# Luong general within 0.0% of a row's largest in 3.8 s (the page's rule: 0.5%, 4.0 s), Bahdanau 0.7% in 8.8 s
# (4.1%, 9.4 s); where ReLUs make it jump, the estimate keeps finding more to halve: the shipped Transformer 3.1% in
# 128 s (25.4%, 17.4 s), up to 576 points a step.
def error_controlled(tolerance: float) -> Callable:
    """An integrator of the path as integrated_gradients is (the same scan, first pieces and halving where completeness
    is missed), its pieces also halved where their own points estimate a single score's error over `tolerance` of its
    row's largest (above)."""
    def integrate_to_tolerance(ig, embedded, args, log_probs, workers: Workers = Workers()) -> tuple:
        paths, change = first_cut(ig, embedded, args, log_probs, workers)
        todo = [piece for path in paths for piece in path]
        while todo:
            sample(ig, embedded, args, todo, workers)
            halved = missing(paths, change)
            todo = halve(ig, embedded, args, paths, halved + unresolved(paths, tolerance, set(halved)), workers)
        return totals(paths, change)

    return integrate_to_tolerance


def legendre(points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights on [−1, 1], and the matrix (points, points) that turns samples g(node_i) into
    Legendre coefficients, c_k = (2k + 1)/2 Σ_i w_i P_k(node_i) g(node_i): exact for a polynomial of degree < points."""
    nodes, weights = np.polynomial.legendre.leggauss(points)
    at_nodes = np.polynomial.legendre.legvander(nodes, points - 1).T  # P_k(node_i) (k, i)
    return nodes, weights, (2 * np.arange(points) + 1)[:, None] / 2 * at_nodes * weights[None, :]


def sample(ig, embedded, args, pieces: list[Piece], workers: Workers = Workers()):
    """Each piece's integral, its miss and what its points leave unresolved (error_controlled), from the integrand at
    its PIECE_POINTS Gauss–Legendre points, filled in place, in batches of about POINTS_PER_PASS path points run by
    `workers`."""
    nodes, _, transform = legendre(PIECE_POINTS)
    saliency = Saliency(ig.forward_func)

    @torch.enable_grad()  # as the caller's thread: a pool's threads start with their own grad mode
    def sample_batch(block):
        batch = [pieces[i] for i in block]
        rows = torch.tensor(np.repeat([piece.step for piece in batch], PIECE_POINTS), device=embedded.device)
        scales = np.concatenate([(piece.start + piece.end) / 2 + (piece.end - piece.start) / 2 * nodes for piece in batch])
        x = embedded[rows]  # (P·N, S, E)
        at = (x * torch.tensor(scales, dtype=x.dtype, device=x.device)[:, None, None]).requires_grad_()  # a·x
        gradient = saliency.attribute(at, abs=False, additional_forward_args=tuple(arg[rows] for arg in args))
        integrand = (x * gradient).sum(-1).detach().float().cpu().numpy()  # g_j(a) (P·N, S)
        coefficients = np.einsum("ki,pis->pks", transform, integrand.reshape(len(batch), PIECE_POINTS, -1))  # (P, N, S)
        for piece, c in zip(batch, coefficients):
            length = piece.end - piece.start
            piece.points, piece.scores = PIECE_POINTS, length * c[0]
            piece.miss = float(piece.scores.sum()) - (piece.f_end - piece.f_start)
            piece.unresolved = length * np.abs(c[-2:]).sum(0)

    workers.run(sample_batch, len(pieces), PIECE_POINTS)


def unresolved(paths: list[list[Piece]], tolerance: float, halved: set) -> list[Piece]:
    """Besides the pieces `halved` already, each step's pieces that leave the most unresolved (the most over its source
    pieces), until what its others leave sums to at most tolerance × the row's largest |A_tj|."""
    more = []
    for path in paths:
        allowed = tolerance * np.abs(sum(piece.scores for piece in path)).max()
        kept = [piece for piece in path if piece not in halved]
        left = sum(piece.unresolved.max() for piece in kept)
        for piece in sorted(kept, key=lambda piece: -piece.unresolved.max()):
            if left <= allowed:
                break
            if piece.end - piece.start > 2.0 ** -MAX_HALVINGS:
                more.append(piece)
                left -= piece.unresolved.max()
    return more


def missing(paths: list[list[Piece]], change: list[float]) -> list[Piece]:
    """The pieces of the steps whose gap is over MAX_GAP that miss their share of it (misses): to be halved."""
    return [piece for path, c in zip(paths, change) if gap(path, c) > MAX_GAP for piece in path if misses(piece, c)]


def totals(paths: list[list[Piece]], change: list[float]) -> tuple:
    """A (T, S) summed over each step's pieces, the completeness gap (T,) and the most points any step took."""
    scores = np.stack([sum(piece.scores for piece in path) for path in paths])
    gaps = np.array([gap(path, c) for path, c in zip(paths, change)])
    return scores, gaps, max(sum(piece.points for piece in path) for path in paths)


def first_cut(ig, embedded, args, log_probs, workers: Workers = Workers()) -> tuple[list[list[Piece]], list[float]]:
    """Every step's path cut where its scan sees f_t change (first_pieces), and |f_t(x) − f_t(x')| of each step."""
    paths = [first_pieces(t, values) for t, values in enumerate(scan(ig, embedded, args, log_probs, workers))]
    return paths, [max(abs(path[-1].f_end - path[0].f_start), 1e-12) for path in paths]


def scan(ig, embedded, args, log_probs, workers: Workers = Workers()) -> np.ndarray:
    """f_t at SCAN_POINTS + 1 evenly spaced points of every step's path, from x' = 0 to x: (T, SCAN_POINTS + 1)."""
    T, below_x = embedded.size(0), np.arange(SCAN_POINTS) / SCAN_POINTS  # the scan's a, but x's own (a = 1)
    # f_t at every point of the scan but x itself (f_t(x) is log_probs), in step order
    scanned = values_at(ig, embedded, args, np.repeat(np.arange(T), SCAN_POINTS), np.tile(below_x, T), workers)
    return np.column_stack([scanned.reshape(T, SCAN_POINTS), log_probs.tolist()])


def first_pieces(step: int, values: np.ndarray) -> list[Piece]:
    """A step's path cut at the points of its scan (f_t read at evenly spaced points from x' to x, `values`) where
    its running change Σ|Δf_t| first reaches each k/FIRST_PIECES of the whole: pieces that each hold an equal share
    of the change."""
    grid = np.linspace(0.0, 1.0, len(values))
    change = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(values)))])  # (SCAN_POINTS + 1,)
    shares = change[-1] * np.arange(1, FIRST_PIECES) / FIRST_PIECES
    cuts = [int(i) for i in np.unique(np.searchsorted(change, shares)) if 0 < i < len(grid) - 1]
    ends = [0, *cuts, len(grid) - 1]
    return [Piece(step, float(grid[i]), float(grid[j]), float(values[i]), float(values[j])) for i, j in zip(ends, ends[1:])]


def values_at(ig, embedded, args, steps: np.ndarray, scales: np.ndarray, workers: Workers = Workers()) -> np.ndarray:
    """f_t(a·x) for each step t of `steps` at its a of `scales`, without gradients, in batches of about
    POINTS_PER_PASS in the given (step) order, run by `workers`."""
    def values_of(block):
        rows = torch.tensor(steps[block], device=embedded.device)
        scale = torch.tensor(scales[block], dtype=embedded.dtype, device=embedded.device)[:, None, None]
        with torch.no_grad():
            return ig.forward_func(embedded[rows] * scale, *(arg[rows] for arg in args)).float().cpu().numpy()

    return np.concatenate(workers.run(values_of, len(steps)))


def gap(path: list[Piece], change: float) -> float:
    """A step's completeness gap: what its pieces miss together, over |f_t(x) − f_t(x')|."""
    return abs(sum(piece.miss for piece in path)) / change


def misses(piece: Piece, change: float) -> bool:
    """Whether a piece misses completeness by more than its share of MAX_GAP and may still be halved."""
    length = piece.end - piece.start
    return abs(piece.miss) > MAX_GAP * change * length and length > 2.0 ** -MAX_HALVINGS


def halve(ig, embedded, args, paths: list[list[Piece]], pieces: list[Piece], workers: Workers = Workers()) -> list[Piece]:
    """Each of `pieces` replaced in its path by its two halves, f_t at the middles computed without gradients;
    returns the new halves, in step order."""
    if not pieces:
        return []
    middles = [(piece.start + piece.end) / 2 for piece in pieces]
    at_middles = values_at(ig, embedded, args, np.array([piece.step for piece in pieces]), np.array(middles), workers)
    halves = {piece: [Piece(piece.step, piece.start, middle, piece.f_start, float(f)), Piece(piece.step, middle, piece.end, float(f), piece.f_end)]
              for piece, middle, f in zip(pieces, middles, at_middles)}
    for t, path in enumerate(paths):
        paths[t] = [half for piece in path for half in halves.get(piece, [piece])]
    return [half for path in paths for half in path if half.scores is None]


def integrate(ig, embedded, args, pieces: list[Piece], points: int, workers: Workers = Workers()):
    """Each piece's integral on `points` Gauss–Legendre points and its miss, filled in place, in batches
    of about POINTS_PER_PASS path points (the pieces in step order, so a batch's decoder runs are alike),
    run by `workers`: for n workers, n times as many batches, as many for each (a 20-word sentence's
    Transformer on 2 threads: 4.6 → 2.7 s, CONTRIBUTING.md)."""
    @torch.enable_grad()  # as the caller's thread: a pool's threads start with their own grad mode
    def integrate_batch(block):
        batch = [pieces[i] for i in block]
        rows = torch.tensor([piece.step for piece in batch], device=embedded.device)
        start, end = (torch.tensor([getattr(piece, side) for piece in batch], device=embedded.device,
                                   dtype=embedded.dtype)[:, None, None] for side in ("start", "end"))
        scores = ig.attribute(embedded[rows] * end, embedded[rows] * start, n_steps=points, internal_batch_size=len(batch) * points,
                              additional_forward_args=tuple(arg[rows] for arg in args)).sum(-1).detach().float().cpu().numpy()
        for piece, row in zip(batch, scores):
            piece.points, piece.scores, piece.miss = points, row, float(row.sum()) - (piece.f_end - piece.f_start)

    workers.run(integrate_batch, len(pieces), points)


def ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 0, ties given the mean of the ranks they share (as Spearman's ρ needs)."""
    order = np.argsort(values, kind="stable")
    plain = np.empty(len(values))
    plain[order] = np.arange(len(values))
    _, tie, counts = np.unique(values, return_inverse=True, return_counts=True)
    return (np.bincount(tie, weights=plain) / counts)[tie]


def agreement(alpha: np.ndarray, scores: np.ndarray) -> dict:
    """How α (T, S) and an attribution (T, S) agree, step by step: Spearman's ρ between the two rows
    (the mean over steps where both rows vary), and the share of steps whose largest entries sit on
    the same source piece."""
    rhos = []
    for a, s in zip(alpha, scores):
        ra, rs = ranks(a), ranks(s)
        if ra.std() > 0 and rs.std() > 0:
            rhos.append(float(np.corrcoef(ra, rs)[0, 1]))
    same = alpha.argmax(1) == scores.argmax(1)
    return {"spearman_mean": float(np.mean(rhos)) if rhos else None, "argmax_agreement": float(same.mean()),
            "steps": len(alpha)}
