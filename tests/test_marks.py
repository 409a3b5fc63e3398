import json

import numpy as np

from attn_demo import marks
from attn_demo.marks import LOW, chosen_threshold, faults_by_word, marks_table, precision_recall, word_coverage
from conftest import ROOT


class Translated:  # the two fields word_coverage reads
    source_tokens = ["▁The", "▁break", "fast", "▁.", "</s>"]
    coverage = np.array([0.9, 0.05, 0.1, 0.3, 2.0], dtype=np.float32)


def test_a_word_s_coverage_is_its_pieces_and_the_end_of_sentence_piece_is_left_out():
    words, coverage = word_coverage(Translated())
    assert words == ["The", "breakfast", "."]
    np.testing.assert_allclose(coverage, [0.9, 0.15, 0.3], rtol=1e-6)


def test_a_word_the_aligner_links_to_nothing_is_missing_and_one_linked_to_one_word_twice_repeated(monkeypatch):
    # English: swim before breakfast . / French: nager le petit déjeuner avant le petit déjeuner .
    links = [{(0, 0), (2, 2), (2, 3), (2, 6), (2, 7), (3, 8)}]  # "before" is linked to nothing
    monkeypatch.setattr(marks, "aligner_links", lambda english, french, extra: {"eflomal grow-diag-final-and": links})
    missing, repeated = faults_by_word([["swim", "before", "breakfast", "."]],
                                       ["nager le petit déjeuner avant le petit déjeuner ."], [])
    assert missing == [[False, True, False, False]] and repeated == [[False, False, True, False]]


def test_precision_and_recall_count_marks_against_the_truth():
    assert precision_recall([True, True, False, False], [True, False, True, False]) == {
        "marked": 2, "true": 2, "precision": 0.5, "recall": 0.5}


def test_a_threshold_is_chosen_only_where_it_is_right_often_enough_for_every_model():
    good = {"low": {str(low): {"precision": 0.6, "recall": low} for low in LOW}}
    poor = {"low": {str(low): {"precision": 0.4 if low > 0.1 else 0.55, "recall": low} for low in LOW}}
    assert chosen_threshold([good]) == max(LOW)  # right often enough everywhere: the best F1
    assert chosen_threshold([good, poor]) == 0.1 and chosen_threshold([poor, {"low": {str(low): {"precision": 0.4,
                                                                                    "recall": 1} for low in LOW}}]) is None


def test_the_page_marks_no_word_because_no_threshold_was_right_often_enough():
    """docs/coverage-marks.json holds `evaluate --marks --json` of the page's opening pair. The page shows the
    coverage row without marks: re-measured so that a threshold qualifies, this fails, and the marks are due."""
    measured = json.loads((ROOT / "docs" / "coverage-marks.json").read_text())
    assert chosen_threshold(list(measured.values())) is None


def test_the_readme_shows_the_measurement_the_page_marks_by():
    measured = json.loads((ROOT / "docs" / "coverage-marks.json").read_text())
    assert marks_table(measured) in (ROOT / "README.md").read_text(encoding="utf-8")
