"""Coverage marks: the English words a translation's attention barely looked at, or looked at again
after they were covered, and how often such a mark points at a real fault of the output.

A word's coverage C_w is the attention its pieces received over the whole translation (the sum of
its columns of α). A word of coverage below a threshold of LOW was barely looked at: was it dropped? A word of
coverage above one of HIGH was looked at again after it was covered: was it translated twice? α is
not a proof (it rests on </s> at times), so a mark is an observation, worth showing only where
`measure` finds it right at least MIN_PRECISION of the time for every model (`chosen_threshold`);
the page shows the coverage row itself either way.

The truth a mark is checked against comes from a word aligner (eflomal, attn_demo.aligner) run on
the source and the model's own output: a word is *missing* when the aligner links it to no output
word, and *repeated* when it is linked to the same output word at two places."""
import re

import numpy as np

from attn_demo.alignment import piece_words
from attn_demo.aligner import aligner_links, tokenise_french

LOW = (0.05, 0.1, 0.2, 0.3)  # the thresholds measured for "barely looked at"
HIGH = (1.3, 1.6, 2.0, 2.5)  # and for "looked at again"
MIN_PRECISION = 0.5  # a mark the page would show must point at a real fault at least this often, for every model
LETTERS = re.compile(r"\w")


def word_coverage(translation) -> tuple[list[str], np.ndarray]:
    """The English words of a translation (without </s>) and the coverage of each: its pieces' column sums of α."""
    words, spans = piece_words(translation.source_tokens)
    coverage = np.array([translation.coverage[list(span)].sum() for span in spans])
    return words[:-1], coverage[:-1]


def aligner_words(word: str) -> str:
    """A whitespace word as the aligner reads it: lowercased, without the punctuation around it."""
    return re.sub(r"^\W+|\W+$", "", word.lower()) or word.lower()


def faults_by_word(english_words: list[list[str]], outputs: list[str], extra_pairs) -> tuple[list, list]:
    """Per sentence, which English words the aligner finds missing from the output and which repeated in it."""
    french = [tokenise_french(output) for output in outputs]
    links = aligner_links([[aligner_words(w) for w in words] for words in english_words], french, extra_pairs)
    missing, repeated = [], []
    for words, tokens, pairs in zip(english_words, french, links["eflomal grow-diag-final-and"]):
        linked = [[f for e, f in pairs if e == j] for j in range(len(words))]
        missing.append([not places and bool(LETTERS.search(word)) for word, places in zip(words, linked)])
        repeated.append([any(LETTERS.search(tokens[a]) and tokens[a] == tokens[b] for a in places for b in places if a < b)
                         for places in linked])
    return missing, repeated


def precision_recall(marked: list[bool], true: list[bool]) -> dict:
    hits, n_marked, n_true = int(sum(m and t for m, t in zip(marked, true))), int(sum(marked)), int(sum(true))
    return {"marked": n_marked, "true": n_true, "precision": round(hits / max(n_marked, 1), 3),
            "recall": round(hits / max(n_true, 1), 3)}


def measure(translations, extra_pairs) -> dict:
    """Precision and recall of each threshold of LOW against the missing words and of HIGH against the
    repeated ones, over the words of the given Translations (refused inputs, None, left out)."""
    translations = [t for t in translations if t is not None]
    words, coverage = zip(*(word_coverage(t) for t in translations))
    missing, repeated = faults_by_word(list(words), [t.text for t in translations], extra_pairs)
    flat = lambda rows: [x for row in rows for x in row]  # noqa: E731
    coverage, missing, repeated = np.concatenate(coverage), flat(missing), flat(repeated)
    real = [bool(LETTERS.search(w)) for w in flat(words)]  # punctuation is never marked
    return {"sentences": len(translations), "words": int(sum(real)),
            "low": {str(low): precision_recall(list((coverage < low) & real), missing) for low in LOW},
            "high": {str(high): precision_recall(list(coverage > high), repeated) for high in HIGH}}


def chosen_threshold(measurements: list[dict]) -> float | None:
    """The threshold of LOW the page should mark with, from `measure`'s results for several models: the
    best F1 (summed over the models) among those whose precision is at least MIN_PRECISION for each."""
    def f1(r):
        return 2 * r["precision"] * r["recall"] / max(r["precision"] + r["recall"], 1e-9)
    fair = [low for low in LOW if all(m["low"][str(low)]["precision"] >= MIN_PRECISION for m in measurements)]
    return max(fair, key=lambda low: sum(f1(m["low"][str(low)]) for m in measurements), default=None)


def marks_table(measurements: dict) -> str:
    """The measurement as the README shows it: for each model, each threshold's precision and recall."""
    lows = [str(low) for low in LOW]
    header = ("| model | words | " + " | ".join(f"C < {low}" for low in lows) + " |\n|---|---|" + "---|" * len(lows))
    rows = [f"| `{name}` | {m['words']:,} | " + " | ".join(
        f"{m['low'][low]['precision']:.2f} / {m['low'][low]['recall']:.2f}" for low in lows) + " |"
        for name, m in measurements.items()]
    return "\n".join([header, *rows])
