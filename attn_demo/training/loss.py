"""The training loss: label-smoothed cross-entropy of the output layer, computed a block of target steps at a time.

With V = 4,000 target pieces and ~3,000 target steps a batch, the logits are a 12M-number matrix; built whole, and
kept whole for the backward pass (with its log-softmax, its cast to float32 and their gradients), their elementwise
work is memory traffic that took about a fifth of a Transformer's training step on the CPU in bf16. Here
the output layer and the loss run over ROWS steps at a time, and each block's gradient is worked out as soon as its
loss is (Liger Kernel's fused linear cross-entropy does the same on GPUs): no (N, V) matrix is ever built, and the
numbers are those of F.linear then F.cross_entropy(label_smoothing=ε, ignore_index=pad), to float rounding.

Per real target step t with target y_t, p = softmax(W x_t + b), and the smoothed target q = (1 − ε) onehot(y_t) + ε/V
(Szegedy et al. 2016):
    loss_t = −Σ_v q_v log p_v,     ∂loss_t / ∂(W x_t + b) = p − q,
averaged over the real steps; padding steps count for nothing.
"""
import torch

ROWS = 512  # target steps a block: its (ROWS, V) logits, 8 MB at V = 4,000, stay in the cache and are reused


class _OutputCrossEntropy(torch.autograd.Function):
    """The loss and, in the same pass, its gradients; backward scales them by the loss's own gradient."""

    @staticmethod
    def forward(ctx, inputs, weight, bias, targets, pad_id: int, smoothing: float):
        # inputs (N, D), weight (V, D), bias (V,), targets (N,)
        real = targets != pad_id  # (N,)
        count = real.sum().clamp(min=1)
        V, exact = weight.size(0), torch.promote_types(weight.dtype, torch.float32)  # the softmax's precision
        total = inputs.new_zeros((), dtype=exact)
        grad_inputs = torch.zeros_like(inputs)
        grad_weight = torch.zeros_like(weight, dtype=exact)
        grad_bias = torch.zeros_like(bias, dtype=exact)
        # the products in the precision the model's own layers compute in (bf16 where autocast is on), cast once
        device = inputs.device.type
        low = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else weight.dtype
        weight_low, bias_low = weight.to(low), bias.to(low)
        for start in range(0, inputs.size(0), ROWS):
            rows = slice(start, start + ROWS)
            x, y, kept = inputs[rows].to(low), targets[rows], real[rows, None]  # (n, D), (n,), (n, 1)
            log_p = torch.addmm(bias_low, x, weight_low.t()).to(exact).log_softmax(-1)  # (n, V)
            target_log_p = log_p.gather(1, y[:, None])  # (n, 1)
            per_step = -(1 - smoothing) * target_log_p - smoothing / V * log_p.sum(-1, keepdim=True)  # (n, 1)
            total += (per_step * kept).sum()
            grad_logits = log_p.exp_().sub_(smoothing / V)  # p − ε/V, in place of log p
            grad_logits.scatter_add_(1, y[:, None], torch.full_like(target_log_p, smoothing - 1))  # − (1 − ε) at y_t
            grad_logits.mul_(kept)  # (n, V): padding steps count for nothing
            grad_bias += grad_logits.sum(0)
            grad_logits = grad_logits.to(low)
            grad_inputs[rows] = (grad_logits @ weight_low).to(inputs.dtype)
            grad_weight += (grad_logits.t() @ x).to(exact)
        ctx.save_for_backward(grad_inputs, grad_weight, grad_bias, count)
        ctx.dtypes = weight.dtype, bias.dtype
        return total / count

    @staticmethod
    def backward(ctx, grad_loss):
        grad_inputs, grad_weight, grad_bias, count = ctx.saved_tensors
        scale = grad_loss / count
        weight_dtype, bias_dtype = ctx.dtypes
        return (grad_inputs * scale.to(grad_inputs.dtype), (grad_weight * scale).to(weight_dtype),
                (grad_bias * scale).to(bias_dtype), None, None, None)


def output_cross_entropy(inputs, weight, bias, targets, pad_id: int, smoothing: float) -> torch.Tensor:
    """The mean label-smoothed cross-entropy of softmax(W x + b) over the real target steps: inputs (…, D) what the
    output layer reads, weight (V, D) and bias (V,) its own, targets (…) the pieces, pad_id where there is none."""
    return _OutputCrossEntropy.apply(inputs.reshape(-1, inputs.size(-1)), weight, bias, targets.reshape(-1),
                                     pad_id, smoothing)
