import dataclasses
import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from attn_demo.checkpoints.folder import build_model, load_checkpoint, read_folder, save_checkpoint, warm_start, warm_start_text
from attn_demo.measures.marks import write_marks
from attn_demo.models.rnn import Seq2Seq
from attn_demo.translator import load_translator
from conftest import DEVICE, tiny_config, tiny_model

SENTENCES = ["the red cat", "I see the green boat."]


def test_save_then_load_gives_identical_translations(toy_checkpoint, tmp_path):
    first = load_translator(toy_checkpoint, device=DEVICE)
    model, src_tok, tgt_tok = load_checkpoint(toy_checkpoint)
    save_checkpoint(tmp_path / "again", model, src_tok, tgt_tok)
    second = load_translator(tmp_path / "again", device=DEVICE)
    for a, b in zip(first.translate_batch(SENTENCES, beam_size=2), second.translate_batch(SENTENCES, beam_size=2)):
        assert a.target_tokens == b.target_tokens
        for name in ("scores", "attention", "contexts", "queries"):
            x, y = getattr(a, name), getattr(b, name)
            assert (x is None and y is None) if x is None else (x == y).all(), name


def test_coverage_marks_are_read_with_the_weights_and_dropped_when_new_weights_are_saved(toy_checkpoint):
    marks = {"threshold": 0.1, "low": {"0.1": {"precision": 0.7}}}
    write_marks(toy_checkpoint, marks)
    translator = load_translator(toy_checkpoint, device=DEVICE)
    assert translator.marks == marks  # what the page marks by
    save_checkpoint(toy_checkpoint, translator.model, translator.source_tokenizer, translator.target_tokenizer)
    assert read_folder(toy_checkpoint).marks is None  # measured on the weights these replaced


def test_weights_are_stored_as_float16_and_loaded_as_float32(toy_checkpoint):
    stored = load_file(str(toy_checkpoint / "model.safetensors"))
    assert {t.dtype for t in stored.values()} == {torch.float16}
    model, _, _ = load_checkpoint(toy_checkpoint)
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert not model.training


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "source.model", "target.model"])
def test_missing_file_is_named(toy_checkpoint, name):
    (toy_checkpoint / name).unlink()
    with pytest.raises(FileNotFoundError, match=name):
        load_checkpoint(toy_checkpoint)


def test_corrupt_weights_file_is_named(toy_checkpoint):
    (toy_checkpoint / "model.safetensors").write_bytes(b"\x00garbage" * 10)
    with pytest.raises(ValueError, match="model.safetensors"):
        load_checkpoint(toy_checkpoint)


def test_missing_extra_and_misshapen_weights_are_named(toy_checkpoint):
    path = toy_checkpoint / "model.safetensors"
    weights = load_file(str(path))
    name = "decoder.out_bias"
    bias = weights.pop(name)
    save_file({**weights, "decoder.surprise": bias}, str(path))
    with pytest.raises(ValueError, match=r"missing weights \['decoder.out_bias'\], unexpected weights \['decoder.surprise'\]"):
        load_checkpoint(toy_checkpoint)
    save_file({**weights, name: bias[:-1].contiguous()}, str(path))
    with pytest.raises(ValueError, match="decoder.out_bias has shape"):
        load_checkpoint(toy_checkpoint)


def test_config_that_disagrees_with_weights_is_refused(toy_checkpoint):
    config = json.loads((toy_checkpoint / "config.json").read_text())
    config["tgt_vocab_size"] += 1  # a field of every architecture
    (toy_checkpoint / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="has shape"):
        load_checkpoint(toy_checkpoint)


WARM_STARTS = [("bahdanau", "none"), ("luong-general", "luong-dot"), ("luong-general", "luong-lowrank"),
               ("luong-general", "luong-concat"), ("luong-dot", "luong-general")]


