"""Modules called as their forward alone, without nn.Module's call machinery: the Transformer's many small calls."""
import torch
import torch.nn as nn

from attn_demo.models.dropout import Dropout


class Plain:
    """Mixed into a module (before nn.Module), calling it runs its forward and nothing else: no forward or backward
    hooks (nothing in this project registers one; a hook registered on such a module would not run). nn.Module's
    __call__ checks for them on every call, about 4 µs on this project's CPUs, and a Transformer's decoding step makes
    about 50 calls: a tenth of a 15-word greedy translation (CONTRIBUTING.md)."""

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class LayerNorm(Plain, nn.LayerNorm):
    """nn.LayerNorm, called plainly, its forward torch's kernel itself (F.layer_norm looks up a cuDNN switch on every
    call that its CPU kernel never reads: a step makes ten)."""

    def forward(self, x):
        return torch.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class Embedding(Plain, nn.Embedding):
    """nn.Embedding, called plainly."""


class PlainDropout(Plain, Dropout):
    """models.dropout.Dropout, called plainly."""
