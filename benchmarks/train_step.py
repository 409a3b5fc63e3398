"""The training step of each checkpoint's model on real Tatoeba batches, in target pieces a second.

    python -m benchmarks.train_step checkpoints/transformer-en-fr checkpoints/luong-en-fr checkpoints/bahdanau-en-fr \
        --threads 2 --json benchmarks/train_step.json

Each model trains --batches batches of `train`'s own size (--max-tokens), length-sorted from a random sample of the
training pairs, with train's loss (training.train.training_loss), gradient clipping and Adam, dropout at its config's;
the first batch is not timed (allocations, oneDNN's kernels chosen). For each precision asked: fp32, and bf16 where
the CPU computes it natively (train's --precision auto picks it there). Prints the pieces a second and the mean loss,
which two versions of the code must share to a few thousandths (the masks dropout draws differ between them).
BENCHMARKS.md shows the table of the committed --json (tests/test_docs.py).
"""
import argparse
import copy
import json
import random
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attn_demo.checkpoints.folder import load_checkpoint  # noqa: E402
from attn_demo.data.pairs import TRAIN_POOL, batches, encode_pairs, read_pairs  # noqa: E402
from attn_demo.training.train import DEFAULTS, native_bf16, training_loss  # noqa: E402


def real_batches(checkpoint: Path, pairs_file: Path, count: int, max_tokens: int) -> tuple:
    """The model and count + 1 batches of train's kind from its tokenizers' encoding of the pairs."""
    model, src_tok, tgt_tok = load_checkpoint(checkpoint)
    pairs = read_pairs(pairs_file)
    random.Random(0).shuffle(pairs)
    _, encoded = encode_pairs(pairs[:20000], src_tok, tgt_tok, DEFAULTS["max_len"])
    return model, list(batches(encoded, max_tokens, shuffle=True, seed=1))[:count + 1]


def time_steps(model, chosen: list, bf16: bool) -> dict:
    """Train on each batch once; the pieces a second and the mean loss of all but the first."""
    torch.manual_seed(0)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5, betas=(0.9, 0.98))
    pieces, losses, started = 0, [], None
    for i, (src, lengths, y_in, y_out) in enumerate(chosen):
        if i == 1:
            started = time.perf_counter()
        loss = training_loss(model, src, lengths, y_in, y_out, DEFAULTS["label_smoothing"], bf16=bf16)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), DEFAULTS["clip"])
        optimizer.step()
        if i:
            pieces += int((y_out != model.config.pad_id).sum())
            losses.append(loss.item())
    seconds = time.perf_counter() - started
    return {"pieces_per_s": pieces / seconds, "mean_loss": sum(losses) / len(losses), "pieces": pieces}


def table(result: dict) -> str:
    """The run as BENCHMARKS.md shows it."""
    threads = result["threads"]
    rows = [f"| model | precision | target pieces/s ({threads} thread{'s' * (threads > 1)}) | mean loss |", "|---|---|---|---|"]
    rows += [f"| {row['model']} | {row['precision']} | {row['pieces_per_s']:,.0f} | {row['mean_loss']:.4f} |"
             for row in result["rows"]]
    return "\n".join(rows)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoints", nargs="+", type=Path)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batches", type=int, default=20)
    p.add_argument("--max-tokens", type=int, default=DEFAULTS["max_tokens"])
    p.add_argument("--pairs", type=Path, default=TRAIN_POOL,
                   help="English–French pairs (default: train's, the data home's Tatoeba)")
    p.add_argument("--json", type=Path, help="also write the figures here, with the command")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    precisions = ["fp32"] + (["bf16"] if native_bf16(torch.device("cpu")) else [])
    result = {"command": "python -m benchmarks.train_step " + " ".join(argv if argv is not None else sys.argv[1:]),
              "threads": args.threads, "rows": []}
    for checkpoint in args.checkpoints:
        model, chosen = real_batches(checkpoint, args.pairs, args.batches, args.max_tokens)
        for precision in precisions:  # each from the checkpoint's weights
            measured = time_steps(copy.deepcopy(model), chosen, precision == "bf16")
            result["rows"].append({"model": checkpoint.name, "precision": precision, **measured})
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
