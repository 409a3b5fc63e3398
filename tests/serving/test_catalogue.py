import threading

import numpy as np
import pytest

from attn_demo.checkpoints.folder import save_checkpoint
from attn_demo.models.attention import KINDS
from attn_demo.models.config import MODEL_KINDS
from attn_demo.serving.catalogue import load_models, requested_models, summary, training_summary
from attn_demo.views.steps import pca_projection
from conftest import DEVICE, in_hub_cache, tiny_model


@pytest.fixture
def checkpoints(tmp_path, toy_tokenizers):
    """A checkpoints/ folder with one tiny checkpoint of every kind of model, in no particular order."""
    folder = tmp_path / "checkpoints"
    for attention in reversed(MODEL_KINDS):
        save_checkpoint(folder / f"tiny-{attention}", tiny_model(attention), *toy_tokenizers)
    (folder / "notes").mkdir()  # not a checkpoint: no config.json
    return folder


def test_every_checkpoint_folder_is_served_in_the_order_of_the_attention_types(checkpoints):
    models, notices = load_models(checkpoints, device=DEVICE)
    assert [model.key for model in models] == [f"tiny-{attention}" for attention in KINDS] and notices == []
    assert [model.title for model in models] == [kind.title for kind in KINDS.values()]
    assert [model.has_attention for model in models] == [attention != "none" for attention in KINDS]


def test_a_checkpoint_dropped_in_appears_and_two_of_a_kind_are_told_apart(checkpoints, toy_tokenizers):
    save_checkpoint(checkpoints / "another-dot", tiny_model("luong-dot", seed=5), *toy_tokenizers)
    models = {model.key: model for model in load_models(checkpoints, device=DEVICE)[0]}
    assert len(models) == len(MODEL_KINDS) + 1
    assert models["another-dot"].title == "Luong (dot) · another-dot" and models["tiny-luong-dot"].title == "Luong (dot) · tiny-luong-dot"
    assert models["tiny-bahdanau"].title == "Bahdanau (additive)"
    assert models["another-dot"].fingerprint != models["tiny-luong-dot"].fingerprint


def test_hub_ids_load_from_an_offline_cache_and_an_unreachable_one_is_left_out_with_a_notice(checkpoints, offline_hub):
    in_hub_cache(offline_hub, "attn-demo/tiny", checkpoints / "tiny-luong-dot")
    requested = requested_models({"ATTN_DEMO_MODELS": "attn-demo/tiny, someorg/missing"})
    assert requested == ["attn-demo/tiny", "someorg/missing"]
    models, notices = load_models(checkpoints, requested, device=DEVICE)
    keys = [model.key for model in models]
    assert "attn-demo/tiny" in keys and "someorg/missing" not in keys and len(keys) == len(MODEL_KINDS) + 1
    assert len(notices) == 1 and "'someorg/missing'" in notices[0] and "cannot be reached" in notices[0]
    assert "left out" in notices[0]


