"""How long each model takes to translate, timed so that models can be compared: all of them in one
sitting, in rounds that time every model once, so that a slow minute on a shared CPU slows every
model alike (timed one at a time, on different days, the same Bahdanau has measured 7.8 to 47 ms).
This is the Compare table's ms / sentence, recorded in each model card with the models it was timed
beside.

    python -m attn_demo.evaluation.speed checkpoints/* --card

One thread by default, as the app decodes (app.py); greedy, the 15-word sentence of attn_demo.evaluation.timing.
"""
import argparse
import datetime
import sys

import torch

from attn_demo.checkpoints.card import write_model_card
from attn_demo.cli import HelpFormatter
from attn_demo.evaluation.timing import SENTENCES, interleaved
from attn_demo.serving.catalogue import model_key
from attn_demo.translator import load_translator

WORDS = 15


def time_models(translators: dict, runs: int, warmup: int) -> dict:
    """{name: the speed facts a model card records}: translate() of the 15-word sentence, greedy."""
    sentence = SENTENCES[WORDS]
    timings = interleaved({name: lambda t=translator: t.translate(sentence) for name, translator in translators.items()},
                          runs, warmup)
    return {name: {**timings[name], "words": WORDS, "beam": 1, "device": str(translator.device),
                   "torch_threads": torch.get_num_threads(), "date": datetime.date.today().isoformat(),
                   "timed_with": sorted(set(translators) - {name})}
            for name, translator in translators.items()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("models", nargs="+", help="checkpoint folders or Hub repo ids, timed together")
    p.add_argument("--runs", type=int, default=100, help="timed calls per model (one per round)")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls per model first")
    p.add_argument("--threads", type=int, default=1, help="torch threads (the app decodes on one)")
    p.add_argument("--card", action="store_true", help="record each model's speed in its model card")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    translators = {model_key(model): load_translator(model) for model in args.models}
    command = "python -m attn_demo.evaluation.speed " + " ".join(sys.argv[1:] if argv is None else argv)
    speeds = time_models(translators, args.runs, args.warmup)
    for name, speed in speeds.items():
        print(f"{name:24s} median {speed['median_ms']:7.2f} ms  p95 {speed['p95_ms']:7.2f} ms  ({speed['n']} runs)")
        if args.card:
            write_model_card(translators[name].folder, speed={**speed, "command": command})


if __name__ == "__main__":
    main()
