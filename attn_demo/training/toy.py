"""A toy task learned in seconds: strings reversed, copied or sorted, or a date rewritten, by the package's own GRU models.

Each task has a known alignment (reverse: the anti-diagonal, copy: the diagonal, sort: wherever each digit is; a
date, "5 January 2020" → "2020-01-05": the year read from the end first, the day last, crossing as a translation
does), so a class sees attention learn where to look, and the model without attention (one fixed context vector)
fail on the long strings (Bahdanau et al. 2015, Fig. 2), in half a minute on one CPU thread:

    python -m attn_demo.training.toy --task reverse --attention bahdanau --seconds 30
    python -m attn_demo.training.toy --task reverse --attention none --seconds 30
    python -m attn_demo.training.toy --task date --updates 1000      # a number of updates: the same run anywhere

The models are attn_demo.models.rnn's Seq2Seq with a small ModelConfig, any attention of ATTENTION_TYPES; the
pieces are characters (CHARACTERS, ids from FIRST_PIECE after pad, unk, bos, eos). A run is its settings and seed:
the same ones train the same weights update by update (its batches and initial weights come from the seed alone);
how many updates fit in `seconds` depends on the machine. Exact match is measured on held-out strings, never
trained on, of every length; a run's translation of a string is a Translation, drawn by the page's own views.
"""
import argparse
import calendar
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
from attn_demo.translator import Translation, traced

MONTHS = list(calendar.month_name)[1:]  # January … December
CHARACTERS = "0123456789- " + "".join(sorted(set("".join(MONTHS))))  # every task's pieces, one vocabulary
SPACE = "▁"  # a space as the page's pieces show it (SentencePiece's)
FIRST_PIECE = 4  # ids 0–3: pad, unk, bos, eos (ModelConfig's)
DATE_LENGTHS = (10, 17)  # "1 May 1900" … "30 September 2000"
MAX_SECONDS = 60.0  # the longest run one call may ask for
MAX_SEED = 2**32 - 1  # torch.manual_seed takes up to 2**64 − 1; a page's seed box, far fewer digits
HELD_OUT = 20  # strings of each length, kept out of training
HELD_OUT_SEED = 12345  # the same held-out strings for every run, whatever its seed
CURVE_EVERY = 10  # updates: one point of the loss curve, the mean loss over them


def digits(rng: random.Random, length: int) -> str:
    return "".join(str(rng.randrange(10)) for _ in range(length))


def date(rng: random.Random, length: int | None = None) -> str:
    """A day from 1900 to 2099 as a person writes it, "5 January 2020" (its length is the date's own)."""
    year, month = rng.randrange(1900, 2100), rng.randrange(1, 13)
    return f"{rng.randint(1, calendar.monthrange(year, month)[1])} {MONTHS[month - 1]} {year}"


def iso_date(text: str) -> str:
    day, month, year = text.split()
    return f"{year}-{MONTHS.index(month) + 1:02d}-{int(day):02d}"


@dataclass(frozen=True)
class Task:
    """A toy task: a string drawn at random (of a length, for the digit tasks) and what the model must write for it."""

    draw: object  # (rng, length) → a source string
    target: object  # source string → target string
    lengths: tuple[int, int] | None = None  # its own source lengths (a date's), or None: the settings' lengths
    example: str = ""  # what the page shows as a first input to type


TASKS = {"reverse": Task(digits, lambda s: s[::-1], example="31415926535"),
         "copy": Task(digits, str, example="27182818284"),
         "sort": Task(digits, lambda s: "".join(sorted(s)), example="31415926535"),
         "date": Task(date, iso_date, DATE_LENGTHS, example="5 January 2020")}


class Characters:
    """The toy pieces as the page's views read a tokenizer: ids ↔ characters, a space shown as ▁."""

    def encode(self, text: str) -> list[int]:
        return [FIRST_PIECE + CHARACTERS.index(c) for c in text]

    def pieces(self, ids) -> list[str]:
        return [("</s>" if i == ModelConfig.eos_id else "<unk>") if i < FIRST_PIECE
                else CHARACTERS[i - FIRST_PIECE].replace(" ", SPACE) for i in ids]

    def decode(self, ids) -> str:
        return "".join(CHARACTERS[i - FIRST_PIECE] for i in ids if i >= FIRST_PIECE)


CHARS = Characters()


