"""attn_demo.models.transformer's Linear: the products it gives without gradients are nn.Linear's, bit for bit."""
import pytest
import torch
import torch.nn.functional as F

from attn_demo.models.transformer import Linear


def layer(exact: bool) -> Linear:
    """A Linear of distinct sizes whose W float16 holds exactly (as a loaded checkpoint's), or not."""
    torch.manual_seed(0)
    linear = Linear(7, 5)
    if exact:
        with torch.no_grad():
            linear.weight.copy_(linear.weight.half().float())
    return linear


@pytest.mark.parametrize("exact", [True, False])
def test_a_product_without_gradients_is_the_weights_own_bit_for_bit(exact):
    linear, x = layer(exact), torch.randn(3, 7)
    with torch.inference_mode():
        product = linear(x)
    assert torch.equal(product, F.linear(x, linear.weight, linear.bias))
    assert (linear._narrow[1] is not None) == exact  # read from half the bytes only where exact


def test_the_float16_copy_follows_the_weights_once_an_optimizer_changes_them():
    linear, x = layer(True), torch.randn(3, 7)
    with torch.no_grad():
        before = linear(x)
    linear(x).square().sum().backward()  # with gradients: W itself
    torch.optim.SGD(linear.parameters(), lr=0.1).step()  # W changed in place, no longer held by float16
    with torch.no_grad():
        after = linear(x)
    assert not torch.equal(after, before) and torch.equal(after, F.linear(x, linear.weight, linear.bias))
    assert linear._narrow[1] is None
