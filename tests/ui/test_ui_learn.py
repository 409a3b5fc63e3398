"""Watch it learn: each side's recorded timeline of the chosen sentence, merged on one slider, and
what the page says of a model without one, of a separate run, of a model without attention, and of which of a
Transformer's grids its timeline holds."""
import dataclasses

import pytest

from attn_demo.checkpoints.folder import load_checkpoint, save_checkpoint
from attn_demo.measures.timeline import PROBES, point, read_timeline, write_timeline
from attn_demo.models.config import read_config
from attn_demo.serving.catalogue import load_models
from attn_demo.ui.learn import LearnSection
from conftest import DEVICE, tiny_model


def record(folder, pieces, made_these_weights=True):
    model, src_tok, tgt_tok = load_checkpoint(folder)
    write_timeline(folder, {"from_scratch": True, "made_these_weights": made_these_weights, "command": "train …",
                            "points": [point(model, src_tok, tgt_tok, p, valid_bleu=p / 1000, loss=5 - p / 1000) for p in pieces]})


@pytest.fixture(scope="module")
def section(tmp_path_factory, toy_tokenizers):
    folder = tmp_path_factory.mktemp("checkpoints")
    for name, attention in (("a-bahdanau", "bahdanau"), ("b-luong", "luong-general"), ("c-none", "none"), ("d-old", "luong-dot")):
        save_checkpoint(folder / name, tiny_model(attention), *toy_tokenizers)
    record(folder / "a-bahdanau", [0, 1000, 3000])
    record(folder / "b-luong", [0, 2000, 3000], made_these_weights=False)
    record(folder / "c-none", [0, 500])
    return LearnSection(load_models(folder, device=DEVICE)[0], ("a-bahdanau", "b-luong"))


def test_both_sides_come_with_every_recorded_point_and_one_slider_over_both_runs(section):
    payload, slider = section.payload("a-bahdanau", "b-luong", PROBES[1])
    left, right = payload["sides"]
    assert payload["positions"] == [0, 1000, 2000, 3000] and (slider.maximum, slider.value) == (4, 4)
    assert [p["target_pieces"] for p in left["points"]] == [0, 1000, 3000]
    assert all(p["source"] == PROBES[1] for p in left["points"] + right["points"])
    assert left["points"][1]["valid_bleu"] == 1.0 and left["points"][1]["alpha"] is not None
    assert left["message"] is None and "separate run" in right["message"]


def test_a_model_without_a_timeline_or_without_attention_says_so(section):
    payload, slider = section.payload("d-old", "c-none", PROBES[0])
    old, baseline = payload["sides"]
    assert old["points"] == [] and "no training timeline" in old["message"]
    assert "no α" in baseline["message"] and all(p["alpha"] is None for p in baseline["points"])
    assert payload["positions"] == [0, 500] and slider.maximum == 2


def test_no_model_has_a_timeline_yet(section):
    payload, slider = section.payload("d-old", "d-old", PROBES[0])
    assert payload["positions"] == [0] and slider.maximum == 2  # a slider of one point still draws


def test_a_transformer_says_which_grid_its_timeline_holds_and_the_pages_grid_chosen_since(tmp_path, toy_tokenizers):
    folder = tmp_path / "e-transformer"
    save_checkpoint(folder, tiny_model("transformer"), *toy_tokenizers)
    record(folder, [0, 1000])  # as it trained: the config's default grid, the penultimate layer's mean
    config = read_config(folder / "config.json")
    assert config.dec_layers == 2 and [p["grid"] for p in read_timeline(folder)["points"]] == ["1.mean", "1.mean"]
    learn = LearnSection(load_models(tmp_path, device=DEVICE)[0], ("e-transformer", "e-transformer"))
    note = learn.payload("e-transformer", "e-transformer", PROBES[0])[0]["sides"][0]["message"]
    assert note == "α of layer 1, mean of heads, the grid it showed as it trained."
    dataclasses.replace(config, shown_layer=1, shown_head=0).to_json(folder / "config.json")  # the alignment check's pick
    learn = LearnSection(load_models(tmp_path, device=DEVICE)[0], ("e-transformer", "e-transformer"))
    note = learn.payload("e-transformer", "e-transformer", PROBES[0])[0]["sides"][0]["message"]
    assert note.endswith("The rest of the page shows layer 2, head 1, chosen after training by its alignment error rate.")
