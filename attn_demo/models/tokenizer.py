"""SentencePiece tokenizers (one per language) and the checks every user input passes."""
import functools
import unicodedata
from pathlib import Path

import sentencepiece as spm

MAX_INPUT_CHARS = 500  # the longest 51–60-word input of the long-sentence test set has 369 characters


class Tokenizer:
    """A SentencePiece model with ids pad=0, unk=1, bos=2, eos=3."""

    def __init__(self, model_file: Path):
        self.model_file = Path(model_file)
        self.sp = spm.SentencePieceProcessor(model_file=str(model_file))
        # every input's characters are looked up (unknown_characters), each a call of SentencePiece: the answers
        # are the tokenizer's own and never change, so they are kept for the characters met most recently
        self.reads_as_unknown = functools.lru_cache(maxsize=4096)(self._reads_as_unknown)

    def __len__(self):
        return self.sp.get_piece_size()

    def encode(self, text: str, alpha: float = 0.0) -> list[int]:
        """The text's ids: its most probable segmentation, or with alpha > 0 one drawn from every segmentation the
        unigram model allows, each with probability ∝ P(x)^alpha (subword regularization, Kudo 2018: a small alpha
        draws near-uniformly, a large one nearly always the best; sampling_seed fixes the draws)."""
        if alpha > 0:
            return self.sp.encode(text, enable_sampling=True, alpha=alpha, nbest_size=-1)
        return self.sp.encode(text)

    def _reads_as_unknown(self, character: str) -> bool:
        """Whether the tokenizer reads this one character as its unknown piece."""
        return self.sp.unk_id() in self.encode(character)

    def pieces(self, ids) -> list[str]:
        return [self.sp.id_to_piece(int(i)) for i in ids]

    def decode_pieces(self, pieces: list[str]) -> str:
        """Text from pieces as a Translation holds them (SentencePiece's own detokenisation)."""
        return self.sp.decode_pieces(list(pieces))

    def decode(self, ids) -> str:
        return self.sp.decode([int(i) for i in ids])


def sampling_seed(seed: int):
    """Seed the segmentations Tokenizer.encode draws from here on (SentencePiece keeps one generator per process)."""
    spm.set_random_generator_seed(seed)


def train_tokenizer(sentences, model_prefix: Path, vocab_size: int) -> Tokenizer:
    """Unigram SentencePiece on the given sentences (the training split only)."""
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_prefix=str(model_prefix), vocab_size=vocab_size,
        model_type="unigram", character_coverage=1.0, pad_id=0, unk_id=1, bos_id=2, eos_id=3,
        num_threads=2, minloglevel=2,
    )
    return Tokenizer(f"{model_prefix}.model")


def check_text(text, what: str = "an English sentence") -> str:
    """The input with whitespace normalised, or a ValueError whose message a user can read."""
    if not isinstance(text, str):
        raise ValueError(f"Please type {what}.")
    text = " ".join(text.split())
    if not text:
        raise ValueError(f"Please type {what}: the input is empty.")
    if len(text) > MAX_INPUT_CHARS:
        raise ValueError(f"The input is {len(text)} characters long; the limit is {MAX_INPUT_CHARS}. "
                         "Please translate one sentence at a time.")
    controls = sorted({f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn")})
    if controls:
        raise ValueError(f"The input contains control or invisible characters ({', '.join(controls)}); please remove them.")
    return text


# NFKC leaves curly quotes alone; the English of the training pairs (fra-eng 2019) writes ' 58,367
# times and ’ 37, " 1,022 times and “ ” never. Dashes stay: it hardly has a dash between words
# (one —, one –, one " - ", two "--"), so a "-" for — would be no better known to the model than <unk>.
STRAIGHT_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"'})


def normalise_english(text) -> str:
    """The English input as the models read it: checked (check_text), then NFKC and straight quotes.
    SentencePiece applies NFKC itself, but only as it encodes: done first, the unknown characters
    are named as the model reads them, and a decomposed é (e + U+0301, as some keyboards type it)
    is the é the tokenizer knows instead of an unknown accent."""
    text = check_text(text)
    return " ".join(unicodedata.normalize("NFKC", text).translate(STRAIGHT_QUOTES).split())


def read_english(text, tokenizer: Tokenizer) -> tuple[str, list[str]]:
    """The normalised input and the characters the tokenizer reads as its unknown piece, or a
    ValueError when most of it is unknown. More than half of the non-space characters unknown
    (Chinese, Arabic, emoji only) leaves the model guessing around <unk> pieces and the grids with
    nothing to read; a few (an accent, a dash, an emoji) leave the sentence readable."""
    text = normalise_english(text)
    unknown = unknown_characters(text, tokenizer)
    characters = [ch for ch in text if not ch.isspace()]
    if 2 * sum(ch in unknown for ch in characters) > len(characters):
        raise ValueError(f"Most of the input is characters the model has never seen: {named(unknown)}. "
                         "It reads English written in the Latin alphabet.")
    return text, unknown


def unknown_characters(text: str, tokenizer: Tokenizer) -> list[str]:
    """The distinct characters of text that the tokenizer reads as its unknown piece, in order."""
    return [ch for ch in dict.fromkeys(text) if not ch.isspace() and tokenizer.reads_as_unknown(ch)]


def named(characters: list[str]) -> str:
    """Characters for a message: quoted (an invisible or combining one still shows), the first 10."""
    return ", ".join(repr(ch) for ch in characters[:10]) + (", …" if len(characters) > 10 else "")


def check_known(text: str, tokenizer: Tokenizer, language: str) -> None:
    """Refuse any character the model never saw (for text that must be read exactly as given)."""
    unknown = unknown_characters(text, tokenizer)
    if unknown:
        raise ValueError(f"The model has never seen these characters: {named(unknown)}. "
                         f"It reads {language} written in the Latin alphabet.")


def check_length(ids: list[int], max_pieces: int) -> None:
    """Refuse inputs longer than the model can attend over (EOS counted)."""
    if len(ids) + 1 > max_pieces:
        raise ValueError(f"The input is {len(ids) + 1} pieces long; the model takes at most {max_pieces}. "
                         "Please use a shorter sentence.")
