"""Train one checkpoint on the Tatoeba pairs, from scratch or continued from a checkpoint.

    python -m attn_demo.training.train --attention bahdanau --out runs/bahdanau-new --target-tokens 40000000 \
        --clause-join-prob 0.1 --valid-minutes 20
    python -m attn_demo.training.train --attention bahdanau --out runs/bahdanau-more --init-from checkpoints/bahdanau-en-fr \
        --target-tokens 6000000 --lr 5e-4

--init-from starts from a checkpoint's weights and tokenizers instead of from scratch (the model
card then records both trainings); the optimizer and the learning-rate schedule start afresh. The
checkpoint may have another --attention: every other weight is taken and the attention module
starts afresh (checkpoint.warm_start), e.g. Luong's dot score from luong-en-fr:

    python -m attn_demo.training.train --attention luong-dot --out runs/luong-dot --init-from checkpoints/luong-en-fr \
        --target-tokens 6000000 --lr 1e-3 --clause-join-prob 0.25

A Transformer's weights may also go on under another --activation (every weight taken; the card says so).

A run writes into a folder of its own: a candidate moves into checkpoints/ only once it measures better
than the checkpoint it would replace (CONTRIBUTING.md). Each shipped card's Training section has its recipe.

The budget is --target-tokens target pieces when given (a run's result then does not depend on
what else the machine is doing), otherwise --minutes of training (RunClock: wall-clock time without
the time the process was stopped, e.g. `kill -STOP` to free the cores). The learning rate warms
up, then follows a cosine over the budget, so a run of any length ends annealed. Every
--valid-minutes the model is scored on the validation split (greedy BLEU); the best one is kept
in --out in Hub layout. --resume continues a run from runs/<name>/last.pt.

Until it stops improving: with --patience N a run ends once N validations in a row (every --valid-minutes)
have not beaten its best validation BLEU (the budget is then a ceiling), and the card says which ended it. The rule is
the same for every model, so that models compared on the page have each reached their plateau. The
weights of the last --keep-saves validations stay in runs/<name>/saves/, for averaging them (Vaswani
et al. 2017 averaged the last 5 checkpoints). A run continued from an inverse-sqrt checkpoint goes on
with its schedule: --schedule-step K, the steps it trained, and --lr the rate its schedule reaches once the new
--warmup-steps W are done (lr · √(warmup / (K + W)) of the run before); its fresh Adam moments warm up over them:

    python -m attn_demo.training.train --attention transformer --out runs/transformer-plateau \
        --init-from checkpoints/transformer-en-fr --schedule inverse-sqrt --schedule-step 14255 --lr 2.62e-4 \
        --warmup-steps 300 --patience 4 --target-tokens 40000000 --clause-join-prob 0.1 --dropout 0.3 --adam-beta2 0.98

Long inputs: each epoch, a --join-prob fraction of the examples is replaced by 2 to --join-max
random training pairs joined in order (data.join_examples), up to --join-max-len pieces a side.
Tatoeba sentences have 6.2 English words on average, so joins of 2–10 pairs span about 12–60
words (the long-sentence test set goes to 60). With 0.1 of the examples joined, about 40% of the
target pieces come from joins: enough that every length up to 60 words is seen thousands of
times per epoch, while most updates stay on the single sentences the Tatoeba test set is made of.
0.1 is reasoned, not measured; 0 trains on single pairs only, as before.

Long sentences: a --clause-join-prob fraction of the examples is first replaced by two or three
statements joined into one sentence with a connective both languages share ("A, and b because c."
/ "A, et b parce que c.", data.ClauseJoiner): the shape of one long sentence, which the
sentence-after-sentence joins do not teach.

Subword regularization: with --subword-alpha α > 0, every epoch draws each training sentence's pieces anew
from the segmentations its unigram tokenizer allows, each with probability ∝ P(x)^α (Kudo 2018), joined
examples included; validation and the app read the one best segmentation. A model so trained has met a word
in many pieces, as an unseen word comes to it.

Coverage: --coverage-loss λ adds See et al.'s (2017) coverage loss, λ Σ_j min(α_tj, C_tj) per target
piece, which costs attending again to a piece already attended to. A bahdanau-coverage model
warm-started from a bahdanau checkpoint starts as that model (its w_c is zero) and learns what
counting adds; --keep-last keeps the run's last weights, since the greedy validation BLEU that picks
the best ones is measured on short sentences, where repeats and drops are rare.

Timeline: at fixed points of the run (0, 0.1, 0.25, 0.5, 1, 2, 4 … million target pieces) and at
every validation, the page's sentences are translated greedily and recorded with their α, the
validation BLEU and the training loss in timeline.json beside the checkpoint (attn_demo.measures.timeline):
how attention comes to be, for the page's "Watch it learn".
"""
import argparse
import math
import random
import shutil
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import sacrebleu
import torch
from tqdm import tqdm