def test_a_folder_that_does_not_exist_stops_the_start(checkpoints, tmp_path, offline_hub):
    with pytest.raises(FileNotFoundError, match="neither a checkpoint folder"):  # a typo is not a network drop
        load_models(checkpoints, [str(tmp_path / "no" / "such" / "folder")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_models(tmp_path / "empty")


def test_a_missing_checkpoints_folder_means_no_local_checkpoints(checkpoints, tmp_path, offline_hub):
    in_hub_cache(offline_hub, "attn-demo/tiny", checkpoints / "tiny-luong-dot")
    models, notices = load_models(tmp_path / "no-checkpoints", ["attn-demo/tiny"], device=DEVICE)
    assert [model.key for model in models] == ["attn-demo/tiny"] and notices == []
    with pytest.raises(FileNotFoundError, match="no checkpoint"):  # nothing at all to serve still stops the start
        load_models(tmp_path / "no-checkpoints", ["someorg/missing"])


def test_a_view_is_decoded_once_and_shared_read_only(checkpoints, attention, monkeypatch):
    model = next(m for m in load_models(checkpoints, device=DEVICE)[0] if m.translator.config.attention == attention)
    first = model.view("the red cat", 1)
    monkeypatch.setattr(model.batcher, "batch_fn", lambda requests: pytest.fail("a kept view was decoded again"))
    assert model.view("the red cat", 1) is first
    assert first["result"].target_tokens == model.translator.translate("the red cat").target_tokens
    with pytest.raises(ValueError, match="read-only"):
        first["result"].contexts[0, 0] = 1.0
    with pytest.raises(ValueError):
        model.view("", 1)  # refused alone, before it can join a batch


def test_a_class_sending_one_new_sentence_together_waits_for_one_decoding(checkpoints, attention, monkeypatch):
    model = next(m for m in load_models(checkpoints, device=DEVICE)[0] if m.translator.config.attention == attention)
    decoded, original = [], model.batcher.batch_fn
    monkeypatch.setattr(model.batcher, "batch_fn", lambda requests: decoded.extend(requests) or original(requests))
    monkeypatch.setattr(model.batcher, "window_s", 0.3)  # every student asks while the first one's batch waits
    start, views = threading.Barrier(6), []

    def student():
        start.wait()
        views.append(model.view("the red cat", 1))

    students = [threading.Thread(target=student) for _ in range(6)]
    for student in students:
        student.start()
    for student in students:
        student.join(timeout=60)
    assert decoded == [("the red cat", 1)] and len(views) == 6 and all(view is views[0] for view in views)


def test_the_comparison_row_comes_from_the_card_and_the_weights(checkpoints):
    models = {model.key: model for model in load_models(checkpoints, device=DEVICE)[0]}
    bahdanau, none = summary(models["tiny-bahdanau"]), summary(models["tiny-none"])
    attention = models["tiny-bahdanau"].translator.model.decoder.attention
    assert bahdanau["attention_parameters"] == sum(p.numel() for p in attention.parameters()) > 0
    assert none["attention_parameters"] == 0 and none["best_aer"] is None and none["test_bleu"] is None  # not measured
    assert bahdanau["parameters"] == sum(p.numel() for p in models["tiny-bahdanau"].translator.model.parameters())
    models["tiny-bahdanau"].translator.alignment_scores = {"aer": {"argmax": 0.5, "intersect": 0.4,
                                                                   "integrated-gradients intersect": 0.3}}
    assert summary(models["tiny-bahdanau"])["best_aer"] == 0.4  # attention's best, not the attribution's


def test_training_summary_reads_every_run_first_to_last():
    first = {"minutes": 55.0, "steps": 1}
    second = {"minutes": 66.1, "target_tokens": 8_000_502, "continued_from": {"checkpoint": "b", "training": first}}
    third = {"minutes": 25.3, "target_tokens": 8_000_100,
             "continued_from": {"checkpoint": "b", "attention": "bahdanau", "replaced_by": "none", "training": second}}
    assert training_summary(third) == ("55.0 min from scratch → 8.0M pieces, 66.1 min → attention replaced, then "
                                       "8.0M pieces, 25.3 min")
    assert training_summary({}) == "not recorded"


def test_training_summary_says_which_runs_reached_their_plateau():
    first = {"minutes": 60.0, "target_tokens": 4e7}
    ended = {"minutes": 243.8, "target_tokens": 5.16e7, "ended": "plateau", "patience": 4,
             "continued_from": {"checkpoint": "a", "training": first}}
    assert training_summary(ended) == "40.0M pieces, 60.0 min from scratch → 51.6M pieces, 243.8 min, to its plateau"
    assert training_summary({**first, "plateau": {"patience": 4}}) == "40.0M pieces, 60.0 min from scratch, at its plateau"


def test_training_summary_says_where_a_run_took_its_weights_into_another_nonlinearity():
    first = {"minutes": 243.8, "target_tokens": 5.16e7}
    gelu = {"minutes": 41.0, "target_tokens": 5.3e6, "ended": "plateau",
            "continued_from": {"checkpoint": "a", "attention": "transformer", "activation": ["relu", "gelu"], "training": first}}
    assert training_summary(gelu) == "51.6M pieces, 243.8 min from scratch → 5.3M pieces, 41.0 min, GELU, to its plateau"


def test_training_summary_names_the_gpu_part_of_a_run_that_moved():
    parts = [{"device": "CPU", "threads": 1, "minutes": 250.1}, {"device": "NVIDIA H100", "threads": 2, "minutes": 6.2}]
    moved = {"minutes": 256.3, "target_tokens": 40_000_000, "device": "NVIDIA H100", "parts": parts}
    assert training_summary(moved) == "40.0M pieces, 256.3 min (6.2 min on NVIDIA H100) from scratch"


def test_training_summary_says_where_dropout_changed():
    first = {"minutes": 160.2, "target_tokens": 34_282_971, "dropout": 0.2}
    second = {"minutes": 25.8, "target_tokens": 8_000_502, "dropout": 0.2, "continued_from": {"checkpoint": "a", "training": first}}
    third = {"minutes": 25.4, "target_tokens": 8_000_502, "dropout": 0.0, "continued_from": {"checkpoint": "b", "training": second}}
    assert training_summary(third) == ("34.3M pieces, 160.2 min from scratch → 8.0M pieces, 25.8 min → "
                                       "8.0M pieces, 25.4 min, dropout 0")
    unrecorded = {**third, "continued_from": {"checkpoint": "b", "training": {"minutes": 25.8}}}
    assert training_summary(unrecorded) == "25.8 min from scratch → 8.0M pieces, 25.4 min"  # nothing to compare with


def test_training_summary_names_a_gpu_and_leaves_the_cpu_unsaid():
    first = {"minutes": 134.2, "target_tokens": 40_002_731, "device": "CPU"}
    second = {"minutes": 0.8, "target_tokens": 6_000_889, "device": "NVIDIA H200",
              "continued_from": {"checkpoint": "a", "attention": "luong-general", "replaced_by": "luong-dot", "training": first}}
    third = {"minutes": 20.5, "target_tokens": 6_000_889, "continued_from": {"checkpoint": "b", "training": second}}  # before devices were recorded
    assert training_summary(third) == ("40.0M pieces, 134.2 min from scratch → attention replaced, then 6.0M pieces, "
                                       "0.8 min on NVIDIA H200 → 6.0M pieces, 20.5 min")


def test_training_summary_says_where_clause_joins_began():
    first = {"minutes": 55.0, "join_prob": 0.0}
    second = {"minutes": 51.7, "target_tokens": 6_001_231, "clause_join_prob": 0.1, "continued_from": {"training": first}}
    third = {"minutes": 20.0, "target_tokens": 2_000_000, "clause_join_prob": 0.1, "continued_from": {"training": second}}
    assert training_summary(third) == "55.0 min from scratch → 6.0M pieces, 51.7 min, clause joins → 2.0M pieces, 20.0 min"


def test_a_view_computes_its_projection_only_when_read_and_once(models):
    view = models[0]._view("the red cat", 1)
    assert "projection" not in view  # a /translate reply draws no step view: it never pays for the PCA
    mean, basis = view["projection"]
    expected_mean, expected_basis = pca_projection(view["result"].encoder_states)
    np.testing.assert_allclose(mean, expected_mean)
    np.testing.assert_allclose(basis, expected_basis)
    assert view["projection"][0] is mean  # kept: a second read computes nothing
    with pytest.raises(KeyError):
        view["anything else"]
