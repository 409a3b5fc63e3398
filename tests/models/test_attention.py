import math

import pytest
import torch

from attn_demo.models.attention import (
    KINDS, BahdanauAttention, CoverageAttention, LuongConcatAttention, LuongDotAttention, LuongGeneralAttention,
    LuongLowRankAttention, build_attention)
from attn_demo.models.config import ATTENTION_SCORES, ATTENTION_TYPES
from conftest import tiny_model

B, T, S, D, H, A, R = 2, 3, 5, 6, 7, 4, 8


def make(name):
    torch.manual_seed(0)
    query_size = D if name == "luong-dot" else H
    module = build_attention(name, query_size, D, A, R)
    if name == "bahdanau-coverage":  # w_c starts at zero; here it must count
        torch.nn.init.normal_(module.w_c.weight)
    return module, query_size


def hand_score(name, module, s, h, c=0.0):
    """e for one query vector s and one annotation h (received attention c so far), written out element by element."""
    if name == "luong-dot":
        return sum(s[i] * h[i] for i in range(D))
    if name == "luong-lowrank":
        U, V = module.U.weight, module.V.weight  # (R, H), (R, D)
        return sum(sum(U[r, i] * s[i] for i in range(H)) * sum(V[r, k] * h[k] for k in range(D)) for r in range(R))
    if name == "luong-general":
        W = module.W.weight  # (H, D)
        return sum(s[i] * sum(W[i, k] * h[k] for k in range(D)) for i in range(H))
    Wh, bh, Ws, v = module.W_h.weight, module.W_h.bias, module.W_s.weight, module.v.weight[0]
    wc = module.w_c.weight[:, 0] if name == "bahdanau-coverage" else torch.zeros(A)
    return sum(v[a] * math.tanh(float(sum(Wh[a, k] * h[k] for k in range(D)) + bh[a] + sum(Ws[a, i] * s[i] for i in range(len(s)))
                                      + wc[a] * c))
               for a in range(A))


@pytest.mark.parametrize("name", ATTENTION_SCORES)
def test_scores_weights_and_context_match_hand_computation(name):
    module, query_size = make(name)
    query, h = torch.randn(B, T, query_size), torch.randn(B, S, D)
    mask = torch.ones(B, S, dtype=torch.bool)
    with torch.no_grad():
        scores, weights, context = module(query, module.project_keys(h), h, mask)
    assert scores.shape == weights.shape == (B, T, S) and context.shape == (B, T, D)
    for b in range(B):
        for t in range(T):
            with torch.no_grad():
                expected = torch.tensor([float(hand_score(name, module, query[b, t], h[b, j])) for j in range(S)])
            torch.testing.assert_close(scores[b, t], expected, atol=1e-5, rtol=1e-5)
            alpha = torch.exp(expected) / torch.exp(expected).sum()
            torch.testing.assert_close(weights[b, t], alpha, atol=1e-6, rtol=1e-5)
            torch.testing.assert_close(context[b, t], (alpha[:, None] * h[b]).sum(0), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", ATTENTION_SCORES)
def test_padding_gets_exactly_zero_weight_and_rows_sum_to_one(name):
    module, query_size = make(name)
    query, h = torch.randn(B, T, query_size), torch.randn(B, S, D)
    mask = torch.tensor([[True] * S, [True, True, False, False, False]])
    with torch.no_grad():
        _, weights, context = module(query, module.project_keys(h), h, mask)
    assert torch.all(weights[1, :, 2:] == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, T))
    # what sits in the padded positions must not leak into the context
    h_changed = h.clone()
    h_changed[1, 2:] = 100.0
    with torch.no_grad():
        _, _, context_changed = module(query, module.project_keys(h_changed), h_changed, mask)
    torch.testing.assert_close(context_changed[1], context[1])


