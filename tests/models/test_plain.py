"""attn_demo.models.plain: its modules compute what torch's own do, gradients included."""
import torch
import torch.nn as nn

from attn_demo.models.plain import LayerNorm


def test_its_layer_norm_is_torch_s_with_the_same_weights_eps_and_gradients():
    torch.manual_seed(0)
    ours, theirs = LayerNorm(6, eps=1e-3), nn.LayerNorm(6, eps=1e-3)
    with torch.no_grad():
        ours.weight.normal_()
        ours.bias.normal_()
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(3, 4, 6, requires_grad=True) * 0.05  # a spread near eps: a wrong eps shows
    expected = theirs(x)
    got = ours(x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    grads = torch.autograd.grad(got.square().sum(), [ours.weight, ours.bias])
    torch.testing.assert_close(grads, torch.autograd.grad(expected.square().sum(), [theirs.weight, theirs.bias]))
