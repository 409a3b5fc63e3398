"""What a model learned from: how many pairs, how long, and which English words it ever saw.

A word the training English never contains ("cinema": the Tatoeba pairs say "movies") cannot be
translated by any recipe on that data; the model guesses from the word's pieces ("cabane"). The
page marks such words in the input, from the checkpoint's TRAINING_DATA file:

    {"dataset": "fra-eng-2019-04-07.tsv.gz", "pairs": 152331, "mean_english_words": 6.17,
     "pairs_16_plus_words": 700, "english_words": ["a", "aaron", …]}

`train` writes it beside the weights; for a checkpoint trained before it did:

    python -m attn_demo.training.coverage checkpoints/bahdanau-en-fr

(the pairs trained on are found again as train found them: the same pool, test set, validation
split, and the checkpoint's own tokenizers dropping pairs over --max-len pieces).
"""
import argparse
import json
import re
from pathlib import Path

from attn_demo.checkpoints.folder import TRAINING_DATA
from attn_demo.cli import HelpFormatter, run
from attn_demo.data.pairs import TEST_SET, TRAIN_POOL, encode_pairs, read_pairs, train_valid_split
from attn_demo.models.tokenizer import Tokenizer

LONG_WORDS = 16  # "long" as the quality targets count it: 16 or more English words
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")  # letters, with inner apostrophes ("don't")


def words(text: str) -> list[str]:
    """The words of a text, lower-cased, in order: what is looked up in the training vocabulary."""
    return [word.lower().replace("’", "'") for word in WORD.findall(text)]


def training_data(english: list[str], dataset: str) -> dict:
    """The facts of TRAINING_DATA from the training split's English sentences."""
    lengths = [len(sentence.split()) for sentence in english]
    return {"dataset": dataset, "pairs": len(english), "mean_english_words": round(sum(lengths) / len(lengths), 2),
            "pairs_16_plus_words": sum(n >= LONG_WORDS for n in lengths),
            "english_words": sorted({word for sentence in english for word in words(sentence)})}


def write_training_data(folder: Path, english: list[str], dataset: str) -> None:
    (Path(folder) / TRAINING_DATA).write_text(json.dumps(training_data(english, dataset), ensure_ascii=False), encoding="utf-8")


def unseen_words(text: str, known: frozenset) -> list[str]:
    """The words of text that never occur in the training English, each once, in order."""
    return list(dict.fromkeys(word for word in words(text) if word not in known))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("checkpoint", type=Path, help="checkpoint folder to write training-data.json into")
    p.add_argument("--train-pool", type=Path, default=TRAIN_POOL, help="the pairs it was trained on")
    p.add_argument("--test-set", type=Path, default=TEST_SET, help="pairs whose English train left out")
    p.add_argument("--n-valid", type=int, default=2000, help="the validation split's size, as train made it")
    p.add_argument("--seed", type=int, default=1, help="the validation split's seed, as train made it")
    p.add_argument("--max-len", type=int, default=50, help="most pieces a side in a pair trained on, as train had it")
    args = p.parse_args(argv)
    train, _ = train_valid_split(read_pairs(args.train_pool), read_pairs(args.test_set), args.n_valid, args.seed)
    tokenizers = (Tokenizer(args.checkpoint / "source.model"), Tokenizer(args.checkpoint / "target.model"))
    kept, _ = encode_pairs(train, *tokenizers, args.max_len)
    write_training_data(args.checkpoint, [en for en, _ in kept], args.train_pool.name)
    print(f"{args.checkpoint / TRAINING_DATA}: {len(kept)} training pairs")


if __name__ == "__main__":
    run(main)
