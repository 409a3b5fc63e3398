"""SentencePiece tokenizers (one per language) and the checks every user input passes."""
import unicodedata
from pathlib import Path

import sentencepiece as spm

MAX_INPUT_CHARS = 500  # the longest 51–60-word input of the long-sentence test set has 369 characters


class Tokenizer:
    """A SentencePiece model with ids pad=0, unk=1, bos=2, eos=3."""

    def __init__(self, model_file: Path):
        self.model_file = Path(model_file)
        self.sp = spm.SentencePieceProcessor(model_file=str(model_file))

    def __len__(self):
        return self.sp.get_piece_size()

    def encode(self, text: str) -> list[int]:
        return self.sp.encode(text)

    def pieces(self, ids) -> list[str]:
        return [self.sp.id_to_piece(int(i)) for i in ids]

    def decode(self, ids) -> str:
        return self.sp.decode([int(i) for i in ids])


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


def check_known(text: str, tokenizer: Tokenizer, ids: list[int], max_pieces: int, language: str = "English") -> None:
    """Refuse characters the model never saw and inputs longer than it can attend over."""
    unknown = [ch for ch in dict.fromkeys(text) if not ch.isspace() and tokenizer.sp.piece_to_id(ch) == tokenizer.sp.unk_id()
               and tokenizer.sp.unk_id() in tokenizer.encode(ch)]
    if unknown:
        shown = " ".join(repr(ch) for ch in unknown[:10])
        raise ValueError(f"The model has never seen these characters: {shown}. "
                         f"It reads {language} written in the Latin alphabet.")
    if len(ids) + 1 > max_pieces:
        raise ValueError(f"The input is {len(ids) + 1} pieces long; the model takes at most {max_pieces}. "
                         "Please use a shorter sentence.")