from attn_demo.checkpoints.card import read_card, write_model_card
from attn_demo.checkpoints.folder import (
    TRAINING_DATA, build_model, copy_into, read_folder, save_checkpoint, warm_start, warm_start_text)
from attn_demo.cli import HelpFormatter, run
from attn_demo.data.pairs import (
    TEST_SET, TRAIN_POOL, ClauseJoiner, batches, encode_pairs, join_examples, read_pairs, train_valid_split)
from attn_demo.decoding.search import greedy_search, max_target_length
from attn_demo.measures.timeline import continued, next_point, point, read_timeline, write_timeline
from attn_demo.models.config import ACTIVATIONS, MODEL_KINDS, ModelConfig, TransformerConfig
from attn_demo.models.tokenizer import Tokenizer, sampling_seed, train_tokenizer
from attn_demo.training.coverage import write_training_data
from attn_demo.training.loss import output_cross_entropy
from attn_demo.translator import device_name

DEFAULTS = dict(
    minutes=60.0, target_tokens=0, join_prob=0.1, clause_join_prob=0.0, join_max=10, join_max_len=150, vocab_size=4000, emb_size=256, enc_hidden_size=256, dec_hidden_size=512, attn_hidden_size=256, attn_rank=64,
    d_model=256, heads=4, enc_layers=3, dec_layers=3, ff_size=1024, activation="relu",
    dropout=0.2, max_tokens=3000, max_len=50, lr=2e-3, adam_beta2=0.999, schedule="cosine", warmup_steps=300,
    final_lr_fraction=0.02, schedule_step=0, patience=0, keep_saves=5,
    label_smoothing=0.1, subword_alpha=0.0, coverage_loss=0.0, clip=1.0, n_valid=2000, valid_minutes=5.0, save_minutes=10.0, seed=1, threads=2,
)

SCHEDULES = ("cosine", "inverse-sqrt")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--attention", required=True, choices=MODEL_KINDS,
                   help="the kind of model: a GRU encoder–decoder with this attention, or a Transformer")
    p.add_argument("--out", required=True, type=Path, help="checkpoint folder for the best model")
    p.add_argument("--resume", action="store_true", help="continue from runs/<out name>/last.pt")
    p.add_argument("--train-pool", type=Path, default=TRAIN_POOL)
    p.add_argument("--test-set", type=Path, default=TEST_SET, help="pairs whose English is here are never trained on")
    p.add_argument("--run-dir", type=Path, default=None, help="resume state (default runs/<out name>)")
    p.add_argument("--init-from", type=Path, default=None,
                   help="continue training this checkpoint folder (its weights and tokenizers) instead of starting from scratch; "
                        "with another --attention, all but the attention module")
    helps = {"minutes": "wall-clock budget, used when --target-tokens is 0",
             "target_tokens": "budget in target pieces trained on (0: use --minutes instead)",
             "join_prob": "fraction of each epoch's examples replaced by joined pairs", "join_max": "most pairs in one join",
             "join_max_len": "most pieces a side in a joined example",
             "clause_join_prob": "fraction of each epoch's examples replaced by statements joined into one sentence", "max_len": "most pieces a side in a single pair",
             "subword_alpha": "each epoch, draw every training sentence's pieces with smoothing α (Kudo 2018; 0: the best)",
             "coverage_loss": "weight λ of See et al.'s coverage loss Σ_j min(α_tj, C_tj) per target piece (0: none)",
             "valid_minutes": "score on the validation split (and keep the best model) this often",
             "save_minutes": "save the resume state (runs/<name>/last.pt) at least this often",
             "schedule": "after the warm-up: cosine (to final-lr-fraction at the budget's end) or inverse-sqrt "
                         "(lr · √(warmup / step), Vaswani et al. 2017, whatever the budget)",
             "emb_size": "E (GRU models)", "enc_hidden_size": "per direction (GRU models)",
             "dec_hidden_size": "H (GRU models)", "d_model": "D (transformer)", "heads": "heads (transformer)",
             "enc_layers": "encoder layers (transformer)", "dec_layers": "decoder layers (transformer)",
             "ff_size": "feed-forward size (transformer)",
             "activation": "the feed-forward sublayer's φ (transformer): gelu is smooth, which integrated gradients converge on sooner",
             "adam_beta2": "Adam's β2 (Vaswani et al. 2017 train the Transformer with 0.98)",
             "schedule_step": "inverse-sqrt: go on with a schedule as if this many steps were trained (a continued run)",
             "patience": "end the run once this many validations in a row have not beaten its best (0: train to the budget)",
             "keep_saves": "keep the weights of this many last validations in runs/<name>/saves/"}
    for name, value in DEFAULTS.items():
        p.add_argument("--" + name.replace("_", "-"), type=type(value), default=value, help=helps.get(name, name.replace("_", " ")),
                       choices={"schedule": SCHEDULES, "activation": ACTIVATIONS}.get(name))
    p.add_argument("--keep-last", action="store_true",
                   help="keep the run's last weights in --out, not the best on validation (whose greedy BLEU on short "
                        "sentences does not see what a run may be for, e.g. fewer repeated phrases in long ones)")
    p.add_argument("--precision", choices=("auto", "bf16", "fp32"), default="auto",
                   help="autocast precision of the forward pass; auto: bf16 where the hardware computes it natively")
    return p.parse_args(argv)


