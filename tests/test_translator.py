import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from attn_demo import CheckpointUnavailable, load_translator
from attn_demo.checkpoints.folder import save_checkpoint
from attn_demo.decoding.search import Steer, forced_search
from attn_demo.models.config import MODEL_KINDS
from attn_demo.models.tokenizer import MAX_INPUT_CHARS
from attn_demo.translator import device_name
from conftest import DEVICE, ROOT, in_hub_cache, tiny_model


@pytest.fixture
def translator(toy_checkpoint):
    return load_translator(toy_checkpoint, device=DEVICE)


def test_device_name_is_the_card_on_a_gpu_else_the_device_type(monkeypatch):
    assert device_name(torch.device("cpu")) == "CPU" and device_name(torch.device("mps")) == "MPS"
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H200")
    assert device_name(torch.device("cuda")) == "NVIDIA H200"


@pytest.mark.parametrize("beam_size", [1, 3])
def test_translation_arrays_are_consistent(translator, beam_size):
    result = translator.translate("I see the red cat.", beam_size=beam_size)
    S, T = len(result.source_tokens), len(result.target_tokens)
    assert result.source_tokens[-1] == result.target_tokens[-1] == "</s>"
    assert result.encoder_states.shape == (S, translator.config.annotation_size)
    assert result.contexts.shape == (T, translator.config.annotation_size)
    assert result.attention_type == translator.config.attention
    if translator.config.attention == "none":  # no α to show: only the one c = [→h_S; ←h_1], at every step
        assert result.scores is result.attention is result.queries is result.query_symbol is None
        half = translator.config.enc_hidden_size
        c = np.concatenate([result.encoder_states[-1, :half], result.encoder_states[0, half:]])
        np.testing.assert_array_equal(result.contexts, np.tile(c, (T, 1)))
        assert not {"attention", "scores", "queries", "query_symbol", "coverage"} & set(result.to_dict())  # no α in the JSON
        return
    np.testing.assert_array_equal(result.coverage, result.attention.sum(0))  # C_j: the column sums of α, exactly
    assert result.coverage.shape == (S,) and "coverage" in result.to_dict()  # the trace file carries it
    if translator.config.attention == "transformer":
        assert result.scores is result.queries is None  # no single e or query: a head's are in result.heads
        assert_heads_form_the_translation(result, translator.config)
        return
    assert result.heads is None
    assert result.scores.shape == result.attention.shape == (T, S)
    assert result.queries.shape == (T, translator.config.dec_hidden_size)
    np.testing.assert_allclose(result.attention.sum(1), 1.0, atol=1e-5)
    np.testing.assert_allclose(result.contexts, result.attention @ result.encoder_states, atol=1e-5)
    # α is exactly the softmax of the scores shown beside it
    expected = np.exp(result.scores - result.scores.max(1, keepdims=True))
    np.testing.assert_allclose(result.attention, expected / expected.sum(1, keepdims=True), atol=1e-5)
    assert all(arr.dtype == np.float32 for arr in (result.scores, result.attention, result.contexts, result.queries))


