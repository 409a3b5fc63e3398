"""The timeline a run records: its schedule, its probes (what the app shows), how a continued run
goes on, the agreement of α with the final alignment, the card, and the shipped files."""
import json

import numpy as np
import pytest

from attn_demo.checkpoints.card import main, write_model_card
from attn_demo.checkpoints.folder import load_checkpoint
from attn_demo.measures.timeline import (
    AGREEMENT, ALPHA_UNIT, PIECE_POINTS, PROBES, TIMELINE, argmax_agreement, continued, first_agreement, next_point,
    kept_point, probe, read_timeline, write_timeline)
from attn_demo.translator import Translator
from conftest import DEVICE, ROOT


def test_points_are_dense_at_the_start_then_double():
    assert [next_point(p) for p in (0, 99_999, 100_000, 600_000)] == [100_000, 100_000, 250_000, 1_000_000]
    assert [next_point(p) for p in (1_000_000, 1_500_000, 2_000_000, 9_000_000)] == [2_000_000, 2_000_000, 4_000_000, 16_000_000]
    assert PIECE_POINTS[0] == 0


def test_probe_records_the_greedy_translation_and_alpha_the_app_shows(toy_checkpoint, attention):
    translator = Translator(toy_checkpoint, device=DEVICE)
    model, src_tok, tgt_tok = load_checkpoint(toy_checkpoint)
    recorded = probe(model, src_tok, tgt_tok, "I see the red cat.")
    shown = translator.translate("I see the red cat.")
    assert (recorded["translation"], recorded["french_pieces"], recorded["english_pieces"]) == (
        shown.text, shown.target_tokens, shown.source_tokens)
    if attention == "none":
        assert recorded["alpha"] is None
    else:
        np.testing.assert_allclose(recorded["alpha"], shown.attention, atol=5e-4)  # rounded to 0.001


def point(pieces, bleu, *alphas):
    return {"target_pieces": pieces, "valid_bleu": bleu, "loss": 1.0,
            "probes": [{"source": "s", "translation": "t", "english_pieces": [], "french_pieces": [], "alpha": a} for a in alphas]}


def test_a_continued_run_keeps_the_points_up_to_the_weights_it_continued():
    earlier = {"from_scratch": True, "made_these_weights": True, "points": [point(0, 1.0), point(100, 30.0), point(200, 29.0)]}
    assert continued(earlier) == (earlier["points"][:2], 100)  # the best validation was kept, not the last
    tied = {**earlier, "points": [point(0, 1.0), point(100, 30.0), point(200, 30.0), point(300, 2.0)]}
    assert continued(tied)[1] == 200  # of equal scores, the later weights were kept
    assert continued(None) == ([], 0)
    # a separate run's timeline, attached beside weights it did not make, is not their history: start afresh
    assert continued({**earlier, "made_these_weights": False}) == ([], 0)


def test_agreement_counts_the_final_steps_whose_most_attended_piece_is_the_same():
    final = [[0.9, 0.1], [0.2, 0.8], [0.3, 0.7]]
    assert argmax_agreement([[0.6, 0.4], [0.6, 0.4]], final) == (1, 3)  # a missing step disagrees
    early, middle, late = [[0.5, 0.5]], [[0.9, 0.1], [0.1, 0.9], [0.9, 0.1]], final
    timeline = {"points": [point(0, 0, early, early), point(10, 5, middle, middle), point(20, 9, late, late)]}
    assert first_agreement(timeline) == 10 and AGREEMENT == 0.5
    assert first_agreement({"points": [point(0, 0, None)]}) is None


def test_alpha_is_written_in_whole_thousandths_and_read_back_as_recorded(tmp_path):
    alpha = [[0.021, 0.0, 0.979], [1.0, 0.001, 0.333]]  # as probe rounds it, to ALPHA_DECIMALS
    write_timeline(tmp_path, {"from_scratch": True, "points": [point(0, 1.0, alpha, None)]})
    on_disk = json.loads((tmp_path / TIMELINE).read_text())
    assert on_disk["points"][0]["probes"][0]["alpha"] == [[21, 0, 979], [1000, 1, 333]] and ALPHA_UNIT == 1000
    assert [one["alpha"] for one in read_timeline(tmp_path)["points"][0]["probes"]] == [alpha, None]


def test_a_timeline_with_alpha_in_decimals_is_refused_not_read_a_thousand_times_too_small(tmp_path):
    (tmp_path / TIMELINE).write_text(json.dumps({"points": [point(0, 1.0, [[0.5, 0.5]])]}))
    with pytest.raises(ValueError, match="decimals"):
        read_timeline(tmp_path)
    write_timeline(tmp_path, json.loads((tmp_path / TIMELINE).read_text()))  # the conversion the message names
    assert read_timeline(tmp_path)["points"][0]["probes"][0]["alpha"] == [[0.5, 0.5]]


@pytest.mark.parametrize("made_these_weights", [True, False])
def test_the_card_says_whose_timeline_it_is(toy_checkpoint, made_these_weights):
    alpha = [[1.0, 0.0]]
    timeline = {"from_scratch": True, "made_these_weights": made_these_weights, "command": "python -m attn_demo.training.train …",
                "points": [point(0, 0.0, alpha), point(1000, 10.0, alpha)]}
    write_timeline(toy_checkpoint, timeline)
    assert read_timeline(toy_checkpoint) == timeline
    write_model_card(toy_checkpoint)
    card = (toy_checkpoint / "README.md").read_text()
    assert "2 points" in card and "from 0 to 1,000 target pieces" in card
    assert ("not the run that made these weights" in card) is not made_these_weights


def test_a_separate_runs_timeline_goes_beside_a_checkpoint_marked_as_such(tmp_path, toy_checkpoint):
    timeline = {"from_scratch": True, "made_these_weights": True, "command": "python -m attn_demo.training.train …",
                "points": [point(0, 0.0, [[1.0, 0.0]])]}
    write_timeline(tmp_path / "run", timeline)
    main([str(toy_checkpoint), "--timeline-from", str(tmp_path / "run")])
    assert read_timeline(toy_checkpoint) == {**timeline, "made_these_weights": False}
    assert "not the run that made these weights" in (toy_checkpoint / "README.md").read_text()
    with pytest.raises(FileNotFoundError):
        main([str(toy_checkpoint), "--timeline-from", str(tmp_path / "nothing")])


def test_every_shipped_timeline_is_small_and_ends_at_the_weights_it_goes_with():
    for path in sorted((ROOT / "checkpoints").glob("*/timeline.json")):
        assert path.stat().st_size <= 1_000_000, path  # committed beside the weights, sent to a phone a probe at a time
        timeline = read_timeline(path.parent)
        pieces = [p["target_pieces"] for p in timeline["points"]]
        assert pieces == sorted(set(pieces)) and all(len(p["probes"]) == len(PROBES) for p in timeline["points"])
        # the page shows the last point as the model it uses; a separate run's goes with no weights of its own
        assert kept_point(timeline) == timeline["points"][-1] or not timeline["made_these_weights"], path
