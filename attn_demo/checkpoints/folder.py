"""Checkpoint folders in Hugging Face Hub layout, saved and loaded strictly.

    config.json          the architecture's config (attn_demo.models.config.read_config)
    model.safetensors    the weights, stored as float16 (upcast to float32 on load)
    source.model         SentencePiece model for English
    target.model         SentencePiece model for French
    README.md            model card: Hub YAML metadata, what the model is, how it was trained, what was measured
    card.json            the card's facts: training, measured scores, … (attn_demo.checkpoints.card)
    training-data.json   what it learned from (attn_demo.training.coverage), optional
    timeline.json        how it learned: α and translations of the page's sentences during training (attn_demo.measures.timeline), optional
    coverage-marks.json  how often a word its α barely looked at was missing, and the threshold the page marks by
                         (attn_demo.measures.marks), optional
"""
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from attn_demo.checkpoints.card import read_card
from attn_demo.measures.marks import MARKS, read_marks
from attn_demo.measures.timeline import read_timeline
from attn_demo.models.config import ModelConfig, TransformerConfig, read_config
from attn_demo.models.rnn import Seq2Seq
from attn_demo.models.tokenizer import Tokenizer
from attn_demo.models.transformer import Transformer

def build_model(config: ModelConfig | TransformerConfig) -> Seq2Seq | Transformer:
    """A freshly initialised model of the config's architecture."""
    return Transformer(config) if isinstance(config, TransformerConfig) else Seq2Seq(config)


CHECKPOINT_FILES = ("config.json", "model.safetensors", "source.model", "target.model")
TRAINING_DATA = "training-data.json"


def save_checkpoint(folder: Path, model: Seq2Seq, src_tok: Tokenizer, tgt_tok: Tokenizer) -> None:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.config.to_json(folder / "config.json")
    weights = {name: t.detach().to("cpu", torch.float16).contiguous() for name, t in model.state_dict().items()}
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    for tok, name in ((src_tok, "source.model"), (tgt_tok, "target.model")):
        copy_into(tok.model_file, folder / name)
    (folder / MARKS).unlink(missing_ok=True)  # measured on the weights these replace: the page must not mark by them


def copy_into(source: Path, target: Path) -> None:
    """A file copied into a checkpoint folder, unless it is already that file (a run's --out may be
    the folder its tokenizers and training data were written to)."""
    if Path(source).resolve() != Path(target).resolve():
        shutil.copyfile(source, target)


def load_checkpoint(folder: Path, device="cpu") -> tuple[Seq2Seq, Tokenizer, Tokenizer]:
    """Model (in eval mode) and tokenizers; any missing file or mismatched weight is an error naming it."""
    folder = Path(folder)
    for name in CHECKPOINT_FILES:
        if not (folder / name).is_file():
            raise FileNotFoundError(f"checkpoint {folder} has no {name}")
    model = build_model(read_config(folder / "config.json"))
    model.load_state_dict(_read_weights(folder / "model.safetensors", model))
    return model.to(device).eval(), Tokenizer(folder / "source.model"), Tokenizer(folder / "target.model")


@dataclass(frozen=True, eq=False)
class CheckpointFolder:
    """Everything a checkpoint folder holds, read once."""

    path: Path
    model: Seq2Seq  # in eval mode, on the device it was read to
    source_tokenizer: Tokenizer
    target_tokenizer: Tokenizer
    card: dict  # the model card's facts (attn_demo.checkpoints.card.read_card); {} without a card
    training_data: dict | None  # what it learned from (attn_demo.training.coverage); None if not recorded
    timeline: dict | None  # how it learned (attn_demo.measures.timeline); None if not recorded
    marks: dict | None  # its coverage marks measured (attn_demo.measures.marks); None if not measured


def read_folder(folder: Path, device="cpu") -> CheckpointFolder:
    """A whole checkpoint folder: weights, tokenizers, card, training data, timeline and coverage marks."""
    folder = Path(folder)
    return CheckpointFolder(folder, *load_checkpoint(folder, device), card=read_card(folder),
                            training_data=read_training_data(folder), timeline=read_timeline(folder),
                            marks=read_marks(folder))


def read_training_data(folder: Path) -> dict | None:
    """The checkpoint's TRAINING_DATA (see attn_demo.training.coverage), its english_words as a set; None for
    a checkpoint without one."""
    path = Path(folder) / TRAINING_DATA
    if not path.is_file():
        return None
    facts = json.loads(path.read_text(encoding="utf-8"))
    return {**facts, "english_words": frozenset(facts["english_words"])}


