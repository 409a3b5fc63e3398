import dataclasses
import json

import numpy as np
import pytest

from attn_demo.checkpoints.folder import build_model, save_checkpoint
from attn_demo.decoding.grids import PICK_KEY, pick_key
from attn_demo.models.attention import KINDS
from attn_demo.models.config import ATTENTION_TYPES
from attn_demo.translator import Translation, Translator
from attn_demo.views.steps import (
    EOS_NOTE, NO_HEADS, NO_SELF_ATTENTION, VECTOR_COLORSCALE, latex_parts, pca_projection, project, step_payload,
    symbol_parts)
from conftest import tiny_config, tiny_model, untyped

SOURCE = ["▁the", "▁<img", "▁src=x", "▁the", "</s>"]  # S = 5, a repeated piece and markup
TARGET = ["▁le", "▁<b>", "</s>"]  # T = 3


def trace(seed=0, D=7, H=6):
    """A made-up trace with distinct sizes: scores (T, S), α (T, S), h (S, D), c (T, D), queries (T, H)."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(len(TARGET), len(SOURCE))).astype(np.float32)
    attention = (np.exp(scores) / np.exp(scores).sum(1, keepdims=True)).astype(np.float32)
    states = rng.normal(size=(len(SOURCE), D)).astype(np.float32)
    return scores, attention, states, attention @ states, rng.normal(size=(len(TARGET), H)).astype(np.float32)


def translation(attends: bool, attention_type: str = "luong-general") -> Translation:
    """A made-up Translation with the trace above; without attention, no query, e or α and one fixed c."""
    scores, attention, states, contexts, queries = trace()
    if not attends:
        scores = attention = queries = None
        contexts = np.tile(states[-1], (len(TARGET), 1))
    return Translation(text="le <b>", source_tokens=SOURCE, unknown_characters=[], target_tokens=TARGET, scores=scores,
                       attention=attention, contexts=contexts, encoder_states=states, queries=queries,
                       attention_type=attention_type if attends else "none", query_symbol=KINDS[attention_type].query if attends
                       else None, log_prob=-1.0)


@pytest.mark.parametrize("attends", [True, False])
def test_step_payload_sends_the_models_float32_numbers_and_plain_pieces(attends):
    result = translation(attends)
    projection = pca_projection(result.encoder_states)
    sent = untyped(json.loads(json.dumps(step_payload("Luong <general>", result, projection))))  # what the page receives
    for key, array in (("queries", result.queries), ("scores", result.scores), ("weights", result.attention),
                       ("contexts", result.contexts), ("annotations", result.encoder_states)):
        if array is None:  # the baseline: nothing made up in its place
            assert sent[key] is None, key
            continue
        assert sent[key].dtype == np.float32
        np.testing.assert_array_equal(sent[key], array, err_msg=key)  # exactly the model's numbers
    # pieces and title stay plain text: step_views.js writes them with textContent, so escaping here
    # would show "&lt;img" on the page
    assert sent["source"] == SOURCE and sent["target"] == TARGET and sent["title"] == "Luong <general>"
    assert sent["query"] == (["s", "t"] if attends else None)
    assert sent["forced"] == []  # no α set by hand: the page may say α = softmax(e) at every step
    assert sent["eos_note"] == (EOS_NOTE if attends else None)  # a model without α never rests on </s>
    assert step_payload("what if", result, projection, forced=(2,))["forced"] == [2]
    np.testing.assert_allclose(sent["points"], project(result.encoder_states, projection), rtol=1e-6, atol=1e-6)
    if attends:  # each step's star is the α-weighted centroid of the projected annotations (float32 c_t, so ≈ 1e-6)
        np.testing.assert_allclose(sent["centres"], result.attention @ sent["points"], rtol=1e-5, atol=1e-6)
    else:  # one star that never moves
        np.testing.assert_array_equal(sent["centres"], np.tile(sent["centres"][0], (len(TARGET), 1)))


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_the_payload_carries_each_kinds_path_for_the_network_view(attention):
    """What reads c_t (the network view's order and arrows) and the score's equation come from KINDS."""
    sent = json.loads(json.dumps(step_payload("m", translation(attention != "none", attention), pca_projection(trace()[2]))))
    previous = attention in ("bahdanau", "bahdanau-coverage", "none")  # the GRU reads c_t (or c)
    assert sent["context_into"] == KINDS[attention].context_into == ("gru" if previous else "output")
    assert sent["counts"] == (attention == "bahdanau-coverage")  # the network view draws C_{t-1} into the score
    if attention == "none":  # nothing to score with: the view draws no score and no softmax
        assert sent["score"] is None and sent["weights"] is None
        return
    assert sent["score"] == latex_parts(KINDS[attention].score) and sent["score"][0] == ["e", "tj"]
    query = ["s", "t−1"] if previous else ["s", "t"]
    assert query in sent["score"]  # the query the kind's equation names is the one the view lights first


def test_latex_parts_writes_the_scores_in_plain_text_with_subscripts():
    assert latex_parts(r"e_{tj} = v^\top \tanh(W_h h_j + W_s s_{t-1})") == [
        ["e", "tj"], " = vᵀ tanh(", ["W", "h"], " ", ["h", "j"], " + ", ["W", "s"], " ", ["s", "t−1"], ")"]
    assert latex_parts(r"e_{tj} = (U s_t)^\top (V h_j)") == [["e", "tj"], " = (U ", ["s", "t"], ")ᵀ (V ", ["h", "j"], ")"]


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_the_query_symbol_is_written_as_base_and_subscript(attention):
    expected = {"bahdanau": ["s", "t−1"], "bahdanau-coverage": ["s", "t−1"], "none": None}.get(attention, ["s", "t"])
    assert symbol_parts(KINDS[attention].query) == expected


def test_vector_colour_scale_is_white_in_the_middle_and_diverging():
    stops = dict((at, colour) for at, colour in VECTOR_COLORSCALE)
    assert stops[0.0] != stops[1.0] and stops[0.5] == "rgb(247,247,247)"  # 0 looks like nothing


def test_pca_projection_is_affine_and_handles_a_single_piece():
    _, attention, states, contexts, _ = trace()
    projection = pca_projection(states)
    # c_t is float32 (≈ 1e-7 relative), projected in float64
    np.testing.assert_allclose(project(contexts, projection), attention @ project(states, projection), rtol=1e-6, atol=1e-6)
    mean, basis = pca_projection(states[:1])
    assert basis.shape == (7, 2)
    np.testing.assert_array_equal(project(states[:1], (mean, basis)), 0)  # one piece: no direction, exactly


@pytest.mark.parametrize("size", [2, 3, 30])
def test_pca_projection_spans_the_top_two_principal_directions(size):
    states = np.random.default_rng(size).normal(size=(size, 7)) * np.arange(1, 8)  # distinct variances
    _, basis = pca_projection(states)
    _, _, vt = np.linalg.svd(states - states.mean(0), full_matrices=False)
    rank = min(2, size - 1)  # centring removes one dimension
    # float64 throughout: the measured errors are ~1e-15, so 1e-12 leaves room for any BLAS and still
    # fails for a basis that is off by a rounding of float32 (~1e-7)
    np.testing.assert_allclose(basis.T @ basis, np.diag([1.0] * rank + [0.0] * (2 - rank)), atol=1e-12)
    np.testing.assert_allclose(basis @ basis.T, vt[:rank].T @ vt[:rank], atol=1e-12)  # same subspace as the SVD


@pytest.mark.parametrize("activation, written", [("relu", "max(0, "), ("gelu", "GELU(")])
def test_the_network_view_writes_the_feed_forward_nonlinearity_the_model_has(toy_tokenizers, tmp_path, activation, written):
    model = build_model(dataclasses.replace(tiny_config("transformer"), activation=activation)).eval()
    save_checkpoint(tmp_path / "t", model, *toy_tokenizers)
    result = Translator(tmp_path / "t", "cpu").translate("I see the red cat.")
    assert step_payload("T", result, None)["heads"]["activation"] == written


def test_a_transformers_payload_carries_every_head_exactly_and_no_2d_map(toy_tokenizers, tmp_path):
    """The heads, self-attention and step views draw from these numbers: the model's own, float32, every head."""
    save_checkpoint(tmp_path / "t", tiny_model("transformer", seed=2), *toy_tokenizers)
    result = Translator(tmp_path / "t", "cpu").translate("I see the red cat.")
    sent = untyped(json.loads(json.dumps(step_payload("T", result, None))))
    heads = sent["heads"]
    for key, field in (("cross", "cross"), ("scores", "cross_scores"), ("queries", "queries"), ("keys", "keys"),
                       ("values", "values"), ("outputs", "outputs"), ("attended", "attended"), ("encoder", "encoder"),
                       ("decoder", "decoder")):
        np.testing.assert_array_equal(heads[key], getattr(result.heads, field), err_msg=key)
    assert heads["shown"] == pick_key(*result.heads.shown) and heads["off"] == []
    # every grid, layer by layer, its mean first, with the key the server reads back and its title by piece
    assert [grid["key"] for grid in heads["grids"]] == ["1.mean", "1.1", "1.2", "1.3", "2.mean", "2.1", "2.2", "2.3"]
    assert all(read_key(grid["key"]) == (grid["layer"], grid["head"]) for grid in heads["grids"])
    assert heads["grids"][-1] | {"text": None} == {"key": "2.3", "layer": 1, "head": 2, "name": "layer 2, head 3",
                                                   "title": "T: α<sub>tj</sub> by piece, layer 2, head 3", "text": None}
    assert sent["points"] is None and sent["centres"] is None  # its heads weigh the v_j: no map of the h_j
    assert sent["no_heads"] is None and sent["no_self_attention"] is None


def read_key(key: str) -> tuple[int, int | None]:
    """A grid key read back by grids.PICK_KEY, from 0."""
    layer, head = PICK_KEY.fullmatch(key).groups()
    return int(layer) - 1, None if head == "mean" else int(head) - 1


def test_a_model_without_heads_says_so_in_its_payload():
    sent = step_payload("m", translation(True), pca_projection(trace()[2]))
    assert sent["heads"] is None and sent["no_heads"] == NO_HEADS and sent["no_self_attention"] == NO_SELF_ATTENTION
