#!/usr/bin/python3
"""Group norms, batch norms and losses on operators kevolve has never seen:
nn.GroupNorm over 2-D to 5-D inputs (affine or not), nn.BatchNorm1d/2d in
training mode (batch statistics; channels whose N x S elements are long
enough to be summed in pieces, and a plain one over rows) and the MSE, L1, smooth L1 and
Huber losses with a mean or sum reduction, each written as a
KernelBench-style file at odd sizes, are imported (`kevolve ops import`),
classified `row_reduction` with template keys (`reduction: group_norm`
and its groups, eps, gamma, beta; `reduction: batch_norm`; `reduce` and
the loss as `expr`), and served by the builtin synthesizer on cpu
(templates cpu/group_norm, cpu/batch_norm and cpu/reduce_all): every kernel of a sweep passes the evaluator (fp64
reference at the timed shape and at the holdout shapes). A loss without a
reduction (`reduction='none'`) is elementwise and not claimed here.

Run by CTest (test norms_and_losses) with KEVOLVE_BIN and KEVOLVE_HOME; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_norms_and_losses.py
"""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import ImportedClassTest  # noqa: E402

MODULE = """import torch
import torch.nn as nn
import torch.nn.functional as F

B = 4
C = 24
L = 333


class Model(nn.Module):
    def __init__(self):
        super().__init__()
{init}

    def forward(self, {args}):
        return {body}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
"""
LOSS = ("        pass", "p, t", "torch.randn(B, C, L), torch.randn(B, C, L) * 2")
# name: (init, args, body, inputs, expected template keys)
CASES = {
    "group_norm_3d": ("        self.gn = nn.GroupNorm(6, C)", "x", "self.gn(x)", "torch.randn(B, C, L) * 3 + 1",
                      {"reduction": "group_norm", "groups": 6, "gamma": "gn_weight", "beta": "gn_bias"}),
    "group_norm_plain_2d": ("        self.gn = nn.GroupNorm(4, C, affine=False, eps=1e-3)", "x", "self.gn(x)",
                            "torch.rand(B, C)", {"reduction": "group_norm", "groups": 4, "eps": 1e-3, "gamma": None}),
    "group_norm_5d": ("        self.gn = nn.GroupNorm(3, C)", "x", "self.gn(x)", "torch.randn(B, C, 3, 5, 7)",
                      {"reduction": "group_norm", "groups": 3}),
    "batch_norm_2d_long_channels": ("        self.bn = nn.BatchNorm2d(3)", "x", "self.bn(x)", "torch.randn(B, 3, 45, 51) * 2 + 1",
                                    {"reduction": "batch_norm", "x": "x", "gamma": "bn_weight", "beta": "bn_bias"}),
    "batch_norm_1d_plain_rows": ("        self.bn = nn.BatchNorm1d(C, affine=False, eps=1e-3)", "x",
                                 "self.bn(x)", "torch.rand(B * 9, C)", {"reduction": "batch_norm", "eps": 1e-3, "gamma": None}),
    "mse_mean": (*LOSS[:2], "F.mse_loss(p, t)", LOSS[2], {"reduce": "mean"}),
    "l1_sum": (*LOSS[:2], "F.l1_loss(p, t, reduction='sum')", LOSS[2], {"reduce": "sum"}),
    "smooth_l1_beta": (*LOSS[:2], "F.smooth_l1_loss(p, t, beta=0.5)", LOSS[2], {"reduce": "mean"}),
    "huber_delta": (*LOSS[:2], "F.huber_loss(p, t, delta=2.0)", LOSS[2], {"reduce": "mean"}),
}
NOT_COVERED = {"mse_none": (*LOSS[:2], "F.mse_loss(p, t, reduction='none')", LOSS[2])}


class NormsAndLosses(ImportedClassTest):
    PREFIX = "nl_"
    CLASS = "row_reduction"

    @classmethod
    def sources(cls):
        cases = {**CASES, **NOT_COVERED}
        return {n: MODULE.format(init=i, args=a, body=b, inputs=x) for n, (i, a, b, x, *_) in cases.items()}

    def test_each_names_its_template_keys(self):
        self.expect_keys({name: case[4] for name, case in CASES.items()})

    def test_a_loss_without_reduction_is_not_claimed(self):
        self.assertNotIn("reduce", self.operator("mse_none").get("template") or {})

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        self.expect_served(list(CASES))


if __name__ == "__main__":
    unittest.main()
