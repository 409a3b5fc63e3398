"""Coverage marks: the English words a translation's attention barely looked at, or looked at again
after they were covered, and how often such a mark points at a real fault of the output.

A word's coverage C_w is the attention its pieces received over the whole translation (the sum of
its columns of α). A word of coverage below a threshold of LOW was barely looked at: was it dropped? A word of
coverage above one of HIGH was looked at again after it was covered: was it translated twice? α is
not a proof (it rests on </s> at times), so a mark is an observation, worth showing for a model only
where `measure` finds it right at least MIN_PRECISION of the time, with 95% confidence
(`chosen_threshold`); the page shows the coverage row itself either way. The measurement and the
threshold chosen live beside the weights, in MARKS (`evaluate --marks --card`).

The truth a mark is checked against comes from a word aligner (eflomal, attn_demo.measures.aligner) run on
the source and the model's own output: a word is *missing* when the aligner links it to no output
word, and *repeated* when it is linked to the same output word at two places. eflomal samples, so
it is run ALIGNER_VOTES times and a word counts as missing (repeated) when most runs say so: the
precision of a single run moves by up to 0.1 from one measurement to the next."""
import json
import math
import re
from pathlib import Path

import numpy as np

from attn_demo.decoding.grids import piece_words
from attn_demo.measures.aligner import aligner_links, tokenise_french

LOW = (0.05, 0.1, 0.2, 0.3)  # the thresholds measured for "barely looked at"
HIGH = (1.3, 1.6, 2.0, 2.5)  # and for "looked at again"
MIN_PRECISION = 0.5  # a mark the page shows must point at a real fault at least this often (95% confidence)
Z_95 = 1.96  # the normal quantile of a two-sided 95% interval
ALIGNER_VOTES = 3  # aligner runs whose majority decides that a word is missing or repeated
LETTERS = re.compile(r"\w")
MARKS = "coverage-marks.json"  # a checkpoint's measurement, beside its weights


def word_coverage(translation) -> tuple[list[str], np.ndarray]:
    """The English words of a translation (without </s>) and the coverage of each: its pieces' column sums of α."""
    words, spans = piece_words(translation.source_tokens)
    coverage = np.array([translation.coverage[list(span)].sum() for span in spans])
    return words[:-1], coverage[:-1]


def barely_looked_at(translation, threshold: float) -> list[bool]:
    """For each English word (as word_coverage gives them), whether it is marked: coverage below the
    threshold, and letters in it (punctuation is never marked)."""
    words, coverage = word_coverage(translation)
    return [bool(c < threshold and LETTERS.search(word)) for word, c in zip(words, coverage)]


def aligner_words(word: str) -> str:
    """A whitespace word as the aligner reads it: lowercased, without the punctuation around it."""
    return re.sub(r"^\W+|\W+$", "", word.lower()) or word.lower()


def faults_by_word(english_words: list[list[str]], outputs: list[str], extra_pairs,
                   votes: int = ALIGNER_VOTES) -> tuple[list, list]:
    """Per sentence, which English words the aligner finds missing from the output and which repeated in
    it, by the majority of `votes` runs of the aligner."""
    french = [tokenise_french(output) for output in outputs]
    english = [[aligner_words(w) for w in words] for words in english_words]
    runs = [_faults_of_one_run(english_words, french, aligner_links(english, french, extra_pairs)) for _ in range(votes)]
    return _majority([missing for missing, _ in runs]), _majority([repeated for _, repeated in runs])


def _majority(runs: list[list[list[bool]]]) -> list[list[bool]]:
    """Per sentence and word, whether more than half of the runs flag it."""
    return [[2 * sum(flags) > len(runs) for flags in zip(*sentences)] for sentences in zip(*runs)]


def _faults_of_one_run(english_words, french, links) -> tuple[list, list]:
    missing, repeated = [], []
    for words, tokens, pairs in zip(english_words, french, links["eflomal grow-diag-final-and"]):
        linked = [[f for e, f in pairs if e == j] for j in range(len(words))]
        missing.append([not places and bool(LETTERS.search(word)) for word, places in zip(words, linked)])
        repeated.append([any(LETTERS.search(tokens[a]) and tokens[a] == tokens[b] for a in places for b in places if a < b)
                         for places in linked])
    return missing, repeated


def precision_recall(marked: list[bool], true: list[bool]) -> dict:
    hits, n_marked, n_true = int(sum(m and t for m, t in zip(marked, true))), int(sum(marked)), int(sum(true))
    return {"marked": n_marked, "true": n_true, "hits": hits, "precision": round(hits / max(n_marked, 1), 3),
            "recall": round(hits / max(n_true, 1), 3), "precision_floor": round(precision_floor(hits, n_marked), 3)}


def precision_floor(hits: int, marked: int) -> float:
    """The lower end of the Wilson score interval (95%) of a precision of hits / marked: the aligner
    samples, and a few hundred marks leave a precision of 0.57 compatible with 0.5."""
    if marked == 0:
        return 0.0
    p, z2 = hits / marked, Z_95 ** 2
    centre, spread = p + z2 / (2 * marked), Z_95 * math.sqrt(p * (1 - p) / marked + z2 / (4 * marked ** 2))
    return (centre - spread) / (1 + z2 / marked)


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


def chosen_threshold(measurement: dict) -> float | None:
    """The threshold of LOW the page marks a model's words with, from `measure`'s result for it: the best
    F1 among those whose precision is at least MIN_PRECISION at 95% confidence (precision_floor); None
    when there is no such threshold."""
    def f1(r):
        return 2 * r["precision"] * r["recall"] / max(r["precision"] + r["recall"], 1e-9)
    fair = [low for low in LOW if measurement["low"][str(low)]["precision_floor"] >= MIN_PRECISION]
    return max(fair, key=lambda low: f1(measurement["low"][str(low)]), default=None)


def read_marks(folder: Path) -> dict | None:
    """A checkpoint's MARKS: {"threshold" (None: no word is marked), "low": {…}, "high": {…}, …}; None if not measured."""
    path = Path(folder) / MARKS
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def write_marks(folder: Path, marks: dict) -> None:
    (Path(folder) / MARKS).write_text(json.dumps(marks, indent=1) + "\n", encoding="utf-8")


def marks_table(measurements: dict) -> str:
    """The measurements as the README shows them: for each model, each threshold's precision and recall,
    and the threshold the page marks with."""
    lows = [str(low) for low in LOW]
    header = "| model | " + " | ".join(f"C < {low}" for low in lows) + " | marked |\n|---|" + "---|" * (len(lows) + 1)
    rows = []
    for name, m in measurements.items():
        cells = " | ".join(f"{m['low'][low]['precision']:.2f} / {m['low'][low]['recall']:.2f}" for low in lows)
        marked = "none" if m["threshold"] is None else f"C < {m['threshold']:g}"
        rows.append(f"| `{name}` | {cells} | {marked} |")
    return "\n".join([header, *rows])
