"""The one model configuration, saved next to the weights as config.json."""
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

ATTENTION_SCORES = ("bahdanau", "bahdanau-coverage", "luong-dot", "luong-general", "luong-lowrank", "luong-concat")  # the attention modules
ATTENTION_TYPES = ATTENTION_SCORES + ("none",)  # "none": the no-attention baseline, one fixed context c


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of a GRU encoder–decoder with attention (or without: "none"); every field is plain JSON.

    The Luong decoder uses no input feeding: s_t = GRU(E y_{t−1}, s_{t−1}), and the
    attentional state h̃_t only feeds the output layer (Luong et al. 2015, §3.1).
    """

    attention: str  # one of ATTENTION_TYPES
    src_vocab_size: int
    tgt_vocab_size: int
    emb_size: int = 256  # E
    enc_hidden_size: int = 256  # per direction, so D = 2 × this
    dec_hidden_size: int = 512  # H
    attn_hidden_size: int = 256  # A (bahdanau, bahdanau-coverage and luong-concat only)
    attn_rank: int = 64  # R, the rank of U and V (luong-lowrank only)
    dropout: float = 0.2
    max_source_pieces: int = 150  # longer inputs are refused; the longest 51–60-word test input has 114
    pad_id: int = 0
    unk_id: int = 1
    bos_id: int = 2
    eos_id: int = 3

    def __post_init__(self):
        if self.attention not in ATTENTION_TYPES:
            raise ValueError(f"unknown attention {self.attention!r}; valid: {', '.join(ATTENTION_TYPES)}")
        if self.attention == "luong-dot" and self.dec_hidden_size != 2 * self.enc_hidden_size:
            raise ValueError("luong-dot needs dec_hidden_size == 2 × enc_hidden_size (sᵀh must be defined)")

    @property
    def annotation_size(self) -> int:  # D
        return 2 * self.enc_hidden_size

    def to_json(self, path: Path) -> None:
        Path(path).write_text(json.dumps(dataclasses.asdict(self), indent=2) + "\n")

    @classmethod
    def from_json(cls, path: Path) -> "ModelConfig":
        fields = json.loads(Path(path).read_text())
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(fields) - known)
        if unknown:
            raise ValueError(f"{path}: unknown config fields {unknown}")
        return cls(**fields)