def learning_rate(args, step: int, spent: float) -> float:
    """Linear warm-up, then a cosine over the fraction of the budget spent, or the inverse square root
    of the step (Vaswani et al. 2017, eq. 3, peaking at --lr). A run continued at --schedule-step K warms up
    to --lr over its own first --warmup-steps, then decays as 1/√step from there, as the run before did."""
    warmup = min(1.0, (step + 1) / args.warmup_steps)
    if args.schedule == "inverse-sqrt":
        start = args.schedule_step
        return args.lr * min(warmup, math.sqrt((start + args.warmup_steps) / (start + step + 1)))
    cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, spent)))
    return args.lr * warmup * (args.final_lr_fraction + (1 - args.final_lr_fraction) * cosine)


def native_bf16(device: torch.device) -> bool:
    """Whether bf16 autocast pays off here (master weights stay fp32 either way): on a CPU, only where it has bf16
    instructions (AVX512-BF16 or AMX) for oneDNN to compute with. Measured: 1.6x the fp32 speed on a CPU with
    AVX512-BF16; where oneDNN emulates bf16, which it reports as supported on any AVX-512 CPU, 2.2–2.4x slower on an
    AVX-512 CPU without them (2 threads, Luong 2,181 against 5,201, the Transformer 1,148 against 2,566 target
    pieces/s) and 40x slower on an AVX2-only one (106 against 4,100, Luong)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    try:
        instructions = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
        return bool(instructions and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a build without oneDNN, or a torch that cannot tell
        return False


def prepare_data(args, run_dir: Path):
    """Splits, tokenizers (trained on the training split only, kept in run_dir, as is what the split
    holds: coverage.TRAINING_DATA), the pairs trained on and their best segmentations, and the clause
    joiner over the training split."""
    train, valid = train_valid_split(read_pairs(args.train_pool), read_pairs(args.test_set), args.n_valid, args.seed)
    tokenizers = []
    for side, name in ((0, "source"), (1, "target")):
        model_file = run_dir / f"{name}.model"
        if model_file.exists():
            tokenizers.append(Tokenizer(model_file))
        else:
            tokenizers.append(train_tokenizer((p[side] for p in train), run_dir / name, args.vocab_size))
    src_tok, tgt_tok = tokenizers
    kept, encoded = encode_pairs(train, src_tok, tgt_tok, args.max_len)
    write_training_data(run_dir, [en for en, _ in kept], args.train_pool.name)
    return src_tok, tgt_tok, kept, encoded, valid, ClauseJoiner(kept, src_tok, tgt_tok, args.join_max_len, args.subword_alpha)


def training_device() -> torch.device:
    """Where a run trains and validates: a CUDA GPU where there is one, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@torch.inference_mode()