def assert_heads_form_the_translation(result, config, forced_steps=()):
    """Every number of a Transformer's trace re-computed from the others to float tolerance: e_tj = q_t·k_j/√d_k,
    α = softmax(e), o_t = Σ_j α_tj v_j, W_O [o^1; …; o^H] + b_O; the grid shown and its contexts from the heads of
    the config's layer; both self-attentions rows of weights, the decoder's triangular. At forced_steps (from 1)
    the shown layer's α was set by hand, not softmax(e)."""
    heads, S, T = result.heads, len(result.source_tokens), len(result.target_tokens)
    L, H, d_k = config.dec_layers, config.heads, config.head_size
    assert heads.cross.shape == heads.cross_scores.shape == (L, H, T, S)
    assert heads.queries.shape == heads.outputs.shape == (L, H, T, d_k) and heads.keys.shape == heads.values.shape == (L, H, S, d_k)
    assert heads.encoder.shape == (config.enc_layers, H, S, S) and heads.decoder.shape == (L, H, T, T)
    np.testing.assert_allclose(heads.cross_scores, heads.queries @ heads.keys.swapaxes(-1, -2) / np.sqrt(d_k), atol=1e-5)
    layer, head = heads.shown
    expected = np.exp(heads.cross_scores - heads.cross_scores.max(-1, keepdims=True))
    expected = expected / expected.sum(-1, keepdims=True)
    for t in forced_steps:
        expected[layer, :, t - 1] = heads.cross[layer, :, t - 1]
    np.testing.assert_allclose(heads.cross, expected, atol=1e-5)
    outputs = heads.cross @ heads.values
    for layer_off, head_off in heads.off:  # a head turned off gives nothing to W_O
        outputs[layer_off, head_off] = 0.0
    np.testing.assert_allclose(heads.outputs, outputs, atol=1e-5)
    np.testing.assert_allclose(heads.attended, heads.concatenated @ heads.W_O.swapaxes(1, 2) + heads.b_O[:, None], atol=1e-5)
    assert (layer, head) == (config.layer_shown, config.shown_head)
    grid = heads.cross[layer].mean(0) if head is None else heads.cross[layer, head]
    np.testing.assert_allclose(result.attention, grid, atol=1e-5)  # the search's α, step by step, and the trace's at once
    np.testing.assert_allclose(result.contexts, heads.attended[layer], atol=1e-5)
    for weights in (heads.cross, heads.encoder, heads.decoder):
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    assert not np.triu(heads.decoder, k=1).any()  # step t reads steps ≤ t only
    assert "heads" in result.to_dict() and set(result.to_dict()["heads"]) >= {"cross", "encoder", "decoder", "queries"}


def test_batch_equals_one_at_a_time(translator):
    texts = ["the red cat", "I see the white truck.", "the ball"]
    batched = translator.translate_batch(texts)
    atol = 1e-5 if DEVICE == "cpu" else 1e-4  # CUDA picks other kernels for another batch size: 2e-5 apart on an H200
    for text, b in zip(texts, batched):
        single = translator.translate(text)
        assert single.target_tokens == b.target_tokens
        np.testing.assert_allclose(single.contexts, b.contexts, atol=atol)
        if translator.config.attention != "none":
            np.testing.assert_allclose(single.attention, b.attention, atol=atol)


def test_every_hypothesis_of_a_batch_of_n_best_lists_has_its_own_sentences_heads(translator):
    """Rows of hypotheses, not of sentences: each hypothesis's heads are those its sentence has alone, the encoder's
    self-attention and the keys of its own sentence cut to its own pieces; a model without heads has none."""
    texts = ["I see the white truck.", "the ball"]
    atol = 1e-5 if DEVICE == "cpu" else 1e-4
    for text, hypotheses in zip(texts, translator.translate_batch(texts, beam_size=3, n_best=2)):
        for alone, batched in zip(translator.translate_batch([text], beam_size=3, n_best=2)[0], hypotheses):
            assert alone.target_tokens == batched.target_tokens
            if translator.config.attention != "transformer":
                assert batched.heads is None
                continue
            for name in ("encoder", "keys", "cross", "decoder"):
                np.testing.assert_allclose(getattr(alone.heads, name), getattr(batched.heads, name), atol=atol, err_msg=name)


def test_key_projection_is_computed_once_per_sentence(translator, monkeypatch):
    if translator.config.attention == "transformer":  # every layer's cross-attention keys, and the encoder: once for
        # the search and the trace of every layer and head together
        model, calls = translator.model, []
        for layer in [layer.cross_attention for layer in model.decoder.layers]:
            monkeypatch.setattr(layer, "project", lambda x, which, original=layer.project: calls.append(which) or original(x, which))
        monkeypatch.setattr(model.decoder, "cross_keys", lambda h, original=model.decoder.cross_keys: calls.append("cross keys") or original(h))
        monkeypatch.setattr(model.encoder, "run", lambda *a, original=model.encoder.run, **k: calls.append("encoder") or original(*a, **k))
        result = translator.translate("I see the red cat.", beam_size=3)
        assert len(result.target_tokens) > 2 and result.heads is not None
        assert calls.count("encoder") == 1 and calls.count("cross keys") == 1 and "KV" not in calls
        return
    attention = translator.model.decoder.attention
    if attention is None:
        pytest.skip("no attention, no keys: the fixed c is computed once by construction (Memory.context)")
    calls = []
    original = attention.project_keys
    monkeypatch.setattr(attention, "project_keys", lambda h: calls.append(h.shape) or original(h))
    result = translator.translate("I see the red cat.", beam_size=3)
    assert len(result.target_tokens) > 1 and len(calls) == 1


