"""How far the page's integrated gradients lie from their integral, score by score.

    python -m benchmarks.attribution_accuracy checkpoints/transformer-en-fr checkpoints/luong-en-fr checkpoints/bahdanau-en-fr

Completeness (a step's scores add up to its change in log-probability) bounds their sum, not each score: errors of
opposite signs cancel in it. So each model's scores, as the page computes them (`Translator.attribute`), are set
against a reference that does not rely on completeness: the path cut into --pieces evenly spread pieces of --points
Gauss–Legendre points each, for every step (`attribution.evenly`). For each step, the distance is the largest
|A_tj − A_tj(reference)| over the source pieces j, as a share of the reference row's largest |A_tj|; printed are its
largest, 90th percentile and median over the steps of the page's first six examples and the 15-word timing
sentence, the path points the page's took (most for a step) and the seconds they took. With --tolerance, the scores
set against the reference are error_controlled's at that tolerance instead (attribution.error_controlled: pieces
halved where their own points see a single score's error), to weigh it against the page's rule.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attn_demo.decoding.attribution import error_controlled, evenly  # noqa: E402
from attn_demo.evaluation.timing import SENTENCES  # noqa: E402
from attn_demo.examples import EXAMPLES  # noqa: E402
from attn_demo.translator import load_translator  # noqa: E402

TEXTS = (*EXAMPLES[:6], SENTENCES[15])


def distances(translator, texts, pieces: int, points: int, integrator=None) -> tuple[np.ndarray, int, float]:
    """Each step's distance from the reference (see the module's docstring) of the page's scores, or those of
    `integrator`; the most path points a step took, and the seconds they took in all."""
    rows, most, seconds = [], 0, 0.0
    for text in texts:
        french = translator.translate(text).target_tokens
        started = time.perf_counter()
        shown = translator.attribute(text, french, integrator=integrator)
        seconds += time.perf_counter() - started
        reference = translator.attribute(text, french, integrator=evenly(pieces, points)).scores
        rows.append(np.abs(shown.scores - reference).max(1) / np.maximum(np.abs(reference).max(1), 1e-12))
        most = max(most, shown.path_points)
    return np.concatenate(rows), most, seconds


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+", type=Path)
    p.add_argument("--pieces", type=int, default=96, help="the reference's evenly spread pieces of the path")
    p.add_argument("--points", type=int, default=4, help="the reference's Gauss–Legendre points on each piece")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tolerance", type=float, help="measure attribution.error_controlled at this tolerance, not the page's rule")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    integrator, rule = ((None, "the page's") if args.tolerance is None else
                        (error_controlled(args.tolerance), f"error_controlled({args.tolerance:g})'s"))
    report = []
    for checkpoint in args.checkpoints:
        found, most, seconds = distances(load_translator(checkpoint), TEXTS, args.pieces, args.points, integrator)
        row = {"model": checkpoint.name, "rule": rule, "steps": len(found), "largest": float(found.max()),
               "p90": float(np.quantile(found, 0.9)), "median": float(np.median(found)), "path_points": most,
               "seconds": round(seconds, 2)}
        print(f"{row['model']}: {row['steps']} steps, from a reference of {args.pieces} × {args.points} points: "
              f"largest {row['largest']:.1%}, 90th percentile {row['p90']:.1%}, median {row['median']:.1%} of a row's "
              f"largest; {rule} took up to {most} path points a step, {seconds:.1f} s in all", flush=True)
        report.append(row)
    return report


if __name__ == "__main__":
    main()
