"""Generators of the operator's inputs (config/operators/README.md,
Distributions), drawn like the file draws them.

Module state follows PyTorch's default initialization: nn.Linear, ConvNd
and ConvTransposeNd weight and bias uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))
with fan_in = weight.shape[1] * prod(weight.shape[2:]) (kaiming_uniform with
a = sqrt(5), as torch.nn.init computes it); norm weights and running_var
1, norm biases and running_mean 0 (a constant is uniform with low == high).
A constant is followed by a second, perturbed distribution (the trials
cycle through the list), so a kernel that assumes the defaults fails.
Other tensors (forward's inputs, the model's own nn.Parameter(torch.randn))
are recognised from a sample: torch.rand -> uniform(0, 1), torch.randn ->
normal(0, 1) (a sample of mean within 1 and std within 0.3..3), integers -> randint over the sampled range.
"""
import torch

from fit import render

LINEAR_LIKE = (torch.nn.Linear, torch.nn.Bilinear, torch.nn.modules.conv._ConvNd)
NORMS = (torch.nn.modules.batchnorm._NormBase, torch.nn.GroupNorm, torch.nn.LayerNorm)


def constant(c):
    return [{"dist": "uniform", "low": c, "high": c},
            {"dist": "uniform", "low": c - 0.5 if c else -0.5, "high": c + 0.5 if c else 0.5}]


def from_sample(t):
    t = t.detach()
    if not t.dtype.is_floating_point:
        lo, hi = int(t.min()), int(t.max())
        return [{"dist": "randint", "low": lo, "high": hi + 1}]
    lo, hi = float(t.min()), float(t.max())
    if lo == hi:
        return constant(lo)
    if lo >= 0 and hi <= 1:
        return [{"dist": "uniform", "low": 0, "high": 1}]
    if lo >= -1 and hi <= 1:
        return [{"dist": "uniform", "low": -1, "high": 1}]
    mean, std = float(t.mean()), float(t.std()) if t.numel() > 1 else 1.0
    if abs(mean) < 1 and 0.3 < std < 3:  # torch.randn (small samples are noisy)
        return [{"dist": "normal", "mean": 0, "std": 1}]
    return [{"dist": "normal", "mean": round(mean, 1), "std": max(round(std, 1), 0.1)}]


def for_state(model, state_name, tensor, weight_shape_exprs):
    """Distributions of one parameter or buffer. weight_shape_exprs: the
    fitted shape (sympy) of the owner's `weight`, where it has one."""
    owner_name, _, leaf = state_name.rpartition(".")
    owner = model.get_submodule(owner_name) if owner_name else model
    if isinstance(owner, LINEAR_LIKE) and leaf in ("weight", "bias") and weight_shape_exprs:
        fan_in = weight_shape_exprs[1]
        for d in weight_shape_exprs[2:]:
            fan_in = fan_in * d
        bound = f"({render(fan_in)})^(-0.5)"
        return [{"dist": "uniform", "low": f"-{bound}", "high": bound}]
    if isinstance(owner, NORMS):
        if leaf in ("weight", "running_var"):
            return constant(1.0)
        if leaf in ("bias", "running_mean"):
            return constant(0.0)
    return from_sample(tensor)
