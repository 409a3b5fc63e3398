import numpy as np

from attn_demo.measures import marks
from attn_demo.measures.marks import (
    LOW, barely_looked_at, chosen_threshold, faults_by_word, marks_table, precision_floor, precision_recall,
    read_marks, word_coverage)
from conftest import ROOT


class Translated:  # the two fields word_coverage reads
    source_tokens = ["▁The", "▁break", "fast", "▁.", "</s>"]
    coverage = np.array([0.9, 0.05, 0.1, 0.3, 2.0], dtype=np.float32)


def test_a_word_s_coverage_is_its_pieces_and_the_end_of_sentence_piece_is_left_out():
    words, coverage = word_coverage(Translated())
    assert words == ["The", "breakfast", "."]
    np.testing.assert_allclose(coverage, [0.9, 0.15, 0.3], rtol=1e-6)
    assert barely_looked_at(Translated(), 0.2) == [False, True, False]  # "." is below too, but never marked
    assert barely_looked_at(Translated(), 0.1) == [False, False, False]


def test_a_word_the_aligner_links_to_nothing_is_missing_and_one_linked_to_one_word_twice_repeated(monkeypatch):
    # English: swim before breakfast . / French: nager le petit déjeuner avant le petit déjeuner .
    links = [{(0, 0), (2, 2), (2, 3), (2, 6), (2, 7), (3, 8)}]  # "before" is linked to nothing
    monkeypatch.setattr(marks, "aligner_links", lambda english, french, extra: {"eflomal grow-diag-final-and": links})
    missing, repeated = faults_by_word([["swim", "before", "breakfast", "."]],
                                       ["nager le petit déjeuner avant le petit déjeuner ."], [])
    assert missing == [[False, True, False, False]] and repeated == [[False, False, True, False]]


def test_a_word_is_missing_where_most_runs_of_the_aligner_say_so(monkeypatch):
    """eflomal samples: each run links a little differently, and the majority decides."""
    runs = iter([[{(0, 0), (2, 1)}], [{(0, 0), (1, 1), (2, 1)}], [{(0, 0)}]])  # "the" linked in 1 run of 3, "cat" in 2
    monkeypatch.setattr(marks, "aligner_links", lambda english, french, extra: {"eflomal grow-diag-final-and": next(runs)})
    missing, _ = faults_by_word([["see", "the", "cat"]], ["vois chat"], [], votes=3)
    assert missing == [[False, True, False]]


def test_precision_and_recall_count_marks_against_the_truth():
    assert precision_recall([True, True, False, False], [True, False, True, False]) == {
        "marked": 2, "true": 2, "hits": 1, "precision": 0.5, "recall": 0.5, "precision_floor": 0.095}


def test_the_precision_floor_is_the_wilson_interval_s_lower_end():
    assert round(precision_floor(8, 10), 3) == 0.490  # the textbook 95% interval of 8 in 10: 0.490 to 0.943
    assert precision_floor(0, 0) == 0.0 and precision_floor(0, 5) < 1e-12
    assert precision_floor(66, 115) < 0.5 < 66 / 115 and precision_floor(38, 53) > 0.5  # a few hundred marks are not many


def measured(precisions: dict, marked: int = 100) -> dict:
    """A measure() result with the given precision at each threshold of LOW, recall the threshold itself."""
    return {"low": {str(low): {"precision": p, "recall": low, "precision_floor": precision_floor(round(p * marked), marked)}
                    for low, p in zip(LOW, precisions)}}


def test_a_model_s_words_are_marked_below_the_best_threshold_right_half_the_time_with_confidence():
    assert chosen_threshold(measured([0.9, 0.8, 0.7, 0.65])) == max(LOW)  # all right often enough: the best F1
    assert chosen_threshold(measured([0.9, 0.8, 0.55, 0.4])) == 0.1  # 0.55 of 100 marks could be 0.45
    assert chosen_threshold(measured([0.9, 0.8, 0.55, 0.4], marked=2000)) == 0.2  # but not of 2,000
    assert chosen_threshold(measured([0.45, 0.4, 0.4, 0.3])) is None


def shipped_marks() -> dict:
    """The coverage marks measured beside each shipped checkpoint (evaluate --marks --card), by checkpoint."""
    folders = [folder for folder in sorted((ROOT / "checkpoints").iterdir()) if folder.is_dir()]
    return {folder.name: read_marks(folder) for folder in folders if read_marks(folder)}


def test_every_model_with_attention_has_its_marks_measured_and_marks_by_the_rule():
    marks_of = shipped_marks()
    with_alpha = {folder.name for folder in (ROOT / "checkpoints").iterdir()
                  if folder.is_dir() and '"none"' not in (folder / "config.json").read_text()}
    assert set(marks_of) == with_alpha
    for name, marks_measured in marks_of.items():
        assert marks_measured["threshold"] == chosen_threshold(marks_measured), name


def test_the_readme_shows_the_measurement_the_page_marks_by():
    assert marks_table(shipped_marks()) in (ROOT / "README.md").read_text(encoding="utf-8")
