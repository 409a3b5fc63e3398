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
for input × gradient; for integrated gradients blocks of STEPS_PER_PASS steps, each with the points
of the integration path batched too (Captum's internal_batch_size), and a step whose integral needs
more points is computed again alone. Copy t runs the decoder up to step t only (Decoder.readout_at),
so a sentence's T copies cost about T²/2 decoder steps, not T².

The embeddings are looked up once and handed to the model as an input (Encoder.annotate), so no
hook is set on the model: many requests attribute with the one shared model at once, each on its
own tensors."""
from dataclasses import dataclass

import numpy as np
import torch
from captum.attr import InputXGradient, IntegratedGradients

METHODS = ("integrated-gradients", "input-x-gradient")
# Points of the Gauss–Legendre rule, tried in turn until every step's completeness gap is ≤ MAX_GAP.
# Measured on the benchmark's 20-word sentence: 16 points left the Bahdanau of 2026-11-23 a 7% gap (so 48
# points of work in all), 20 points 2.4% (Luong 0.05% at 16); the examples of the page need no more than
# 20 with either model. A longer sentence may take 40 or 80.
IG_STEPS = (20, 40, 80)
MAX_GAP = 0.05
STEPS_PER_PASS = 8  # steps attributed together: all T of a 20-word sentence at once was slower (1.9 → 2.4 s, Bahdanau)


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


def attribute(model, source_ids: list[int], target_ids: list[int], method: str) -> tuple:
    """A_tj (T, S), f_t(x) (T,) and, for integrated gradients, the completeness gap (T,) and the
    most path points any step took (each step takes the fewest of IG_STEPS that bring its gap under
    MAX_GAP, else the most tried)."""
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
    with torch.enable_grad(), torch.backends.cudnn.flags(enabled=False):  # cuDNN's GRU backward needs training mode
        log_probs = forward(embedded, *args)  # f_t(x) (T,)
        if method == "input-x-gradient":
            scores = InputXGradient(forward).attribute(embedded, additional_forward_args=args)
            return scores.sum(-1).detach().float().cpu().numpy(), log_probs.detach().float().cpu().numpy(), None, None
        scores, gap, points = integrated_gradients(IntegratedGradients(forward), embedded, args, log_probs)
    return scores, log_probs.detach().float().cpu().numpy(), gap, points


def integrated_gradients(ig, embedded, args, log_probs) -> tuple:
    """Integrated gradients of every step with the fewest of IG_STEPS path points that bring its gap
    under MAX_GAP: a step that needs more points is attributed again alone, so one hard step does not redo
    the sentence.
    Returns A (T, S), the completeness gap (T,) and the most points taken."""
    lengths, y_in, y_out, steps = args
    baseline = torch.zeros_like(embedded)  # x' = 0: the padding piece's embedding
    difference = log_probs - ig.forward_func(baseline, *args)  # f_t(x) − f_t(x')
    change = difference.abs().clamp_min(1e-12)
    scores, gap = np.zeros(tuple(embedded.shape[:2]), dtype=np.float32), np.full(embedded.size(0), np.inf)
    todo = np.arange(embedded.size(0))  # the steps still to attribute
    for points in IG_STEPS:
        for block in np.array_split(todo, -(-len(todo) // STEPS_PER_PASS)):
            rows = torch.as_tensor(block, device=embedded.device)
            attributed = ig.attribute(embedded[rows], baseline[rows], n_steps=points, internal_batch_size=len(block) * points,
                                      additional_forward_args=(lengths[rows], y_in[rows], y_out[rows], steps[rows])).sum(-1)
            scores[block] = attributed.detach().float().cpu().numpy()
            delta = attributed.sum(-1) - difference[rows]  # Captum's convergence delta, from f(x) and f(x') at hand
            gap[block] = (delta.abs() / change[rows]).detach().cpu().numpy()
        todo = todo[gap[todo] > MAX_GAP]
        if len(todo) == 0:
            break
    return scores, gap, points


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