@dataclass(frozen=True)
class ToySettings:
    """One toy run: the task, the model and what it trains on; with the seed, they make the run."""

    task: str = "reverse"
    attention: str = "bahdanau"
    hidden: int = 64  # H, the decoder's state; the encoder is 2 × H/2, the attention's A = H
    min_length: int = 3  # a date's are its own (DATE_LENGTHS)
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
        if TASKS[self.task].lengths:  # one run per date setting, whatever lengths a client sent
            object.__setattr__(self, "min_length", TASKS[self.task].lengths[0])
            object.__setattr__(self, "max_length", TASKS[self.task].lengths[1])
        if not 1 <= self.min_length <= self.max_length <= 30:
            raise ValueError("The lengths trained on must be whole numbers with 1 ≤ shortest ≤ longest ≤ 30.")
        if not 8 <= self.hidden <= 256 or self.hidden % 2:
            raise ValueError("The hidden size must be an even number from 8 to 256.")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"The seed must be a whole number from 0 to {MAX_SEED:,}.")

    def config(self) -> ModelConfig:
        vocabulary = FIRST_PIECE + len(CHARACTERS)
        return ModelConfig(attention=self.attention, src_vocab_size=vocabulary, tgt_vocab_size=vocabulary,
                           emb_size=self.hidden // 2, enc_hidden_size=self.hidden // 2, dec_hidden_size=self.hidden,
                           attn_hidden_size=self.hidden, attn_rank=max(2, self.hidden // 4), dropout=0.0)

    def draw(self, rng: random.Random) -> str:
        return TASKS[self.task].draw(rng, rng.randint(self.min_length, self.max_length))


def encode(text: str) -> list[int]:
    """A string's piece ids, with EOS."""
    return CHARS.encode(text) + [ModelConfig.eos_id]


def example(settings: ToySettings, text: str) -> tuple[list[int], list[int]]:
    """(source ids, target ids) of one string, as data.pairs.collate takes them."""
    return encode(text), encode(TASKS[settings.task].target(text))


def held_out(settings: ToySettings) -> dict[int, list[str]]:
    """Up to HELD_OUT strings of each source length trained on (as many distinct ones as there are, for short
    lengths), the same for every seed."""
    rng, task = random.Random(HELD_OUT_SEED), TASKS[settings.task]
    lengths = range(settings.min_length, settings.max_length + 1)
    if task.lengths:  # a date's length is its own: draw dates until each length has its share (or none is left)
        found = {n: set() for n in lengths}
        for _ in range(200 * HELD_OUT):
            text = task.draw(rng, None)
            if len(found[len(text)]) < HELD_OUT:
                found[len(text)].add(text)
        return {n: sorted(strings) for n, strings in found.items() if strings}
    # at most half the strings of a length, so that some are left to train on (there are 10 of one digit)
    return {n: sorted({task.draw(rng, n) for _ in range(HELD_OUT)})[:max(1, 10 ** n // 2)] for n in lengths}


def read_input(settings: ToySettings, text) -> str:
    """A typed string for a run's model, or a ValueError that says what the task reads."""
    text = str(text if text is not None else "").strip()
    task = TASKS[settings.task]
    wanted = "a date such as " + task.example if task.lengths else "digits, such as " + task.example
    if not text or len(text) > 30 or any(c not in CHARACTERS for c in text):
        raise ValueError(f"This model reads {wanted}: at most 30 characters, digits, letters, spaces and “-”.")
    return text


class ToyRun:
    """A toy model training: train(updates) goes on from where it stands; measure() says how well it does."""

    def __init__(self, settings: ToySettings):
        self.settings = settings
        torch.manual_seed(settings.seed)
        self.model = Seq2Seq(settings.config())
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=settings.lr)
        self.rng = random.Random(settings.seed)
        self.held_out = held_out(settings)
        self.kept_out = {s for strings in self.held_out.values() for s in strings}
        self.updates, self.curve, self.losses = 0, [], []  # curve: [update, mean loss of the CURVE_EVERY before]

    def batch(self):
        """settings.batch strings of random lengths, none of them held out."""
        strings = []
        while len(strings) < self.settings.batch:
            text = self.settings.draw(self.rng)
            if text not in self.kept_out:
                strings.append(example(self.settings, text))
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
    def search(self, strings: list[str]):
        """Each string's greedy hypothesis, and the encoder's annotations h_j of them all (B, S, D)."""
        self.model.eval()
        src, lengths, _, _ = collate([example(self.settings, s) for s in strings])
        memory = self.model.encode(src, lengths)
        return greedy_search(self.model, memory, lengths + 2), memory.annotations

    def outputs(self, strings: list[str]) -> list[str]:
        """Each string's greedy output."""
        return [CHARS.decode(h.tokens) for h in self.search(strings)[0]]

    def translation(self, text: str) -> Translation:
        """What the model writes for one string, traced step by step as the page's views draw a translation."""
        (hyp,), annotations = self.search([text])
        source = encode(text)
        return traced(self.model, CHARS, CHARS, source, [], hyp, annotations[0, :len(source)].float().numpy())

    def exact_by_length(self) -> dict[int, float]:
        """Held-out length → the fraction of its strings whose output is exactly right."""
        target = TASKS[self.settings.task].target
        return {n: round(sum(out == target(s) for s, out in zip(strings, self.outputs(strings))) / len(strings), 4)
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
    p.add_argument("--seconds", type=float, default=30.0, help="train for this long (at most 60)")
    p.add_argument("--updates", type=int, help="train for this many updates instead (the same on every machine)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hidden", type=int, default=ToySettings.hidden)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    settings = ToySettings(args.task, args.attention, args.hidden, seed=args.seed)
    if args.updates is None:
        result = train_for(settings, args.seconds)
    else:
        toy, start = ToyRun(settings), time.perf_counter()
        toy.train(args.updates)
        result = toy.measure(time.perf_counter() - start)
    print(json.dumps({k: result[k] for k in ("updates", "seconds", "exact_by_length")}, indent=1))


if __name__ == "__main__":
    run(main)
