"""How far the page's integrated gradients lie from their integral, score by score.

    python -m benchmarks.attribution_accuracy checkpoints/transformer-en-fr checkpoints/luong-en-fr checkpoints/bahdanau-en-fr

Completeness (a step's scores add up to its change in log-probability) bounds their sum, not each score: errors of
opposite signs cancel in it. So each model's scores, as the page computes them (`Translator.attribute`), are set
against a reference that does not rely on completeness: the path cut into --pieces evenly spread pieces of --points
Gauss–Legendre points each, for every step (`attribution.evenly`). For each step, the distance is the largest
|A_tj − A_tj(reference)| over the source pieces j, as a share of the reference row's largest |A_tj|; printed are its
largest, 90th percentile and median over the steps of the page's first six examples and the 15-word timing
sentence, and the path points the page's took (most for a step).
"""
import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attn_demo.decoding.attribution import evenly  # noqa: E402
from attn_demo.evaluation.timing import SENTENCES  # noqa: E402
from attn_demo.examples import EXAMPLES  # noqa: E402
from attn_demo.translator import load_translator  # noqa: E402

TEXTS = (*EXAMPLES[:6], SENTENCES[15])


def distances(translator, texts, pieces: int, points: int) -> tuple[np.ndarray, int]:
    """Each step's distance from the reference (see the module's docstring), and the most path points a step took."""
    rows, most = [], 0
    for text in texts:
        french = translator.translate(text).target_tokens
        page = translator.attribute(text, french)
        reference = translator.attribute(text, french, integrator=evenly(pieces, points)).scores
        rows.append(np.abs(page.scores - reference).max(1) / np.maximum(np.abs(reference).max(1), 1e-12))
        most = max(most, page.path_points)
    return np.concatenate(rows), most


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+", type=Path)
    p.add_argument("--pieces", type=int, default=96, help="the reference's evenly spread pieces of the path")
    p.add_argument("--points", type=int, default=4, help="the reference's Gauss–Legendre points on each piece")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    report = []
    for checkpoint in args.checkpoints:
        found, most = distances(load_translator(checkpoint), TEXTS, args.pieces, args.points)
        row = {"model": checkpoint.name, "steps": len(found), "largest": float(found.max()),
               "p90": float(np.quantile(found, 0.9)), "median": float(np.median(found)), "path_points": most}
        print(f"{row['model']}: {row['steps']} steps, from a reference of {args.pieces} × {args.points} points: "
              f"largest {row['largest']:.1%}, 90th percentile {row['p90']:.1%}, median {row['median']:.1%} of a row's "
              f"largest; the page's took up to {most} path points a step", flush=True)
        report.append(row)
    return report


if __name__ == "__main__":
    main()
