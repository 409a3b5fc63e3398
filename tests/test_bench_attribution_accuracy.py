import numpy as np
import pytest

from attn_demo.decoding import attribution
from attn_demo.translator import load_translator
from benchmarks import attribution_accuracy

TEXTS = ("I see the red cat.", "the cat is red.")


def test_each_kind_s_page_scores_are_measured_against_the_even_reference_and_printed(toy_checkpoint, capsys, monkeypatch):
    monkeypatch.setattr(attribution_accuracy, "TEXTS", TEXTS)  # the page's examples: the benchmark's own run
    report = attribution_accuracy.main([str(toy_checkpoint), "--pieces", "4", "--points", "2"])
    printed = capsys.readouterr().out
    row, = report
    assert row["model"] == toy_checkpoint.name and row["steps"] > 0 and row["path_points"] >= attribution.PIECE_POINTS
    assert 0 <= row["median"] <= row["p90"] <= row["largest"]
    assert printed.startswith(f"{toy_checkpoint.name}: {row['steps']} steps, from a reference of 4 × 2 points")


@pytest.mark.parametrize("attention", ["transformer"])
def test_a_coarser_integral_lies_further_from_the_reference(toy_checkpoint, monkeypatch):
    """The measure sees what completeness cannot: one point a step, halved nowhere, against the page's."""
    translator = load_translator(toy_checkpoint)
    fine, _ = attribution_accuracy.distances(translator, TEXTS, 48, 4)
    monkeypatch.setattr(attribution, "FIRST_PIECES", 1)
    monkeypatch.setattr(attribution, "PIECE_POINTS", 1)
    monkeypatch.setattr(attribution, "MAX_GAP", np.inf)
    coarse, points = attribution_accuracy.distances(translator, TEXTS, 48, 4)
    assert points == 1 and coarse.max() > 2 * fine.max()