def validate(model, src_tok, tgt_tok, valid, device) -> dict:
    """Greedy BLEU / chrF on the validation pairs (one reference each)."""
    model.eval()
    hyps = []
    pairs = sorted(valid, key=lambda p: len(p[0]))
    for i in range(0, len(pairs), 200):
        chunk = [src_tok.encode(en) + [model.config.eos_id] for en, _ in pairs[i:i + 200]]
        src = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in chunk], batch_first=True).to(device)
        lengths = torch.tensor([len(s) for s in chunk], device=device)
        for hyp in greedy_search(model, model.encode(src, lengths), max_target_length(lengths)):
            hyps.append(tgt_tok.decode(hyp.tokens[:-1]))
    model.train()
    refs = [[fr for _, fr in pairs]]
    return {"bleu": sacrebleu.corpus_bleu(hyps, refs).score, "chrf": sacrebleu.corpus_chrf(hyps, refs).score}


def coverage_loss(alpha: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """See et al. 2017, eq. 12: Σ_j min(α_tj, C_tj) with C_tj = Σ_{t'<t} α_t'j, the attention a piece gets
    again after it was attended to, averaged over the real target steps. alpha (B, T, S), real (B, T)."""
    coverage = alpha.cumsum(1) - alpha  # C_t: what came before step t (B, T, S)
    again = torch.minimum(alpha, coverage).sum(-1)  # (B, T)
    return (again * real).sum() / real.sum()


def training_loss(model, src, lengths, y_in, y_out, smoothing: float, coverage_weight: float = 0.0,
                  bf16: bool = False) -> torch.Tensor:
    """Cross-entropy over the real target pieces (training.loss), plus See et al.'s coverage loss when weighted;
    the forward pass in bf16 autocast where asked (precision "auto": where the hardware computes it natively)."""
    pad_id = model.config.pad_id
    with torch.autocast(src.device.type, dtype=torch.bfloat16, enabled=bf16):
        readouts, alpha = model.readouts_with_attention(src, lengths, y_in)  # (B, T, D), (B, T, S)
        loss = output_cross_entropy(*model.decoder.output_layer(readouts), y_out, pad_id, smoothing)
    if coverage_weight:
        loss = loss + coverage_weight * coverage_loss(alpha.float(), y_out != pad_id)
    return loss


def model_config(args, src_vocab_size: int, tgt_vocab_size: int) -> ModelConfig | TransformerConfig:
    """The config of the model the arguments ask for."""
    if args.attention == "transformer":
        return TransformerConfig(architecture="transformer", src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size,
                                 d_model=args.d_model, heads=args.heads, enc_layers=args.enc_layers,
                                 dec_layers=args.dec_layers, ff_size=args.ff_size, activation=args.activation,
                                 dropout=args.dropout)
    return ModelConfig(attention=args.attention, src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size,
                       emb_size=args.emb_size, enc_hidden_size=args.enc_hidden_size, dec_hidden_size=args.dec_hidden_size,
                       attn_hidden_size=args.attn_hidden_size, attn_rank=args.attn_rank, dropout=args.dropout)


class RunClock:
    """Seconds a run has trained, across --resume, without the time its process was stopped (`kill -STOP`
    to lend the cores to something else, a laptop asleep): the card's minutes and a --minutes budget are
    time spent training. A stopped process gets SIGCONT when it goes on; the reading after it counts the
    interval since the one before as nothing (at most one update's time is lost with the pause)."""

    def __init__(self, elapsed: float = 0.0, now=time.monotonic):
        self.elapsed, self.now, self.continued = elapsed, now, False
        self.last = now()
        if hasattr(signal, "SIGCONT"):  # POSIX only
            signal.signal(signal.SIGCONT, self._on_continue)

    def _on_continue(self, signum, frame):
        self.continued = True

    def __call__(self) -> float:
        now = self.now()
        if not self.continued:
            self.elapsed += now - self.last
        self.continued, self.last = False, now
        return self.elapsed


@dataclass
class Progress:
    """Where a run stands, saved with its weights for --resume (last.pt)."""

    step: int = 0
    epoch: int = 0
    batch: int = 0  # batches of the current epoch trained on
    elapsed: float = 0.0  # RunClock seconds
    best_bleu: float = -1.0
    since_best: int = 0  # validations in a row that have not beaten best_bleu (see --patience)
    validated_step: int = -1  # the step whose weights were last validated
    target_tokens: int = 0
    next_point: int = 0  # target pieces at which the timeline takes its next point
    loss_sum: float = 0.0  # the training loss since the timeline's last point, summed over pieces
    loss_pieces: int = 0
    device: str = ""  # where the run trains now, and with how many CPU threads
    threads: int = 0
    parts: list = field(default_factory=list)  # where it trained before a --resume moved it: see train_on

    def train_on(self, device: str, threads: int):
        """Train on from here on `device` with `threads`: a --resume that moves the run closes the part before,
        so that the card says where each part of the run trained (its device, threads, time and pieces)."""
        if self.device and (self.device, self.threads) != (device, threads):
            self.parts.append({"device": self.device, "threads": self.threads, "elapsed": self.elapsed,
                               "target_tokens": self.target_tokens})
        self.device, self.threads = device, threads

    def card_parts(self, elapsed: float) -> list[dict]:
        """Each part of the run, first to last, with its own minutes and target pieces (the card's "parts")."""
        ends = [*self.parts, {"device": self.device, "threads": self.threads, "elapsed": elapsed,
                              "target_tokens": self.target_tokens}]
        starts = [{"elapsed": 0.0, "target_tokens": 0}, *ends[:-1]]
        return [{"device": end["device"], "threads": end["threads"],
                 "minutes": round((end["elapsed"] - start["elapsed"]) / 60, 1),
                 "target_tokens": end["target_tokens"] - start["target_tokens"]} for start, end in zip(starts, ends)]


class Run:
    """One training run: its model, optimizer, data, progress and timeline. It keeps the checkpoint in --out
    (the best on validation, or the last), adds the timeline's points and saves what --resume needs."""

    def __init__(self, args, command: str):
        self.args, self.command = args, command  # the command goes into the card and the timeline
        self.device = training_device()
        self.run_dir = args.run_dir or Path("runs") / args.out.name
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.init = read_folder(args.init_from) if args.init_from else None  # the checkpoint a run continues
        if self.init:  # continued training keeps the checkpoint's vocabulary
            for name in ("source.model", "target.model"):
                shutil.copyfile(args.init_from / name, self.run_dir / name)
        self.src_tok, self.tgt_tok, self.kept, self.train_pairs, self.valid, self.joiner = prepare_data(args, self.run_dir)
        self.config = model_config(args, len(self.src_tok), len(self.tgt_tok))
        self.model = build_model(self.config).to(self.device)
        self.warm = warm_start(self.model, self.init) if self.init else None
        if self.warm:
            print(warm_start_text(self.warm), flush=True)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=args.lr, betas=(0.9, args.adam_beta2))
        self.bf16 = args.precision == "bf16" or (args.precision == "auto" and native_bf16(self.device))
        self.progress, self.timeline, self.pieces_before = self.start()
        self.epoch_tokens = sum(len(t) for _, t in self.train_pairs)
        print(f"{len(self.train_pairs)} training pairs, {len(self.valid)} validation pairs, "
              f"{self.model.num_params() / 1e6:.2f}M parameters", flush=True)

    def start(self) -> tuple[Progress, dict, int]:
        """A new run's progress and timeline, or, with --resume, those the run folder saved (and the weights and
        optimizer state); and the target pieces of the timeline's earlier runs."""
        # a continued run of the same attention goes on with the timeline of the run that made its weights
        earlier = self.init.timeline if self.init and "replaced_by" not in self.warm else None
        earlier_points, pieces_before = continued(earlier)
        timeline = {"from_scratch": earlier["from_scratch"] if earlier_points else not self.args.init_from,
                    "made_these_weights": True, "command": self.command, "points": earlier_points}
        progress = Progress()
        if self.args.resume:
            saved = torch.load(self.run_dir / "last.pt", map_location=self.device, weights_only=True)
            self.model.load_state_dict(saved["model"])
            self.optimizer.load_state_dict(saved["optimizer"])
            progress, timeline = Progress(**saved["state"]), read_timeline(self.run_dir) or timeline
        progress.train_on(device_name(self.device), self.args.threads)
        return progress, timeline, pieces_before

    def spent(self, elapsed: float) -> float:
        """Fraction of the budget used: target pieces if counted, training time (RunClock) otherwise."""
        if self.args.target_tokens:
            return self.progress.target_tokens / self.args.target_tokens
        return elapsed / (self.args.minutes * 60)

    def checkpoint_if_best(self, elapsed: float, regular: bool = True):
        """Score on validation; keep the model in --out if it is the best so far (or --keep-last); add a
        timeline point; save the resume state. Only the regular validations (every --valid-minutes, and the
        last) count towards --patience: those the timeline adds early in a run come closer together."""
        scores = validate(self.model, self.src_tok, self.tgt_tok, self.valid, self.device)
        self.add_point(scores["bleu"])
        self.keep_save(scores, elapsed)
        improved = scores["bleu"] > self.progress.best_bleu
        self.progress.since_best = 0 if improved else self.progress.since_best + regular
        self.progress.validated_step = self.progress.step
        print(f"\n[{elapsed / 60:.1f} min] step {self.progress.step} epoch {self.progress.target_tokens / self.epoch_tokens:.2f} "
              f"valid BLEU {scores['bleu']:.2f} chrF {scores['chrf']:.2f}", flush=True)
        if self.args.keep_last or scores["bleu"] >= self.progress.best_bleu:  # a tie keeps the later, more trained weights
            self.progress.best_bleu = max(scores["bleu"], self.progress.best_bleu)
            out = self.args.out
            save_checkpoint(out, self.model, self.src_tok, self.tgt_tok)
            write_timeline(out, self.timeline)  # up to these weights: its later points stay in the run folder
            copy_into(self.run_dir / TRAINING_DATA, out / TRAINING_DATA)
            write_model_card(out, training=self.card_training(elapsed, scores))
        self.save_state(elapsed)

    def plateaued(self) -> bool:
        """--patience validations in a row have not beaten the best: the run has stopped improving."""
        return bool(self.args.patience) and self.progress.since_best >= self.args.patience

    def keep_save(self, scores: dict, elapsed: float):
        """The weights just validated, with the card's record of the run up to them, in the run folder's saves/, which
        keeps the last --keep-saves of them."""
        if not self.args.keep_saves:
            return
        saves = self.run_dir / "saves"
        saves.mkdir(exist_ok=True)
        torch.save({"model": self.model.state_dict(), "step": self.progress.step, "valid_bleu": scores["bleu"],
                    "target_pieces": self.pieces_before + self.progress.target_tokens,
                    "training": self.card_training(elapsed, scores)}, saves / f"step-{self.progress.step:07d}.pt")
        for old in sorted(saves.glob("step-*.pt"))[:-self.args.keep_saves]:
            old.unlink()

    def record_end(self):
        """The card in --out says what ended the run: its plateau (with the patience) or its budget."""
        card = read_card(self.args.out)
        if card and card.get("training"):
            ended = {"ended": "plateau" if self.plateaued() else "budget",
                     **({"patience": self.args.patience} if self.args.patience else {})}
            write_model_card(self.args.out, training={**card["training"], **ended})

    def card_training(self, elapsed: float, scores: dict) -> dict:
        """The card's record of this run, for the weights as they are."""
        args, progress = self.args, self.progress
        return {
            "command": self.command, "minutes": round(elapsed / 60, 1), "steps": progress.step,
            "target_tokens": progress.target_tokens, "epochs": round(progress.target_tokens / self.epoch_tokens, 2),
            "parameters": self.model.num_params(), "device": device_name(self.device), "threads": args.threads,
            "valid_bleu_greedy": round(scores["bleu"], 2), "valid_chrf_greedy": round(scores["chrf"], 2),
            "training_pairs": len(self.train_pairs), "join_prob": args.join_prob, "join_max": args.join_max,
            "clause_join_prob": args.clause_join_prob, "dropout": args.dropout,
            **({"schedule_step": args.schedule_step} if args.schedule_step else {}),
            **({"subword_alpha": args.subword_alpha} if args.subword_alpha else {}),
            **({"coverage_loss": args.coverage_loss} if args.coverage_loss else {}),
            **({"parts": progress.card_parts(elapsed)} if progress.parts else {}),
            **({"continued_from": {**self.warm, "training": self.init.card.get("training")}} if self.init else {}),
        }

    def add_point(self, bleu: float):
        """The timeline's point for the weights as they are (once per number of pieces), in the run folder."""
        pieces = self.pieces_before + self.progress.target_tokens
        if self.timeline["points"] and self.timeline["points"][-1]["target_pieces"] == pieces:
            return
        loss = self.progress.loss_sum / max(self.progress.loss_pieces, 1)
        self.timeline["points"].append(point(self.model, self.src_tok, self.tgt_tok, pieces, bleu, loss))
        self.progress.loss_sum, self.progress.loss_pieces = 0.0, 0
        self.progress.next_point = next_point(self.progress.target_tokens)
        write_timeline(self.run_dir, self.timeline)

    def save_state(self, elapsed: float):
        """What --resume needs: weights, optimizer, and where the run stands (written whole, then renamed)."""
        self.progress.elapsed = elapsed
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "state": asdict(self.progress)}, self.run_dir / "last.tmp")
        (self.run_dir / "last.tmp").replace(self.run_dir / "last.pt")

    def loss(self, src, lengths, y_in, y_out) -> torch.Tensor:
        return training_loss(self.model, src, lengths, y_in, y_out, self.args.label_smoothing, self.args.coverage_loss,
                             self.bf16)

    def epoch(self):
        """The current epoch's examples, with their joins, and its batches (the same after --resume)."""
        args, seed = self.args, self.args.seed + self.progress.epoch
        examples = self.train_pairs
        if args.subword_alpha:  # this epoch's segmentations, drawn as its joins are: from the epoch's seed
            sampling_seed(seed)
            examples = encode_pairs(self.kept, self.src_tok, self.tgt_tok, args.max_len, args.subword_alpha)[1]
        examples = self.joiner.replace(examples, args.clause_join_prob, seed) if args.clause_join_prob else examples
        examples = join_examples(examples, args.join_prob, args.join_max, args.join_max_len, seed)
        return batches(examples, args.max_tokens, shuffle=True, seed=seed)

    def train(self):
        """Train to the budget or the plateau, validating every --valid-minutes and at the timeline's points."""
        args, progress = self.args, self.progress
        clock = RunClock(progress.elapsed)
        next_valid = progress.elapsed + args.valid_minutes * 60
        next_save = progress.elapsed + args.save_minutes * 60
        bar = tqdm(total=100, initial=int(100 * self.spent(progress.elapsed)), unit="%", mininterval=30, file=sys.stdout)
        self.model.train()
        while self.spent(clock()) < 1 and not self.plateaued():
            for i, batch in enumerate(self.epoch()):
                if i < progress.batch:  # trained on before --resume
                    continue
                elapsed = clock()
                if self.spent(elapsed) >= 1:
                    break
                src, lengths, y_in, y_out = (tensor.to(self.device) for tensor in batch)
                loss = self.loss(src, lengths, y_in, y_out)
                pieces = int((y_out != self.config.pad_id).sum())
                progress.loss_sum += loss.item() * pieces
                progress.loss_pieces += pieces
                if elapsed >= next_valid or progress.target_tokens >= progress.next_point:
                    self.checkpoint_if_best(elapsed, regular=elapsed >= next_valid)  # validation and the timeline see the weights before this update
                    # the next one --valid-minutes after this one ends: one that takes longer (an untrained model
                    # translating to the length limit) must not run again at every step
                    next_valid = clock() + args.valid_minutes * 60
                    if self.plateaued():
                        break
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), args.clip)
                for group in self.optimizer.param_groups:
                    group["lr"] = learning_rate(args, progress.step, self.spent(elapsed))
                self.optimizer.step()
                progress.step += 1
                progress.batch += 1
                progress.target_tokens += pieces
                bar.update(min(100, int(100 * self.spent(elapsed))) - bar.n)
                bar.set_postfix(loss=f"{loss.item():.3f}", tok_s=f"{progress.target_tokens / max(elapsed, 1):.0f}", refresh=False)
                if elapsed >= next_save:
                    next_save = elapsed + args.save_minutes * 60
                    self.save_state(elapsed)
            else:
                progress.epoch += 1
                progress.batch = 0
        if progress.validated_step != progress.step:  # the last weights, unless just validated
            self.checkpoint_if_best(clock())
        self.record_end()
        bar.close()


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    Run(args, "python -m attn_demo.training.train " + " ".join(sys.argv[1:] if argv is None else argv)).train()


if __name__ == "__main__":
    run(main)