def test_max_len_caps_the_output(translator):
    assert len(translator.translate("I see the red cat.", max_len=2).target_tokens) <= 2
    with pytest.raises(ValueError, match="max_len"):
        translator.translate("the red cat", max_len=0)
    assert translator.translate_batch([]) == []


@pytest.mark.parametrize("text, message", [
    ("", "empty"), ("   \n\t ", "empty"), (None, "Please type"),
    ("a" * (MAX_INPUT_CHARS + 1), f"limit is {MAX_INPUT_CHARS}"),
    ("the red cat \x00", "U+0000"), ("the red\u200b cat", "U+200B"),
    ("😀 😀 😀", "never seen"), ("红色的猫", "never seen"), ("القط الأحمر", "never seen"),
])
def test_bad_input_raises_a_readable_error(translator, text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        translator.translate(text)


def test_an_unknown_character_is_read_as_the_unknown_piece(translator):
    result = translator.translate("the red cat 😀")
    assert result.unknown_characters == ["😀"] and "<unk>" in result.source_tokens
    assert translator.translate("the red cat").unknown_characters == []


def test_the_piece_limit_is_exact_and_stated(toy_checkpoint):
    config = json.loads((toy_checkpoint / "config.json").read_text())
    limit = config["max_source_pieces"] = 20
    (toy_checkpoint / "config.json").write_text(json.dumps(config))
    translator = load_translator(toy_checkpoint, device=DEVICE)
    longest = " ".join(["cat"] * (limit - 1))  # "▁cat" is one piece of the toy tokenizer; plus EOS
    assert len(translator.translate(longest, max_len=2).source_tokens) == limit
    with pytest.raises(ValueError, match=f"{limit + 1} pieces long; the model takes at most {limit}"):
        translator.translate(longest + " cat")


def test_beam_size_out_of_range_is_refused(translator):
    with pytest.raises(ValueError, match="beam size"):
        translator.translate("the red cat", beam_size=0)


def test_unknown_folder_or_repo_id_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="neither a checkpoint folder"):
        load_translator(str(tmp_path / "nowhere" / "deeper" / "still"))


