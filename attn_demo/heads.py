"""What each head of a Transformer's cross-attention does, in numbers: how sure it is and how much of its α rests
on </s> (Voita et al. 2019), and what the translations lose without it (Michel et al. 2019).

    confidence   the mean over output steps of max_j α_tj: 1 for a head that always looks at one piece
    on </s>      the mean over output steps of α_t,</s>: a head resting on the end of the sentence reads nothing
                 in particular there (its output is then roughly one fixed vector)
    BLEU cost    BLEU of the translations with every head at work, less BLEU with this head's output zeroed
"""
import numpy as np

from attn_demo.alignment import grid_name


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
