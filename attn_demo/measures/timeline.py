"""How attention comes to be: a training run's timeline of the page's sentences.

At fixed points of a run (PIECE_POINTS target pieces, dense at the start where most changes, then at
every validation) `train` translates the probe sentences (the page's examples and its long
example) greedily and records, with the run's validation BLEU and training loss there:

    {"from_scratch": bool, "made_these_weights": bool, "command": str,
     "points": [{"target_pieces": int, "valid_bleu": float, "loss": float, "grid": str (a Transformer's),
                 "probes": [{"source": str, "translation": str, "english_pieces": [str],
                             "french_pieces": [str], "alpha": [[int]]}]}]}

alpha is α_tj as T rows (output pieces, EOS last) of S weights (source pieces, EOS last), rounded
to ALPHA_DECIMALS and written in those units (123 for 0.123; read back as 0.123); a model without
attention has none ("alpha": null). A Transformer's α is the grid its config showed as it trained, named by grid
(grids.pick_key: "2.mean" for the mean of layer 2's heads); the alignment check may choose another for the page
once it is trained (evaluate --alignments), and Watch it learn says so. loss is the mean
label-smoothed cross-entropy per target piece of the batches trained on since the previous point
(at the first point, of the first batch, before any update). A run continued from a checkpoint
of the same attention appends its points after those of the run that made it, its pieces counted
on; timeline.json sits in the checkpoint folder beside the weights, up to them (the run folder's goes
on to the run's end). The mean of a run's last saves (attn_demo.training.average) ends with a point of its own in
place of the last save's, marked "averaged_steps": [int]. A model whose weights come from runs that recorded none can be shown a
separate run's, marked as such:

    python -m attn_demo.checkpoints.card checkpoints/a-model --timeline-from runs/a-run-from-scratch
"""
import json
from pathlib import Path

import torch

from attn_demo.decoding.grids import pick_key
from attn_demo.decoding.search import greedy_search, max_target_length
from attn_demo.examples import EXAMPLES, LONG_EXAMPLE
from attn_demo.models.attention import KINDS

TIMELINE = "timeline.json"
PROBES = [*EXAMPLES, LONG_EXAMPLE]
PIECE_POINTS = (0, 100_000, 250_000, 500_000, 1_000_000)  # then doubling: 2M, 4M, 8M …
ALPHA_DECIMALS = 3  # α to 0.001: a grid's colour and hover are unchanged, the file stays small (≤ 1 MB)
ALPHA_UNIT = 10 ** ALPHA_DECIMALS  # α on disk in whole thousandths: "21" for 0.021, "0" for 0.0, 44% of the decimals' file
AGREEMENT = 0.5  # "its α agrees with its final alignment": on at least half the final translation's steps


def next_point(pieces: int) -> int:
    """The first scheduled point after `pieces` target pieces."""
    for point in PIECE_POINTS:
        if point > pieces:
            return point
    point = PIECE_POINTS[-1]
    while point <= pieces:
        point *= 2
    return point


@torch.inference_mode()
def probe(model, src_tok, tgt_tok, source: str) -> dict:
    """One probe sentence translated greedily, with its α (None without attention)."""
    ids = src_tok.encode(source) + [model.config.eos_id]
    device = next(model.parameters()).device
    src = torch.tensor([ids], device=device)
    lengths = torch.tensor([len(ids)], device=device)
    was_training = model.training
    model.eval()
    hypothesis = greedy_search(model, model.encode(src, lengths), max_target_length(lengths))[0]
    model.train(was_training)
    alpha = hypothesis.trace["attention"]
    return {
        "source": source, "translation": tgt_tok.decode(hypothesis.tokens[:-1]),
        "english_pieces": src_tok.pieces(ids), "french_pieces": tgt_tok.pieces(hypothesis.tokens),
        "alpha": None if alpha is None else [[round(float(a), ALPHA_DECIMALS) for a in row] for row in alpha],
    }


def point(model, src_tok, tgt_tok, target_pieces: int, valid_bleu: float, loss: float) -> dict:
    config = model.config
    grid = {"grid": pick_key(config.layer_shown, config.shown_head)} if KINDS[config.attention].heads else {}
    return {"target_pieces": target_pieces, "valid_bleu": round(valid_bleu, 2), "loss": round(loss, 4), **grid,
            "probes": [probe(model, src_tok, tgt_tok, source) for source in PROBES]}


