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
    assert 0 <= row["median"] <= row["p90"] <= row["largest"] and row["seconds"] > 0 and row["rule"] == "the page's"
    assert printed.startswith(f"{toy_checkpoint.name}: {row['steps']} steps, from a reference of 4 × 2 points")


@pytest.mark.parametrize("attention", ["transformer"])
def test_tolerance_measures_the_error_controlled_integrator_instead(toy_checkpoint, capsys, monkeypatch):
    monkeypatch.setattr(attribution_accuracy, "TEXTS", TEXTS)
    page, = attribution_accuracy.main([str(toy_checkpoint), "--pieces", "4", "--points", "2"])
    controlled, = attribution_accuracy.main([str(toy_checkpoint), "--pieces", "4", "--points", "2", "--tolerance", "0.001"])
    assert controlled["rule"] == "error_controlled(0.001)'s" and controlled["steps"] == page["steps"]
    assert controlled["path_points"] > page["path_points"]  # a tiny model's ReLUs: more to halve than completeness sees
    assert "error_controlled(0.001)'s took up to" in capsys.readouterr().out


@pytest.mark.parametrize("attention", ["transformer"])
def test_a_coarser_integral_lies_further_from_the_reference(toy_checkpoint, monkeypatch):
    """The measure sees what completeness cannot: one point a step, halved nowhere, against the page's."""
    translator = load_translator(toy_checkpoint)
    fine, _, _ = attribution_accuracy.distances(translator, TEXTS, 48, 4)
    monkeypatch.setattr(attribution, "FIRST_PIECES", 1)
    monkeypatch.setattr(attribution, "PIECE_POINTS", 1)
    monkeypatch.setattr(attribution, "MAX_GAP", np.inf)
    coarse, points, _ = attribution_accuracy.distances(translator, TEXTS, 48, 4)
    assert points == 1 and coarse.max() > 2 * fine.max()