def test_the_coverage_score_reads_how_much_attention_each_piece_has_received():
    """e_tj = vᵀ tanh(W_h h_j + W_s s_{t−1} + w_c C_tj), by hand; without coverage it is Bahdanau's score."""
    module, _ = make("bahdanau-coverage")
    query, h = torch.randn(B, T, H), torch.randn(B, S, D)
    coverage = torch.rand(B, T, S) * 2
    with torch.no_grad():
        scores = module.score(query, module.project_keys(h), coverage)
        for b in range(B):
            for t in range(T):
                expected = torch.tensor([float(hand_score("bahdanau-coverage", module, query[b, t], h[b, j], coverage[b, t, j]))
                                         for j in range(S)])
                torch.testing.assert_close(scores[b, t], expected, atol=1e-5, rtol=1e-5)
        plain = BahdanauAttention(H, D, A)
        plain.load_state_dict({k: v for k, v in module.state_dict().items() if k != "w_c.weight"})
        torch.testing.assert_close(module.score(query, module.project_keys(h), torch.zeros(B, T, S)),
                                   plain.score(query, plain.project_keys(h)))
        assert not torch.allclose(scores, plain.score(query, plain.project_keys(h)))


def test_a_new_coverage_score_starts_as_bahdanau_s():
    assert torch.equal(CoverageAttention(H, D, A).w_c.weight, torch.zeros(A, 1))


def test_factory_builds_each_class_and_rejects_unknown_names_listing_valid_ones():
    classes = {"bahdanau": BahdanauAttention, "bahdanau-coverage": CoverageAttention, "luong-concat": LuongConcatAttention,
               "luong-general": LuongGeneralAttention, "luong-dot": LuongDotAttention,
               "luong-lowrank": LuongLowRankAttention}
    for name, cls in classes.items():
        assert type(make(name)[0]) is cls
    for unknown in ("luong-cosine", "none"):  # "none" is a decoder without an attention module
        with pytest.raises(ValueError) as error:
            build_attention(unknown, H, D, A, R)
        assert all(name in str(error.value) for name in ATTENTION_SCORES)


@pytest.mark.parametrize("name", ATTENTION_SCORES)
def test_modules_hold_no_state_between_calls(name):
    module, query_size = make(name)
    h1, h2 = torch.randn(1, S, D), torch.randn(1, S - 1, D)
    query, mask1, mask2 = torch.randn(1, 1, query_size), torch.ones(1, S, dtype=torch.bool), torch.ones(1, S - 1, dtype=torch.bool)
    with torch.no_grad():
        first = module(query, module.project_keys(h1), h1, mask1)[1]
        module(query, module.project_keys(h2), h2, mask2)
        again = module(query, module.project_keys(h1), h1, mask1)[1]
    assert torch.equal(first, again)
    assert set(vars(module)["_buffers"]) == set()


def test_low_rank_score_is_the_general_score_with_w_of_rank_r_and_fewer_parameters():
    """s_tᵀ (UᵀV) h_j: the same energies as a general score whose W is UᵀV, from R(H + D) numbers."""
    low_rank, _ = make("luong-lowrank")
    general = LuongGeneralAttention(H, D)
    with torch.no_grad():
        general.W.weight.copy_(low_rank.U.weight.T @ low_rank.V.weight)  # (H, D) of rank ≤ R
        query, h = torch.randn(B, T, H), torch.randn(B, S, D)
        torch.testing.assert_close(low_rank.score(query, low_rank.project_keys(h)), general.score(query, general.project_keys(h)),
                                   atol=1e-5, rtol=1e-5)
    assert sum(p.numel() for p in low_rank.parameters()) == R * (H + D)


@pytest.mark.parametrize("attention", ATTENTION_TYPES)
def test_each_type_is_described_once_with_the_key_size_and_query_its_model_has(attention):
    model = tiny_model(attention)
    kind, config = KINDS[attention], model.config
    assert (kind.score is None) == (attention == "none") == (model.decoder.attention is None)
    assert model.query_symbol == kind.query
    # the GRU reads c_t exactly where attention runs before it, on s_{t-1} (and the baseline's GRU reads c)
    gru_reads_context = model.decoder.rnn.input_size if hasattr(model.decoder, "rnn") else model.decoder.cell.input_size
    assert (kind.context_into == "gru") == (gru_reads_context == config.emb_size + config.annotation_size)
    assert (kind.context_into == "gru") == (kind.query != "s_t")
    if attention == "none":
        assert kind.keys(config) is None
        return
    assert kind.counts == hasattr(model.decoder.attention, "w_c")  # the network view draws C_{t-1} for these
    keys = model.decoder.attention.project_keys(torch.zeros(1, 2, config.annotation_size))
    assert keys.shape == (1, 2, kind.keys(config))  # the size the page prints, from the module itself
    assert len({k.title for k in KINDS.values()}) == len(KINDS)
