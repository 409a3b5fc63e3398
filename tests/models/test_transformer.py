"""attn_demo.models.transformer: the products kept for inference are nn.Linear's (from float16 weights where exact, to
float32 rounding), the output layer's included, and follow every change of the weights; one product for q, k and v,
one for every layer's cross-attention keys and values; the fused kernel where α is not kept computes the explicit
weights' numbers."""
import pytest
import torch
import torch.nn.functional as F

from attn_demo.models.transformer import FLOAT16_ROWS, FLOAT16_WEIGHTS, FeedForward, Linear
from conftest import tiny_model


def layer(exact: bool) -> Linear:
    """A Linear of distinct sizes whose W float16 holds exactly (as a loaded checkpoint's), or not."""
    torch.manual_seed(0)
    linear = Linear(7, 5)
    if exact:
        with torch.no_grad():
            linear.weight.copy_(linear.weight.half().float())
    return linear


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("rows", [6, FLOAT16_ROWS + 1])
def test_a_product_without_gradients_is_the_weights_own_read_in_float16_where_exact_and_of_few_rows(exact, rows,
                                                                                                     monkeypatch):
    linear, x, calls = layer(exact), 3 * torch.randn(rows, 1, 7), []
    fbgemm = getattr(torch, "fbgemm_linear_fp16_weight", None)
    counted = lambda *args: calls.append(1) or fbgemm(*args)  # noqa: E731
    monkeypatch.setattr(torch, "fbgemm_linear_fp16_weight", counted, raising=False)
    with torch.inference_mode():
        product = linear(x)
    expected = F.linear(x, linear.weight, linear.bias)
    assert (linear._kept.packed is not None) == (exact and FLOAT16_WEIGHTS)  # kept in float16 only where exact
    assert bool(calls) == (exact and FLOAT16_WEIGHTS and rows <= FLOAT16_ROWS)  # many rows: torch's, on all threads
    if calls:  # float32 sums in another order; an input rounded to float16 would be ~1e-3 off
        torch.testing.assert_close(product, expected, rtol=1e-6, atol=1e-6)
    else:
        assert torch.equal(product, expected)


def test_the_float16_copy_follows_the_weights_once_an_optimizer_changes_them():
    linear, x = layer(True), torch.randn(3, 7)
    with torch.no_grad():
        before = linear(x)
    linear(x).square().sum().backward()  # with gradients: W itself
    torch.optim.SGD(linear.parameters(), lr=0.1).step()  # W changed in place, no longer held by float16
    with torch.no_grad():
        after = linear(x)
    assert not torch.equal(after, before) and torch.equal(after, F.linear(x, linear.weight, linear.bias))
    assert linear._kept.packed is None


def test_a_self_attention_s_one_product_for_q_k_and_v_is_the_three_linears():
    attention = tiny_model("transformer").decoder.layers[0].self_attention
    x = torch.randn(2, 3, attention.W_Q.in_features)
    for grad in (False, True):  # kept (inference) and stacked for gradients (training)
        with torch.set_grad_enabled(grad):
            projected = attention.project(x, "QKV")  # (B, 3, H, N, d_k)
        for i, linear in enumerate((attention.W_Q, attention.W_K, attention.W_V)):
            expected = F.linear(x, linear.weight, linear.bias).view(2, 3, attention.heads, attention.d_k).transpose(1, 2)
            torch.testing.assert_close(projected[:, i], expected, atol=1e-6, rtol=1e-6)


def test_every_layer_s_cross_attention_keys_and_values_in_one_product_are_each_layer_s_own():
    decoder = tiny_model("transformer").decoder
    annotations = torch.randn(2, 3, decoder.config.d_model)
    for grad in (False, True):  # kept (inference) and stacked for gradients (training, attribution)
        with torch.set_grad_enabled(grad):
            keys = decoder.cross_keys(annotations)  # (B, L, 2, H, S, d_k)
        assert keys.shape == (2, decoder.config.dec_layers, 2, decoder.config.heads, 3, decoder.config.head_size)
        for l, layer in enumerate(decoder.layers):
            for i, linear in enumerate((layer.cross_attention.W_K, layer.cross_attention.W_V)):
                expected = F.linear(annotations, linear.weight, linear.bias).view(2, 3, layer.cross_attention.heads, -1)
                torch.testing.assert_close(keys[:, l, i], expected.transpose(1, 2), atol=1e-6, rtol=1e-6)


