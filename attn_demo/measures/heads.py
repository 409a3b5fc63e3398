"""What each head of a Transformer's cross-attention does, in numbers: how sure it is and how much of its α rests
on </s> (Voita et al. 2019), what the translations lose without it (Michel et al. 2019; evaluate --heads decodes
them), and how far α moves in each layer when it is turned off.

    confidence       the mean over output steps of max_j α_tj: 1 for a head that always looks at one piece
    on </s>          the mean over output steps of α_t,</s>: a head resting on the end of the sentence reads nothing
                     in particular there (its output is then roughly one fixed vector)
    BLEU without it  corpus BLEU of the translations with this head's output zeroed; its drop: BLEU with every
                     head at work, less that
"""
import numpy as np

from attn_demo.decoding.grids import grid_name


def head_statistics(heads) -> tuple[np.ndarray, np.ndarray, int]:
    """One translation's confidence and α on </s> of every cross-attention head, summed over its T output steps
    (L, H) each, and T: sums, so that a corpus weighs every output step alike."""
    cross = heads.cross  # (L, H, T, S); </s> is the last source piece
    return cross.max(-1).sum(-1), cross[..., -1].sum(-1), cross.shape[2]


def corpus_statistics(translations) -> dict:
    """The confidence and α on </s> of every head over many translations (Heads of each), by grid_name."""
    confidence, on_eos, steps = 0.0, 0.0, 0
    for translation in translations:
        c, e, t = head_statistics(translation.heads)
        confidence, on_eos, steps = confidence + c, on_eos + e, steps + t
    confidence, on_eos = confidence / steps, on_eos / steps
    return {grid_name(layer, head): {"confidence": round(float(confidence[layer, head]), 4),
                                     "eos_share": round(float(on_eos[layer, head]), 4)}
            for layer in range(confidence.shape[0]) for head in range(confidence.shape[1])}


def every_head(config) -> list[tuple[int, int]]:
    """(layer, head) of every cross-attention head, layer by layer."""
    return [(layer, head) for layer in range(config.dec_layers) for head in range(config.heads)]


def same_reading(pieces: list, other: list) -> int:
    """How many first output steps of two translations of one sentence read the same French so far (step t reads
    the pieces before it): one more than their common beginning, within both."""
    common = next((t for t, (a, b) in enumerate(zip(pieces, other)) if a != b), min(len(pieces), len(other)))
    return min(common + 1, len(pieces), len(other))


def alpha_moved(heads, other, steps: int) -> np.ndarray:
    """The largest change of any head's α in each decoder layer (L,) over the first `steps` output steps, between
    two Heads of one sentence (say, with every head at work and with one turned off)."""
    return np.abs(heads.cross[:, :, :steps] - other.cross[:, :, :steps]).max(axis=(1, 2, 3))
