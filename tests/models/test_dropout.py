import pytest
import torch

from attn_demo.models.dropout import Dropout


def test_training_it_zeroes_about_p_and_scales_the_rest_so_the_mean_stays():
    torch.manual_seed(0)
    x = torch.ones(200, 300)
    y = Dropout(0.3).train()(x)
    assert abs(float((y == 0).float().mean()) - 0.3) < 0.01
    assert torch.allclose(y[y != 0], torch.full_like(y[y != 0], 1 / 0.7))
    assert abs(float(y.mean()) - 1.0) < 0.02


def test_its_gradient_passes_where_it_kept_and_scaled_as_the_output():
    torch.manual_seed(1)
    x = torch.randn(7, 11, requires_grad=True)
    y = Dropout(0.5).train()(x)
    y.sum().backward()
    torch.testing.assert_close(x.grad, (y != 0).float() * 2.0)


@pytest.mark.parametrize("p", [0.0, 0.4])
def test_in_eval_or_at_zero_it_is_the_identity(p):
    x = torch.randn(5, 6)
    assert Dropout(p).eval()(x) is x and Dropout(0.0).train()(x) is x


def test_the_same_seed_draws_the_same_mask_in_bf16_too():
    x = torch.randn(9, 13).bfloat16()
    torch.manual_seed(3)
    first = Dropout(0.3).train()(x)
    torch.manual_seed(3)
    assert first.dtype == torch.bfloat16 and torch.equal(first, Dropout(0.3).train()(x))
