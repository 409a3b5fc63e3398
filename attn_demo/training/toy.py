"""A toy task learned in seconds: strings of digits reversed, copied or sorted by the package's own GRU models.

The task has a known alignment (reverse: the anti-diagonal, copy: the diagonal, sort: wherever each digit is), so
a class sees attention learn where to look, and the model without attention (one fixed context vector) fail on the
long strings (Bahdanau et al. 2015, Fig. 2), in half a minute on one CPU thread:

    python -m attn_demo.training.toy --task reverse --attention bahdanau --seconds 30
    python -m attn_demo.training.toy --task reverse --attention none --seconds 30

The models are attn_demo.models.rnn's Seq2Seq with a small ModelConfig, any attention of ATTENTION_TYPES; the
pieces are digits (ids 4–13 after pad, unk, bos, eos). A run is its settings and seed: the same ones train the same
weights update by update (its batches and initial weights come from the seed alone); how many updates fit in
`seconds` depends on the machine. Exact match is measured on held-out strings, never trained on, of every length.
"""
import argparse
import json
import random
import time
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from attn_demo.cli import HelpFormatter, run
from attn_demo.data.pairs import collate
from attn_demo.decoding.search import greedy_search
from attn_demo.models.config import ATTENTION_TYPES, ModelConfig
from attn_demo.models.rnn import Seq2Seq

TASKS = {"reverse": lambda digits: digits[::-1], "copy": lambda digits: list(digits), "sort": sorted}
FIRST_DIGIT = 4  # ids 0–3: pad, unk, bos, eos (ModelConfig's)
MAX_SECONDS = 60.0  # the longest run one call may ask for
HELD_OUT = 50  # strings of each length, kept out of training
HELD_OUT_SEED = 12345  # the same held-out strings for every run, whatever its seed
CURVE_EVERY = 10  # updates: one point of the loss curve, the mean loss over them


