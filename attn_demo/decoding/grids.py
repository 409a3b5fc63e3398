"""A translation's grids of α: their names (a Transformer's layer and head, from 1), and its pieces grouped into
the words they spell, so that a grid can be drawn, measured or exported by word as well as by piece.

    piece_words(pieces)                 the words pieces spell, and each word's piece positions
    word_attention(α, spans, spans)     α (T, S) by piece → by word
    words_view(source, target, α)       both at once: the words and α by word
    head_grids(heads)                   (layer, head) → a Transformer's cross-attention α, (layer, None) → the layer's mean
    grid_name(layer, head)              "layer 2, head 3", as a person counts
    pick_key(layer, head)               "2.3", as links, exports and the page's picks name a grid (PICK_KEY reads it)
"""
import re

import numpy as np

# SentencePiece marks the first piece of every whitespace-separated word; the end-of-sentence piece stands alone
WORD_START = "▁"
EOS_PIECE = "</s>"


def piece_words(pieces: list[str]) -> tuple[list[str], list[range]]:
    """The whitespace-separated words that pieces spell, and the piece positions of each: a word
    starts at a ▁ piece; the end-of-sentence piece stands alone."""
    starts = [i for i, piece in enumerate(pieces) if i == 0 or piece.startswith(WORD_START) or EOS_PIECE in (piece, pieces[i - 1])]
    spans = [range(a, b) for a, b in zip(starts, starts[1:] + [len(pieces)])]
    return ["".join(pieces[i] for i in span).removeprefix(WORD_START) for span in spans], spans


def word_attention(attention: np.ndarray, source_spans, target_spans, shift: int = 0) -> np.ndarray:
    """Piece-level α (T, S) → word-level (French words, English words). An English word gets the
    sum of its pieces' α (what attention gives it); a French word, the mean of its pieces' rows, so
    rows stay distributions. Spans that leave out EOS drop its column and row (a row then sums to
    1 − α(EOS)). shift = 1 reads the row of the step after each piece (see ALIGNERS)."""
    columns = np.stack([attention[:, span].sum(1) for span in source_spans], 1)  # (T, English words)
    return np.stack([columns[[t + shift for t in span]].mean(0) for span in target_spans])


def words_view(source_tokens, target_tokens, attention) -> tuple[list[str], list[str], np.ndarray]:
    """A translation's α by word instead of by piece: English words, French words and (French words,
    English words) α, EOS kept as a word of its own so that every row still sums to 1."""
    source_words, source_spans = piece_words(source_tokens)
    target_words, target_spans = piece_words(target_tokens)
    return source_words, target_words, word_attention(attention, source_spans, target_spans)


def head_grids(heads) -> dict:
    """(layer, head) → that head's cross-attention α (T, S), and (layer, None) → the mean over the layer's heads."""
    grids = {}
    for layer, per_head in enumerate(heads.cross):  # (H, T, S)
        grids[(layer, None)] = per_head.mean(0)
        grids.update({(layer, head): alpha for head, alpha in enumerate(per_head)})
    return grids


def grid_name(layer: int, head: int | None) -> str:
    """A cross-attention grid as a person counts it, from 1: "layer 2, mean of heads", "layer 2, head 3"."""
    return f"layer {layer + 1}, " + ("mean of heads" if head is None else f"head {head + 1}")


# A grid as links, exports, the page's pick slots and the step payload name it: "layer.head" from 1, "2.3", or
# "2.mean" for the mean of layer 2's heads (pick_key writes it, views.read_pick reads it)
PICK_KEY = re.compile(r"(\d{1,3})\.(\d{1,3}|mean)")


def pick_key(layer: int, head: int | None) -> str:
    """A grid's key (PICK_KEY) from its layer and head, from 0 (head None: the layer's mean)."""
    return f"{layer + 1}.{'mean' if head is None else head + 1}"