def warm_start(model: Seq2Seq, checkpoint: CheckpointFolder) -> dict:
    """Load a checkpoint's weights into `model`, which may differ from it in its attention alone, or a Transformer in
    its feed-forward φ.

    Same attention: every weight, strictly (a Transformer's under its own φ: GELU from a ReLU checkpoint, the same
    weights and a smooth nonlinearity to learn to use). Another attention: every weight outside the attention
    module must match in name and shape and is taken; the attention module starts afresh, except
    luong-lowrank from luong-general, whose U, V come from the rank-R truncated SVD of the trained
    W (the best rank-R approximation of s_tᵀ W h_j, Eckart–Young), and bahdanau-coverage from
    bahdanau, which takes the additive score's W_h, W_s and v (its w_c starts at zero). Returns what was taken and what
    is new, for the log and the model card.
    """
    source, folder = checkpoint.model, checkpoint.path
    old, new = source.config.attention, model.config.attention
    if old == new:
        model.load_state_dict(source.state_dict())
        warm = {"checkpoint": str(folder), "attention": old}
        if new == "transformer" and source.config.activation != model.config.activation:
            warm["activation"] = [source.config.activation, model.config.activation]
        return warm
    own, stored = model.state_dict(), source.state_dict()
    taken = {name: t for name, t in stored.items() if name in own and own[name].shape == t.shape}
    if (old, new) == ("luong-general", "luong-lowrank"):
        taken.update(_low_rank_factors(stored["decoder.attention.W.weight"], model.config.attn_rank))
    fresh = sorted(set(own) - set(taken))
    kept_apart = [name for name in fresh if not name.startswith("decoder.attention.")]
    if kept_apart:
        raise ValueError(f"{folder} ({old}) cannot warm-start {new}: only the attention module may differ, "
                         f"but {kept_apart} do not match")
    model.load_state_dict({**own, **taken})
    if new == "none":
        how = "no attention module: the decoder reads the fixed c instead"
    elif "decoder.attention.U.weight" in taken:
        how = "U, V from the rank-R truncated SVD of the trained W"
    elif fresh == ["decoder.attention.w_c.weight"]:
        how = "the score's W_h, W_s and v taken; the coverage weight w_c starts at zero, so the model starts as the checkpoint"
    else:
        how = "the attention module initialised afresh"
    return {"checkpoint": str(folder), "attention": old, "replaced_by": new, "new_weights": fresh, "how": how,
            "dropped_weights": sorted(set(stored) - set(taken))}


def warm_start_text(warm: dict) -> str:
    """One line on what warm_start took, for the training log."""
    name = f"`{warm['checkpoint']}`"
    if "activation" in warm:
        was, now = warm["activation"]
        return f"continued from {name}: every weight, its feed-forward φ {now} where it was {was}"
    if "replaced_by" not in warm:
        return f"continued from {name}: every weight"
    return (f"warm-started from {name} ({warm['attention']}), attention replaced by {warm['replaced_by']}: every other "
            f"weight taken; {warm['how']} (new: {', '.join(warm['new_weights']) or 'none'}; "
            f"left behind: {', '.join(warm['dropped_weights']) or 'none'})")


def _low_rank_factors(W: torch.Tensor, rank: int) -> dict:
    """U (R, H), V (R, D) with UᵀV the best rank-R approximation of W (H, D): W ≈ P_R Σ_R Q_Rᵀ,
    split evenly as U = √Σ_R P_Rᵀ, V = √Σ_R Q_Rᵀ."""
    P, sigma, Qt = torch.linalg.svd(W, full_matrices=False)
    root = sigma[:rank].sqrt()[:, None]  # (R, 1)
    return {"decoder.attention.U.weight": root * P[:, :rank].T, "decoder.attention.V.weight": root * Qt[:rank]}


def _read_weights(path: Path, model: Seq2Seq) -> dict:
    try:
        stored = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as error:
        raise ValueError(f"{path} is not a readable safetensors file: {error}") from error
    expected = model.state_dict()
    missing, extra = sorted(set(expected) - set(stored)), sorted(set(stored) - set(expected))
    if missing or extra:
        raise ValueError(f"{path} does not match config.json: missing weights {missing}, unexpected weights {extra}")
    for name, tensor in stored.items():
        if tensor.shape != expected[name].shape:
            raise ValueError(f"{path}: weight {name} has shape {tuple(tensor.shape)}, "
                             f"config.json implies {tuple(expected[name].shape)}")
    return {name: tensor.float() for name, tensor in stored.items()}