@dataclass(frozen=True)
class ToySettings:
    """One toy run: the task, the model and what it trains on; with the seed, they make the run."""

    task: str = "reverse"
    attention: str = "bahdanau"
    hidden: int = 64  # H, the decoder's state; the encoder is 2 × H/2, the attention's A = H
    min_length: int = 3
    max_length: int = 12
    batch: int = 64
    lr: float = 1e-3  # Adam. On reverse, 2e-3 and 3e-3 rose sooner, then went back and forth around 90–98%
    seed: int = 0

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"There is no toy task {str(self.task)[:40]!r}: pick one of {', '.join(TASKS)}.")
        if self.attention not in ATTENTION_TYPES:
            raise ValueError(f"There is no attention {str(self.attention)[:40]!r} for the toy models: pick one of "
                             f"{', '.join(ATTENTION_TYPES)}.")
        if not 1 <= self.min_length <= self.max_length <= 30:
            raise ValueError("The lengths trained on must be whole numbers with 1 ≤ shortest ≤ longest ≤ 30.")
        if not 8 <= self.hidden <= 256 or self.hidden % 2:
            raise ValueError("The hidden size must be an even number from 8 to 256.")

    def config(self) -> ModelConfig:
        return ModelConfig(attention=self.attention, src_vocab_size=FIRST_DIGIT + 10, tgt_vocab_size=FIRST_DIGIT + 10,
                           emb_size=self.hidden // 2, enc_hidden_size=self.hidden // 2, dec_hidden_size=self.hidden,
                           attn_hidden_size=self.hidden, attn_rank=max(2, self.hidden // 4), dropout=0.0)


def encode(digits: list[int]) -> list[int]:
    """Digits 0–9 as piece ids, with EOS."""
    return [FIRST_DIGIT + d for d in digits] + [ModelConfig.eos_id]


def example(settings: ToySettings, digits: list[int]) -> tuple[list[int], list[int]]:
    """(source ids, target ids) of one string, as data.pairs.collate takes them."""
    return encode(digits), encode(TASKS[settings.task](digits))


def held_out(settings: ToySettings) -> dict[int, list[list[int]]]:
    """HELD_OUT strings of each length trained on (as many distinct ones as there are, for short lengths)."""
    rng = random.Random(HELD_OUT_SEED)
    return {n: [list(s) for s in sorted({tuple(rng.randrange(10) for _ in range(n)) for _ in range(HELD_OUT)})]
            for n in range(settings.min_length, settings.max_length + 1)}


class ToyRun:
    """A toy model training: train(updates) goes on from where it stands; measure() says how well it does."""

    def __init__(self, settings: ToySettings):
        self.settings = settings
        torch.manual_seed(settings.seed)
        self.model = Seq2Seq(settings.config())
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=settings.lr)
        self.rng = random.Random(settings.seed)
        self.held_out = held_out(settings)
        self.kept_out = {tuple(s) for strings in self.held_out.values() for s in strings}
        self.updates, self.curve, self.losses = 0, [], []  # curve: [update, mean loss of the CURVE_EVERY before]

    def batch(self):
        """settings.batch strings of random lengths, none of them held out."""
        s, strings = self.settings, []
        while len(strings) < s.batch:
            digits = [self.rng.randrange(10) for _ in range(self.rng.randint(s.min_length, s.max_length))]
            if tuple(digits) not in self.kept_out:
                strings.append(example(s, digits))
        return collate(strings)

    def train(self, updates: int):
        self.model.train()
        for _ in range(updates):
            src, lengths, y_in, y_out = self.batch()
            logits = self.model(src, lengths, y_in)  # (B, T, V)
            loss = F.cross_entropy(logits.flatten(0, 1), y_out.flatten(), ignore_index=self.model.config.pad_id)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.updates += 1
            self.losses.append(loss.item())
            if len(self.losses) == CURVE_EVERY:
                self.curve.append([self.updates, round(sum(self.losses) / CURVE_EVERY, 4)])
                self.losses = []

    @torch.inference_mode()
    def outputs(self, strings: list[list[int]]) -> list[list[int]]:
        """Each string's greedy output, as digits (a piece that is no digit: -1)."""
        self.model.eval()
        src, lengths, _, _ = collate([example(self.settings, s) for s in strings])
        hyps = greedy_search(self.model, self.model.encode(src, lengths), lengths + 2)
        eos = self.model.config.eos_id
        return [[t - FIRST_DIGIT if t >= FIRST_DIGIT else -1 for t in h.tokens[:-1 if h.tokens[-1:] == [eos] else None]]
                for h in hyps]

    def exact_by_length(self) -> dict[int, float]:
        """Held-out length → the fraction of its strings whose output is exactly right."""
        task = TASKS[self.settings.task]
        return {n: round(sum(out == task(s) for s, out in zip(strings, self.outputs(strings))) / len(strings), 4)
                for n, strings in self.held_out.items()}

    def measure(self, seconds: float) -> dict:
        """Where the run stands, as train_toy answers it: plain JSON (a length is an object's key, so a string)."""
        return {"settings": asdict(self.settings), "updates": self.updates, "seconds": round(seconds, 2),
                "loss_curve": self.curve, "exact_by_length": {str(n): e for n, e in self.exact_by_length().items()}}


def train_for(settings: ToySettings, seconds: float, clock=time.perf_counter) -> dict:
    """A new run trained for `seconds` (at most MAX_SECONDS), in steps of CURVE_EVERY updates, then measured."""
    seconds = min(float(seconds), MAX_SECONDS)
    toy, start = ToyRun(settings), clock()
    while clock() - start < seconds:
        toy.train(CURVE_EVERY)
    return toy.measure(clock() - start)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--task", choices=TASKS, default="reverse")
    p.add_argument("--attention", choices=ATTENTION_TYPES, default="bahdanau")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hidden", type=int, default=ToySettings.hidden)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    result = train_for(ToySettings(args.task, args.attention, args.hidden, seed=args.seed), args.seconds)
    print(json.dumps({k: result[k] for k in ("updates", "seconds", "exact_by_length")}, indent=1))


if __name__ == "__main__":
    run(main)