def test_the_output_layer_s_kept_product_is_the_target_embedding_s_and_follows_its_changes():
    decoder = tiny_model("transformer").decoder
    with torch.no_grad():
        decoder.embed.weight.copy_(decoder.embed.weight.half().float())  # as a loaded checkpoint's
        decoder.out_bias.normal_()
        readout = torch.randn(2, 3, decoder.config.d_model)
        before = decoder.logits(readout)
        expected = F.linear(readout, decoder.embed.weight, decoder.out_bias)
        torch.testing.assert_close(before, expected, rtol=1e-6, atol=1e-6)
        assert (decoder._keptout.packed is not None) == FLOAT16_WEIGHTS  # a step's largest product, from float16
        decoder.embed.weight[5].add_(0.25)  # E_y, shared with the input side, changed in place
        after = decoder.logits(readout)
    torch.testing.assert_close(after[..., 5], before[..., 5] + 0.25 * readout.sum(-1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(after[..., :5], before[..., :5], rtol=1e-6, atol=1e-6)


def test_the_kept_stack_follows_a_change_to_any_one_of_its_weights():
    attention = tiny_model("transformer").decoder.layers[0].self_attention
    x = torch.randn(2, 3, attention.W_Q.in_features)
    with torch.no_grad():
        before = attention.project(x, "QKV")
        attention.W_V.bias.add_(1.0)  # the last of the six tensors, in place: its count of changes moves
        after = attention.project(x, "QKV")
    torch.testing.assert_close(after[:, 2], before[:, 2] + 1.0)
    assert torch.equal(after[:, :2], before[:, :2])
    with torch.no_grad():
        bias = attention.W_K.bias.detach() + 1.0  # a new tensor in its place, whose count of changes
        while bias._version < attention.W_K.bias._version:  # happens to equal the old one's: only where it is tells
            bias.mul_(1.0)
        attention.W_K.bias = torch.nn.Parameter(bias)
        replaced = attention.project(x, "QKV")
    torch.testing.assert_close(replaced[:, 1], after[:, 1] + 1.0)


def test_the_fused_kernel_where_alpha_is_not_kept_gives_the_explicit_weights_numbers():
    """Search steps and encodings (α not kept, no gradients: F.scaled_dot_product_attention) compute what the trace's
    explicit α gives, padding and the causal mask included; only the shown grid's α is kept, and it is the trace's."""
    model = tiny_model("transformer")
    torch.manual_seed(1)
    src, lengths = torch.randint(4, 40, (3, 5)), torch.tensor([5, 3, 2])
    src[1, 3:], src[2, 2:] = 0, 0
    y_in = torch.randint(4, 40, (3, 4))
    with torch.no_grad():
        memory = model.encode(src, lengths)
        traced = model.decoder.run(y_in, memory.init_state, memory, every=True)
        fused = model.decoder.run(y_in, memory.init_state, memory, every=False)
        annotations, attended = model.encoder.run(model.encoder.embed(src), src != 0, keep=True)
    torch.testing.assert_close(fused[0], traced[0], atol=1e-6, rtol=1e-5)  # the readouts
    torch.testing.assert_close(annotations, memory.annotations, atol=1e-6, rtol=1e-5)
    shown = model.config.layer_shown
    assert all(a.weights is None for a in fused[2]) and all(a.weights is None for i, a in enumerate(fused[3]) if i != shown)
    assert all(a.weights is not None for a in attended)
    torch.testing.assert_close(fused[3][shown].weights, traced[3][shown].weights, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("activation, phi", [("relu", lambda u: u.clamp(min=0)),
                                             ("gelu", lambda u: u * 0.5 * (1 + torch.erf(u / 2 ** 0.5)))])
def test_the_feed_forward_sublayer_is_w2_phi_of_w1_x_with_the_configured_phi(activation, phi):
    torch.manual_seed(0)
    ffn, x = FeedForward(6, 9, activation), torch.randn(2, 3, 6)
    expected = phi(x @ ffn.W_1.weight.T + ffn.W_1.bias) @ ffn.W_2.weight.T + ffn.W_2.bias  # Vaswani et al. 2017, eq. 2
    torch.testing.assert_close(ffn(x), expected)