def test_loads_every_kind_by_repo_id_from_an_offline_hub_cache(toy_tokenizers, tmp_path):
    """A Hub-layout cache (models--org--name/snapshots/<commit>/…, refs/main) with HF_HUB_OFFLINE=1 set as a user
    sets it, before the library is imported: one interpreter loads a repo id of every kind and translates with it."""
    snapshots = []
    for kind in MODEL_KINDS:
        save_checkpoint(tmp_path / kind, tiny_model(kind), *toy_tokenizers)
        snapshots.append(in_hub_cache(tmp_path / "hub", f"attn-demo/tiny-{kind}", tmp_path / kind))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub"), "PYTHONPATH": str(ROOT)}
    code = ("import sys\nfrom attn_demo import load_translator\nfor repo in sys.argv[1:]:\n"
            "    t = load_translator(repo, device='cpu')\n    print(t.folder, len(t.translate('the red cat').target_tokens) > 0)")
    out = subprocess.run([sys.executable, "-c", code, *(f"attn-demo/tiny-{kind}" for kind in MODEL_KINDS)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"{snapshot} True" for snapshot in snapshots]


SHIPPED = sorted(path.name for path in (ROOT / "checkpoints").iterdir() if (path / "config.json").exists())


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_checkpoint_loads_as_a_hub_id_offline_and_translates_as_its_folder(name, offline_hub):
    in_hub_cache(offline_hub, f"attn-demo/{name}", ROOT / "checkpoints" / name, link=True)
    from_hub = load_translator(f"attn-demo/{name}", device=DEVICE).translate(SENTENCE, beam_size=2)
    from_folder = load_translator(ROOT / "checkpoints" / name, device=DEVICE).translate(SENTENCE, beam_size=2)
    same_translation(from_hub, from_folder)
    assert from_hub.text and (from_hub.attention is None) == (name.startswith("no-attention"))


def test_an_unreachable_hub_checkpoint_is_named_with_the_reason(offline_hub):
    with pytest.raises(CheckpointUnavailable) as caught:
        load_translator("someorg/missing")
    message = str(caught.value)
    assert "'someorg/missing'" in message and "cannot be reached" in message and "\n" not in message


def test_force_decode_traces_the_given_french(translator):
    english, french = "I see the red cat.", "je vois le chat rouge."
    result = translator.force_decode(english, french)
    ids = translator.target_tokenizer.encode(french) + [translator.config.eos_id]
    assert result.target_tokens == translator.target_tokenizer.pieces(ids) and result.text == french
    assert result.source_tokens == translator.translate(english).source_tokens
    if result.attention is None:  # the baseline reads one fixed c at every step
        np.testing.assert_array_equal(result.contexts, np.broadcast_to(result.contexts[0], result.contexts.shape))
    elif result.heads is not None:
        assert_heads_form_the_translation(result, translator.config)
    else:
        np.testing.assert_allclose(result.attention.sum(1), 1.0, atol=1e-6)
        np.testing.assert_allclose(result.contexts, result.attention @ result.encoder_states, atol=1e-6)
    model, src = translator.model, torch.tensor([translator.encode(english)], device=DEVICE)
    y = torch.tensor([ids], device=DEVICE)
    y_in = torch.cat([torch.tensor([[translator.config.bos_id]], device=DEVICE), y[:, :-1]], 1)
    with torch.inference_mode():
        log_probs = model(src, torch.tensor([src.size(1)], device=DEVICE), y_in).log_softmax(-1)
    assert result.log_prob == pytest.approx(float(log_probs.gather(2, y[..., None]).sum()), abs=1e-5)


@pytest.mark.parametrize("french, message", [("", "French sentence: the input is empty"), (None, "Please type a French"),
                                             ("le chat 😀", "never seen")])
def test_force_decode_refuses_bad_french(translator, french, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        translator.force_decode("the red cat", french)


@pytest.mark.parametrize("name", ["bahdanau-en-fr", "luong-en-fr"])
def test_force_decode_of_its_own_translation_is_translate(name):
    """On the shipped models, where the output re-encodes to the pieces the model emitted."""
    translator = load_translator(ROOT / "checkpoints" / name, device=DEVICE)
    for english in ["The red car is in front of the house.", "I don't like coffee.", "Where did you put the keys?"]:
        own = translator.translate(english)
        assert translator.encode_target(own.text) == translator.target_tokenizer.sp.piece_to_id(own.target_tokens)
        forced = translator.force_decode(english, own.text)
        assert forced.target_tokens == own.target_tokens and forced.log_prob == pytest.approx(own.log_prob, abs=1e-6)
        for field in ("attention", "scores", "contexts", "queries", "encoder_states"):
            np.testing.assert_allclose(getattr(forced, field), getattr(own, field), atol=1e-6, err_msg=field)


def same_translation(a, b, exact: bool = True):
    """Two Translations hold the same numbers: bit for bit, or (exact=False) to float32 rounding, for
    beam searches whose rows sit at other places of the batch, which may change the order of sums."""
    assert a.target_tokens == b.target_tokens and a.text == b.text
    assert a.log_prob == b.log_prob if exact else abs(a.log_prob - b.log_prob) < 1e-4
    for name in ("scores", "attention", "contexts", "queries"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_allclose(x, y, rtol=0 if exact else 1e-5, atol=0 if exact else 1e-6, err_msg=name)


def ids_of(translator, result) -> list[int]:
    return [translator.target_tokenizer.sp.piece_to_id(piece) for piece in result.target_tokens]


def teacher_forced(translator, text, ids):
    """The model reading the given target ids (teacher forcing), as forced_search computes it."""
    memory = translator.encode_batch([translator.encode(text)])
    return forced_search(translator.model, memory, [ids])[0]


SENTENCE = "I see the red cat."


def test_the_n_best_list_starts_with_the_beam_result_and_every_hypothesis_is_the_models(translator):
    n_best = translator.translate(SENTENCE, beam_size=4, n_best=3)
    assert len(n_best) == 3
    same_translation(n_best[0], translator.translate(SENTENCE, beam_size=4))
    ranked = [h.log_prob / len(h.target_tokens) for h in n_best]  # length-normalised, as the beam ranks them
    assert ranked == sorted(ranked, reverse=True)
    for hypothesis in n_best:  # its log-probability and trace are those of the model reading it
        forced = teacher_forced(translator, SENTENCE, ids_of(translator, hypothesis))
        assert abs(forced.log_prob - hypothesis.log_prob) < 1e-4
        np.testing.assert_allclose(forced.trace["context"], hypothesis.contexts, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="n_best"):
        translator.translate(SENTENCE, beam_size=2, n_best=3)


def test_a_beam_laid_open_gives_the_n_best_and_names_the_piece_of_every_candidate(translator):
    beam = translator.beam(SENTENCE, 4, 3)
    for laid_open, listed in zip(beam.translations, translator.translate(SENTENCE, beam_size=4, n_best=3), strict=True):
        same_translation(laid_open, listed, exact=True)
    assert beam.pieces == translator.target_tokenizer.pieces([c.token for c in beam.weighed])
    assert {c.fate for c in beam.weighed} >= {"kept", "ended"}
    with pytest.raises(ValueError, match="at least 2"):
        translator.beam(SENTENCE, 1, 1)


def test_a_prefix_equal_to_the_models_own_output_gives_back_its_translation(translator):
    """Greedy: exactly. Given as pieces (a tiny random model's output rarely spells words; shipped
    models are given text, below). Beam search makes no such promise: from a fixed prefix it may
    finish hypotheses that the full search stopped before reaching."""
    own = translator.translate(SENTENCE)
    ids = ids_of(translator, own)
    for cut in (1, len(ids) // 2, len(ids) - 1):
        same_translation(translator.translate_batch([SENTENCE], steer=Steer(prefix=tuple(ids[:cut])))[0], own)


def test_a_beam_from_a_prefix_keeps_it_and_scores_with_the_models_numbers(translator):
    own = translator.translate(SENTENCE, beam_size=3)
    prefix = tuple(ids_of(translator, own)[:2])
    for hypothesis in translator.translate_batch([SENTENCE], 3, n_best=3, steer=Steer(prefix=prefix))[0]:
        ids = ids_of(translator, hypothesis)
        assert tuple(ids[:len(prefix)]) == prefix
        assert abs(teacher_forced(translator, SENTENCE, ids).log_prob - hypothesis.log_prob) < 1e-4


def test_a_prefix_is_kept_and_the_model_goes_on_from_it(translator):
    result = translator.translate(SENTENCE, prefix="le chien")
    prefix_ids = translator.encode_target("le chien")[:-1]
    assert ids_of(translator, result)[:len(prefix_ids)] == prefix_ids and result.target_tokens[-1] == "</s>"
    forced = teacher_forced(translator, SENTENCE, ids_of(translator, result))
    assert abs(forced.log_prob - result.log_prob) < 1e-4  # the prefix's pieces cost what the model says


def test_a_one_hot_alpha_gives_c_t_equal_to_h_j_and_the_model_goes_on_from_it(translator):
    own = translator.translate(SENTENCE)
    if translator.config.attention == "none":
        with pytest.raises(ValueError, match="no attention"):
            translator.translate(SENTENCE, force_attention={1: np.eye(len(own.source_tokens))[0]})
        return
    t, j = 2, 1
    one_hot = np.zeros(len(own.source_tokens), dtype=np.float32)
    one_hot[j] = 1.0
    moved = translator.translate(SENTENCE, force_attention={t: one_hot})
    np.testing.assert_array_equal(moved.attention[t - 1], one_hot)
    if moved.heads is not None:  # every head of the shown layer looks at h_j alone: its output is its v_j
        layer, heads = moved.heads.shown[0], moved.heads
        np.testing.assert_array_equal(heads.cross[layer, :, t - 1], np.tile(one_hot, (translator.config.heads, 1)))
        np.testing.assert_allclose(heads.outputs[layer, :, t - 1], heads.values[layer, :, j], atol=1e-6)
        assert_heads_form_the_translation(moved, translator.config, forced_steps=(t,))
    else:
        np.testing.assert_array_equal(moved.contexts[t - 1], moved.encoder_states[j])  # c_t = h_j, exactly
    assert moved.target_tokens[:t - 1] == own.target_tokens[:t - 1]  # the steps before t are untouched
    np.testing.assert_array_equal(moved.contexts[:t - 1], own.contexts[:t - 1])
    # the piece at step t is the one the model computes from that c_t: teacher-force the same pieces
    # with the same α at step t, and step t's most probable piece is the one the search emitted
    memory = translator.encode_batch([translator.encode(SENTENCE)])
    step_state, coverage, y = memory.init_state, None, torch.tensor([translator.config.bos_id], device=DEVICE)
    ids = ids_of(translator, moved)
    with torch.inference_mode():
        for step_t in range(t):
            weights = torch.tensor(one_hot, device=DEVICE)[None] if step_t == t - 1 else None
            step = translator.model.decoder.step(y, step_state, memory, weights, coverage)
            y, step_state, coverage = torch.tensor([ids[step_t]], device=DEVICE), step.state, step.coverage
    assert int(step.logits.argmax(-1)) == ids[t - 1]
    with pytest.raises(ValueError, match="summing to 1"):
        translator.translate(SENTENCE, force_attention={t: one_hot * 2})


@pytest.mark.parametrize("name", ["bahdanau-en-fr", "luong-en-fr", "no-attention-en-fr"])
def test_a_shipped_model_given_the_start_of_its_own_translation_says_the_same(name):
    translator = load_translator(ROOT / "checkpoints" / name, device=DEVICE)
    sentence = "The old man who lives next door rides his bicycle to work every morning."
    own = translator.translate(sentence)
    words = own.text.split()
    same_translation(translator.translate(sentence, prefix=" ".join(words[:len(words) // 2])), own)


def test_the_choices_at_a_step_are_the_models_distribution_and_a_prefix_may_be_pieces(translator):
    own = translator.translate(SENTENCE)
    t = min(2, len(own.target_tokens))
    choices = translator.choices(SENTENCE, own.target_tokens, t, k=4)
    assert choices[0][0] == own.target_tokens[t - 1]  # greedy took the most probable piece
    assert [p for _, p in choices] == sorted((p for _, p in choices), reverse=True) and sum(p for _, p in choices) <= 1 + 1e-6
    if t > 1:  # p(y_t | y_<t) as teacher forcing has it: log p(y_≤t) − log p(y_<t)
        ids = ids_of(translator, own)
        step = teacher_forced(translator, SENTENCE, ids[:t]).log_prob - teacher_forced(translator, SENTENCE, ids[:t - 1]).log_prob
        assert abs(np.log(choices[0][1]) - step) < 1e-4
    other = choices[1][0]
    edited = translator.translate(SENTENCE, prefix=[*own.target_tokens[:t - 1], other])
    assert edited.target_tokens[t - 1] == other and edited.target_tokens[:t - 1] == own.target_tokens[:t - 1]
    with pytest.raises(ValueError, match="Not a French piece"):
        translator.translate(SENTENCE, prefix=["▁nonsense-piece"])


def test_a_head_turned_off_gives_nothing_and_with_every_head_off_the_source_is_not_read(translator):
    if translator.config.attention != "transformer":
        with pytest.raises(ValueError, match="Only a Transformer has heads"):
            translator.translate(SENTENCE, heads_off=[(0, 0)])
        return
    cfg = translator.config
    own, off = translator.translate(SENTENCE), translator.translate(SENTENCE, beam_size=3, heads_off=[(1, 2)])
    assert off.heads.off == ((1, 2),) and not off.heads.outputs[1, 2].any()
    assert_heads_form_the_translation(off, cfg)
    assert own.heads.off == () and own.heads.outputs[1, 2].any()
    every = [(layer, head) for layer in range(cfg.dec_layers) for head in range(cfg.heads)]
    blind = [translator.translate(text, heads_off=every, max_len=12) for text in ("the red cat", "I see the white truck.")]
    assert blind[0].target_tokens == blind[1].target_tokens and blind[0].log_prob == pytest.approx(blind[1].log_prob, abs=1e-5)
    with pytest.raises(ValueError, match="no head 4 of layer 1: this Transformer has 2 decoder layers of 3 heads"):
        translator.translate(SENTENCE, heads_off=[(0, 3)])


@pytest.mark.parametrize("beam_size", [1, 3])
def test_a_batch_without_heads_is_the_same_translation_without_the_second_pass(translator, monkeypatch, beam_size):
    """A score of the translations alone (evaluate's BLEU) asks for no heads: the same pieces, α and log p, and no pass
    of every layer (Translator._heads) for a Transformer."""
    texts = [SENTENCE, "the red cat"]
    full = translator.translate_batch(texts, beam_size)
    monkeypatch.setattr(translator, "_heads", lambda *args: pytest.fail("heads computed though not asked for"))
    bare = translator.translate_batch(texts, beam_size, heads=False)
    for a, b in zip(full, bare):
        assert a.target_tokens == b.target_tokens and a.log_prob == b.log_prob and b.heads is None
        np.testing.assert_array_equal(a.attention, b.attention)
