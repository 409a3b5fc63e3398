"""The configuration of each architecture, saved next to the weights as config.json: one dataclass per
architecture (ModelConfig for the GRU models, TransformerConfig), plain JSON, read strictly (read_config)."""
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

ATTENTION_SCORES = ("bahdanau", "bahdanau-coverage", "luong-dot", "luong-general", "luong-lowrank", "luong-concat")  # the attention modules
ATTENTION_TYPES = ATTENTION_SCORES + ("none",)  # "none": the no-attention baseline, one fixed context c
MODEL_KINDS = ATTENTION_TYPES + ("transformer",)  # every kind of model, as attention.KINDS describes them
ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU"}  # a Transformer's feed-forward nonlinearity φ, as cards write it
ACTIVATIONS = tuple(ACTIVATION_NAMES)


class JsonConfig:
    """Saved as config.json, read back strictly: a field the dataclass lacks is an error, not ignored."""

    def to_json(self, path: Path) -> None:
        Path(path).write_text(json.dumps(dataclasses.asdict(self), indent=2) + "\n")

    @classmethod
    def from_json(cls, path: Path):
        return _strict(cls, json.loads(Path(path).read_text()), path)


@dataclass(frozen=True)
class ModelConfig(JsonConfig):
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

    def describe(self) -> str:
        """The sizes in one line of a model card."""
        return (f"embeddings {self.emb_size}, encoder 2×{self.enc_hidden_size} (annotations h_j of size "
                f"{self.annotation_size}), decoder {self.dec_hidden_size}")


@dataclass(frozen=True)
class TransformerConfig(JsonConfig):
    """Sizes of a Transformer encoder–decoder (Vaswani et al. 2017) in the pre-norm arrangement
    (x + Sublayer(LayerNorm(x)), Nguyen & Salazar 2019: it trains without a long warm-up), with
    sinusoidal positions and the output layer tied to the target embedding; every field is plain JSON.

    The grid the page shows for it, Translation.attention, is the cross-attention of one decoder
    layer, one head or the mean over its heads (shown_layer, shown_head; Garg et al. 2019 found the
    mean over the penultimate layer's heads aligns best: the default, until `evaluate --alignments`
    measures every layer and head)."""

    architecture: str  # "transformer"
    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 256  # D: embeddings, every sublayer's input and output, the annotations h_j
    heads: int = 4  # H heads of d_k = D / H each
    enc_layers: int = 3
    dec_layers: int = 3
    ff_size: int = 1024  # the feed-forward sublayer's hidden size
    activation: str = "relu"  # its φ: "relu" max(0, ·) (Vaswani et al. 2017) or "gelu" (Hendrycks & Gimpel 2016)
    dropout: float = 0.3  # on every sublayer's output and on the embeddings (Araabi & Monz 2020)
    shown_layer: int | None = None  # the decoder layer (from 0) of the page's grid; None: the penultimate
    shown_head: int | None = None  # its head (from 0); None: the mean over the layer's heads
    max_source_pieces: int = 150
    pad_id: int = 0
    unk_id: int = 1
    bos_id: int = 2
    eos_id: int = 3

    def __post_init__(self):
        if self.architecture != "transformer":
            raise ValueError(f"TransformerConfig is for architecture 'transformer', not {self.architecture!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {self.activation!r}; valid: {', '.join(ACTIVATIONS)}")
        if self.d_model % self.heads:
            raise ValueError(f"d_model {self.d_model} must split evenly into {self.heads} heads")
        if not 0 <= self.layer_shown < self.dec_layers:
            raise ValueError(f"shown_layer must be a decoder layer, 0 to {self.dec_layers - 1}, not {self.shown_layer}")
        if self.shown_head is not None and not 0 <= self.shown_head < self.heads:
            raise ValueError(f"shown_head must be a head, 0 to {self.heads - 1} (or null: their mean), not {self.shown_head}")

    @property
    def attention(self) -> str:
        """Its kind in attention.KINDS."""
        return "transformer"

    @property
    def head_size(self) -> int:  # d_k
        return self.d_model // self.heads

    @property
    def annotation_size(self) -> int:  # D: the encoder's output h_j
        return self.d_model

    @property
    def layer_shown(self) -> int:
        """shown_layer, with the penultimate decoder layer for None."""
        return max(self.dec_layers - 2, 0) if self.shown_layer is None else self.shown_layer

    def describe(self) -> str:
        """The sizes in one line of a model card."""
        return (f"d_model {self.d_model}, {self.heads} heads of d_k {self.head_size}, {self.enc_layers} encoder + "
                f"{self.dec_layers} decoder layers, feed-forward {self.ff_size} ({ACTIVATION_NAMES[self.activation]}); "
                "pre-norm, sinusoidal positions")


def read_config(path: Path) -> ModelConfig | TransformerConfig:
    """config.json as the dataclass of its architecture: a TransformerConfig where it says
    "architecture": "transformer", else the GRU models' ModelConfig. Unknown fields are refused."""
    fields = json.loads(Path(path).read_text())
    if not isinstance(fields, dict):
        raise ValueError(f"{path}: a config is a JSON object")
    return _strict(TransformerConfig if fields.get("architecture") == "transformer" else ModelConfig, fields, path)


def _strict(cls, fields: dict, path: Path):
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise ValueError(f"{path}: unknown config fields {unknown}")
    return cls(**fields)
