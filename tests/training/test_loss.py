import pytest
import torch
import torch.nn.functional as F

from attn_demo.training import loss as loss_module
from attn_demo.training.loss import output_cross_entropy
from conftest import tiny_model


def plain(inputs, weight, bias, targets, pad_id, smoothing):
    """The loss as F.linear and F.cross_entropy give it, every logit at once."""
    logits = F.linear(inputs, weight, bias)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=pad_id,
                           label_smoothing=smoothing)


def leaves(seed=0, B=3, T=5, D=6, V=11):
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(B, T, D, generator=generator, dtype=torch.float64).requires_grad_()
    weight = torch.randn(V, D, generator=generator, dtype=torch.float64).requires_grad_()
    bias = torch.randn(V, generator=generator, dtype=torch.float64).requires_grad_()
    targets = torch.randint(1, V, (B, T), generator=generator)
    targets[0, 3:] = 0  # a shorter target, padded
    return inputs, weight, bias, targets


def gradients(loss_of, tensors, targets, smoothing):
    for tensor in tensors:
        tensor.grad = None
    loss = loss_of(*tensors, targets, 0, smoothing)
    (2.5 * loss).backward()  # a gradient of the loss other than 1 reaches every input
    return loss.detach(), [tensor.grad.clone() for tensor in tensors]


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("rows", [2, 512])  # blocks that cut a target, and one block for all
def test_the_loss_and_its_gradients_are_those_of_the_whole_logits(monkeypatch, smoothing, rows):
    monkeypatch.setattr(loss_module, "ROWS", rows)
    *tensors, targets = leaves()
    expected, expected_grads = gradients(plain, tensors, targets, smoothing)
    got, got_grads = gradients(output_cross_entropy, tensors, targets, smoothing)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)  # float64 throughout
    for g, e in zip(got_grads, expected_grads):
        torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-12)


def test_padding_steps_count_for_nothing():
    *tensors, targets = leaves()
    loss, grads = gradients(output_cross_entropy, tensors, targets, 0.1)
    assert grads[0][0, 3:].abs().max() == 0  # no gradient reaches a padding step's input
    other = tensors[0].detach().clone()
    other[0, 3:] = 100.0  # whatever the model reads at padding steps
    assert output_cross_entropy(other, *tensors[1:], targets, 0, 0.1) == loss


def test_in_bf16_it_stays_near_the_float32_loss():
    *tensors, targets = (t.float() if t.is_floating_point() else t for t in leaves(B=4, T=7, D=16, V=40))
    exact = output_cross_entropy(*tensors, targets, 0, 0.1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = output_cross_entropy(*tensors, targets, 0, 0.1)
    assert low.dtype == torch.float32 and abs(low.item() - exact.item()) < 0.05 * exact.item()


def test_every_kind_trains_on_the_same_loss_and_gradients_as_its_logits(attention):
    torch.manual_seed(0)
    model = tiny_model(attention)  # eval: no dropout, so both passes see the same numbers
    src, lengths = torch.tensor([[5, 6, 7, 3], [8, 9, 3, 0]]), torch.tensor([4, 3])
    y_in, y_out = torch.tensor([[2, 10, 11], [2, 12, 0]]), torch.tensor([[10, 11, 3], [12, 3, 0]])
    readouts, _ = model.readouts_with_attention(src, lengths, y_in)
    fused = output_cross_entropy(*model.decoder.output_layer(readouts), y_out, 0, 0.1)
    fused.backward()
    fused_grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    whole = F.cross_entropy(model(src, lengths, y_in).flatten(0, 1), y_out.flatten(), ignore_index=0,
                            label_smoothing=0.1)
    whole.backward()
    torch.testing.assert_close(fused, whole)
    assert fused_grads.keys() == {name for name, p in model.named_parameters() if p.grad is not None}
    for name, p in model.named_parameters():
        if p.grad is not None:
            torch.testing.assert_close(fused_grads[name], p.grad, rtol=1e-4, atol=1e-6, msg=name)
