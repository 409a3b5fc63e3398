"""Average the weights a run kept at its last validations, and score the mean beside each of them.

Vaswani et al. (2017, §6.1) translate with the mean of a run's last 5 checkpoints' weights. `train --keep-saves N`
keeps the weights of the last N validations in runs/<name>/saves/; this scores each of them and their mean on the
run's validation split (greedy BLEU, as train validates: the same --n-valid and --seed give the same split) and,
with --out, writes the mean as a checkpoint folder of its own, its card saying which weights it averages:

    python -m attn_demo.training.average runs/transformer-plateau --out runs/transformer-averaged

The mean ships only where `evaluate --against` finds it better than the checkpoint it would replace.
"""
import argparse
from pathlib import Path

import torch

from attn_demo.checkpoints.card import read_card, write_model_card
from attn_demo.checkpoints.folder import TRAINING_DATA, copy_into, load_checkpoint, save_checkpoint
from attn_demo.cli import HelpFormatter
from attn_demo.data.pairs import TEST_SET, TRAIN_POOL, read_pairs, train_valid_split
from attn_demo.measures.timeline import point, read_timeline, write_timeline
from attn_demo.training.train import DEFAULTS, training_device, validate


def read_saves(run_dir: Path, last: int) -> list[dict]:
    """The last `last` saves of a run (train.keep_save), oldest first: {"model", "step", "valid_bleu", …}."""
    paths = sorted((run_dir / "saves").glob("step-*.pt"))[-last:]
    if not paths:
        raise SystemExit(f"no saves in {run_dir / 'saves'}: train with --keep-saves N keeps them")
    return [torch.load(path, map_location="cpu", weights_only=True) for path in paths]


def mean_weights(states: list[dict]) -> dict:
    """Each floating-point tensor the mean of the states' (summed in float64, so the order does not round it), in
    its own dtype; any other tensor (a count, a mask) as the last state has it."""
    return {name: (torch.stack([state[name].double() for state in states]).mean(0).to(tensor.dtype)
                   if tensor.is_floating_point() else tensor.clone())
            for name, tensor in states[-1].items()}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("checkpoint", type=Path, help="the run's --out folder (its config, tokenizers and card)")
    p.add_argument("--run-dir", type=Path, default=None, help="the run's folder with saves/ (default runs/<checkpoint name>)")
    p.add_argument("--last", type=int, default=5, help="how many of the last saves to average")
    p.add_argument("--out", type=Path, default=None, help="write the mean here as a checkpoint folder")
    p.add_argument("--train-pool", type=Path, default=TRAIN_POOL)
    p.add_argument("--test-set", type=Path, default=TEST_SET)
    p.add_argument("--n-valid", type=int, default=DEFAULTS["n_valid"], help="as the run was trained with")
    p.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="as the run was trained with")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    run_dir = args.run_dir or Path("runs") / args.checkpoint.name
    device = training_device()
    model, src_tok, tgt_tok = load_checkpoint(args.checkpoint, device)
    _, valid = train_valid_split(read_pairs(args.train_pool), read_pairs(args.test_set), args.n_valid, args.seed)
    saves = read_saves(run_dir, args.last)
    if args.out and "training" not in saves[-1]:
        raise SystemExit(f"{run_dir / 'saves'} was kept before saves recorded their run: score them without --out")
    print("| weights | step | valid BLEU (chrF) |\n|---|---|---|")
    for save in saves:
        model.load_state_dict(save["model"])
        scores = validate(model, src_tok, tgt_tok, valid, device)
        print(f"| saved | {save['step']} | {scores['bleu']:.2f} ({scores['chrf']:.2f}) |", flush=True)
    model.load_state_dict(mean_weights([save["model"] for save in saves]))
    mean = validate(model, src_tok, tgt_tok, valid, device)
    steps = [save["step"] for save in saves]
    print(f"| the mean of these {len(saves)} | {steps[0]}–{steps[-1]} | {mean['bleu']:.2f} ({mean['chrf']:.2f}) |")
    if args.out:
        write_mean(args, run_dir, model, src_tok, tgt_tok, saves[-1]["training"], steps, mean)


def mean_timeline(timeline: dict, model, src_tok, tgt_tok, scores: dict, steps: list[int]) -> dict:
    """The run's timeline (its run folder's, to the run's end) with its last point, the last validation, whose
    weights are the last save, made the mean's: the page's sentences as the mean translates them and its validation,
    marked with the steps it averages, so that the last point is the model the page uses (as a run's best is)."""
    last = timeline["points"][-1]
    mean = point(model, src_tok, tgt_tok, last["target_pieces"], scores["bleu"], last["loss"])
    return {**timeline, "points": [*timeline["points"][:-1], {**mean, "averaged_steps": steps}]}


def write_mean(args, run_dir: Path, model, src_tok, tgt_tok, training: dict, steps: list[int], scores: dict):
    """The mean as a checkpoint folder: the run's tokenizers, timeline (mean_timeline) and training data beside it; its card's
    training the run's up to the last weights averaged (`training`), with what ended the run and its best validation
    (its card's), the mean's validation and the steps it averages."""
    save_checkpoint(args.out, model, src_tok, tgt_tok)
    copy_into(args.checkpoint / TRAINING_DATA, args.out / TRAINING_DATA)
    timeline = read_timeline(run_dir) or read_timeline(args.checkpoint)
    if timeline:  # translated by the weights as saved (float16), which the page uses
        write_timeline(args.out, mean_timeline(timeline, *load_checkpoint(args.out), scores, steps))
    run = read_card(args.checkpoint).get("training") or {}
    ended = {key: run[key] for key in ("ended", "patience") if key in run}  # the saves were kept before the run ended
    if "valid_bleu_greedy" in run:  # the run's best save, which the mean is chosen against
        ended["valid_bleu_best"] = run["valid_bleu_greedy"]
    write_model_card(args.out, training={**training, **ended, "valid_bleu_greedy": round(scores["bleu"], 2),
                                         "valid_chrf_greedy": round(scores["chrf"], 2), "averaged_steps": steps})


if __name__ == "__main__":
    main()