@pytest.mark.parametrize("old, new", WARM_STARTS)
def test_warm_start_takes_every_weight_but_the_attention_module(tmp_path, toy_tokenizers, old, new):
    torch.manual_seed(1)
    square = tiny_config("luong-dot")  # H = D, so that the dot score is defined on either side
    save_checkpoint(tmp_path / old, Seq2Seq(dataclasses.replace(square, attention=old)), *toy_tokenizers)
    source = load_checkpoint(tmp_path / old)[0]  # as stored: float16-exact
    model = Seq2Seq(dataclasses.replace(square, attention=new))
    fresh = {name: t.clone() for name, t in model.state_dict().items()}
    warm = warm_start(model, read_folder(tmp_path / old))
    stored, own = source.state_dict(), model.state_dict()
    attention_names = {name for name in own if name.startswith("decoder.attention.")}
    for name in set(own) - attention_names:
        assert torch.equal(own[name], stored[name]), name
    assert warm["replaced_by"] == new and warm["attention"] == old
    assert set(warm["dropped_weights"]) == {name for name in stored if name.startswith("decoder.attention.")}
    if new == "luong-lowrank":  # UᵀV is the best rank-R approximation of W: the truncated SVD
        W = stored["decoder.attention.W.weight"]
        P, sigma, Qt = torch.linalg.svd(W)
        best = P[:, :2] @ torch.diag(sigma[:2]) @ Qt[:2]
        torch.testing.assert_close(own["decoder.attention.U.weight"].T @ own["decoder.attention.V.weight"], best,
                                   rtol=1e-5, atol=1e-6)
        assert warm["new_weights"] == [] and "SVD" in warm_start_text(warm)
    else:  # a fresh attention module, as a new model draws it
        assert warm["new_weights"] == sorted(attention_names)
        for name in attention_names:
            assert torch.equal(own[name], fresh[name]), name
    assert f"attention replaced by {new}" in warm_start_text(warm)


def test_a_coverage_model_warm_started_from_bahdanau_translates_exactly_as_bahdanau(tmp_path, toy_tokenizers):
    """Every weight of the additive score is taken and w_c starts at zero: the same logits at every step."""
    save_checkpoint(tmp_path / "bahdanau", tiny_model("bahdanau"), *toy_tokenizers)
    source = load_checkpoint(tmp_path / "bahdanau")[0]
    model = Seq2Seq(tiny_config("bahdanau-coverage")).eval()
    warm = warm_start(model, read_folder(tmp_path / "bahdanau"))
    assert warm["new_weights"] == ["decoder.attention.w_c.weight"] and warm["dropped_weights"] == []
    assert "w_c starts at zero" in warm_start_text(warm)
    src, lengths = torch.tensor([[5, 6, 7, 3], [8, 9, 3, 0]]), torch.tensor([4, 3])
    y_in = torch.tensor([[2, 10, 11, 12], [2, 13, 14, 15]])
    with torch.no_grad():
        torch.testing.assert_close(model(src, lengths, y_in), source(src, lengths, y_in), rtol=0, atol=0)


def test_warm_start_with_the_same_attention_is_strict(toy_checkpoint, attention):
    model = tiny_model(attention, seed=3)
    warm = warm_start(model, read_folder(toy_checkpoint))
    for name, t in load_checkpoint(toy_checkpoint)[0].state_dict().items():
        assert torch.equal(model.state_dict()[name], t), name
    assert "replaced_by" not in warm and warm_start_text(warm).endswith("every weight")


def test_warm_start_takes_a_transformer_s_weights_into_another_feed_forward_nonlinearity(tmp_path, toy_tokenizers):
    save_checkpoint(tmp_path / "relu", tiny_model("transformer"), *toy_tokenizers)
    model = build_model(dataclasses.replace(tiny_config("transformer"), activation="gelu"))
    warm = warm_start(model, read_folder(tmp_path / "relu"))
    for name, t in load_checkpoint(tmp_path / "relu")[0].state_dict().items():
        assert torch.equal(model.state_dict()[name], t), name
    assert warm["activation"] == ["relu", "gelu"]
    assert warm_start_text(warm).endswith("every weight, its feed-forward φ gelu where it was relu")


def test_warm_start_refuses_a_checkpoint_that_differs_beyond_its_attention(tmp_path, toy_tokenizers):
    save_checkpoint(tmp_path / "bahdanau", tiny_model("bahdanau"), *toy_tokenizers)
    with pytest.raises(ValueError, match="only the attention module may differ"):
        warm_start(Seq2Seq(tiny_config("luong-general")), read_folder(tmp_path / "bahdanau"))  # another decoder