def read_timeline(folder: Path) -> dict | None:
    """The timeline of a checkpoint folder, its α as numbers from 0 to 1, or None for a folder without one."""
    path = Path(folder) / TIMELINE
    if not path.is_file():
        return None
    return _with_alpha(json.loads(path.read_text(encoding="utf-8")), _alpha_from_units, path)


def write_timeline(folder: Path, timeline: dict) -> None:
    """timeline.json in `folder`, its α in ALPHA_UNIT units."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    on_disk = _with_alpha(timeline, lambda alpha, _: [[round(a * ALPHA_UNIT) for a in row] for row in alpha])
    (Path(folder) / TIMELINE).write_text(json.dumps(on_disk, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def _with_alpha(timeline: dict, convert, path: Path | None = None) -> dict:
    """The timeline with every probe's α (where it has one) converted by convert(alpha, path)."""
    return {**timeline, "points": [
        {**p, "probes": [{**one, "alpha": None if one["alpha"] is None else convert(one["alpha"], path)} for one in p["probes"]]}
        for p in timeline["points"]]}


def _alpha_from_units(alpha: list, path: Path) -> list:
    """α read back from whole ALPHA_UNIT units; a decimal in their place is a file in another format, refused: read
    as units, its α would be a thousand times too small."""
    if not all(type(a) is int for row in alpha for a in row):
        raise ValueError(f"{path} holds α as decimals, not in whole units of 1/{ALPHA_UNIT}: convert it with "
                         "write_timeline(its folder, json.loads(its text))")
    return [[a / ALPHA_UNIT for a in row] for row in alpha]


def kept_point(timeline: dict) -> dict:
    """The point whose weights a run kept: the last with the best validation BLEU (train keeps the
    best model, and a later tie replaces it)."""
    best = max(p["valid_bleu"] for p in timeline["points"])
    return [p for p in timeline["points"] if p["valid_bleu"] == best][-1]


def continued(earlier: dict | None) -> tuple[list, int]:
    """The points a run continued from a checkpoint starts with, and the pieces it counts on from:
    the earlier run's points up to the weights it kept. ([], 0) without an earlier timeline, or with
    one that did not make the checkpoint's weights (attached from a separate run, `attach`): that run
    is not the history of these weights, so the continued run records its own from 0."""
    if not earlier or not earlier["points"] or not earlier["made_these_weights"]:
        return [], 0
    pieces = kept_point(earlier)["target_pieces"]
    return [p for p in earlier["points"] if p["target_pieces"] <= pieces], pieces


def argmax_agreement(alpha: list, final: list) -> tuple[int, int]:
    """(steps agreeing, steps) between α at some point and the final α of one probe: at each step t
    of the final translation, whether the most-attended source piece is the same (a step the earlier
    translation does not reach disagrees)."""
    agree = sum(1 for t, row in enumerate(final) if t < len(alpha) and _argmax(alpha[t]) == _argmax(row))
    return agree, len(final)


def first_agreement(timeline: dict) -> int | None:
    """Target pieces at the first point whose α, over all probes' steps, agrees with the last point's
    argmax alignment on at least AGREEMENT of the steps; None without α."""
    final = timeline["points"][-1]["probes"]
    if final[0]["alpha"] is None:
        return None
    for p in timeline["points"]:
        counts = [argmax_agreement(mine["alpha"], last["alpha"]) for mine, last in zip(p["probes"], final)]
        if sum(a for a, _ in counts) >= AGREEMENT * sum(n for _, n in counts):
            return p["target_pieces"]
    return None


def _argmax(row: list) -> int:
    return max(range(len(row)), key=row.__getitem__)


def probe_history(timeline: dict, index: int) -> list[dict]:
    """Probe `index` (of PROBES) at every point of a timeline: the point's numbers and what the model
    wrote then, oldest first (what the page's "Watch it learn" draws)."""
    return [{"target_pieces": p["target_pieces"], "valid_bleu": p["valid_bleu"], "loss": p["loss"], **p["probes"][index]}
            for p in timeline["points"]]


def attach(run: Path, checkpoint: Path) -> dict:
    """The timeline of a separate run (e.g. from scratch, for a model whose weights were continued from
    others) put beside a checkpoint's weights, marked as not the run that made them."""
    timeline = read_timeline(run)
    if timeline is None:
        raise FileNotFoundError(f"{run} has no {TIMELINE}")
    timeline = {**timeline, "made_these_weights": False}
    write_timeline(checkpoint, timeline)
    return timeline
