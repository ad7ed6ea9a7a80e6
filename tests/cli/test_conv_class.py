#!/usr/bin/python3
"""Convolutions with epilogue chains on operators kevolve has never seen:
1-D, 2-D and 3-D; stride, padding, dilation; grouped, depthwise and
pointwise; transposed (with output padding and groups); with and without a
bias; then pointwise ops over the result, per-channel parameters and
constants, and a row op (the mean over the spatial axes, global average
pooling, group norm), each written as a KernelBench-style file at odd
sizes, are imported (`kevolve ops import`), classified `conv` with the
geometry, epilogue expression and row op as template keys, and served by
the builtin synthesizer on cpu (template cpu/conv): every kernel of a
sweep passes the evaluator (fp64 reference at the timed shape and at the
holdout shapes). A chain the template does not cover (a max pool after the
convolution) keeps no keys, so no template claims it.

Run by CTest (test conv_class) with KEVOLVE_BIN and KEVOLVE_HOME; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_conv_class.py
"""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import ImportedClassTest  # noqa: E402

MODULE = """import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
C = 12
L = 37


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = {conv}
        self.scale = nn.Parameter(torch.randn({channel_shape}))
        self.gn = nn.GroupNorm(4, {out_channels})

    def forward(self, x):
        return {body}


def get_inputs():
    return [torch.randn({input_shape})]


def get_init_inputs():
    return []
"""
# name: (conv module, input shape, out channels, forward body over y = self.conv(x), expected keys)
CASES = {
    # strided sizes are even: the importer fits flop counts as polynomials of the sizes
    "conv1d_stride_pad": ("nn.Conv1d(C, 16, 5, stride=2, padding=3)", "N, C, 40", 16, "torch.relu(y)",
                          {"transposed": 0, "stride": "2", "padding": "3", "row": "none"}),
    "conv2d_dilated_no_bias": ("nn.Conv2d(C, 20, 3, padding=2, dilation=2, bias=False)", "N, C, L, 23", 20, "y",
                               {"dilation": "2,2", "row": "none", "expr": None}),
    "conv2d_grouped_scale": ("nn.Conv2d(C, 24, (3, 2), groups=3)", "N, C, L, 19", 24, "torch.sigmoid(y * self.scale)",
                             {"groups": 3, "row": "none"}),
    # groups as a number (the importer does not yet vary a groups count tied to a size symbol)
    "conv2d_depthwise": ("nn.Conv2d(12, 12, 3, padding=1, groups=12)", "N, 12, L, 21", 12, "y - 0.5", {"groups": 12}),
    "conv2d_pointwise_gelu": ("nn.Conv2d(C, 40, 1)", "N, C, L, 17", 40, "F.gelu(y)", {"row": "none"}),
    "conv3d_leaky": ("nn.Conv3d(C, 8, 3, stride=(1, 2, 2))", "N, C, 7, 12, 14", 8,
                     "F.leaky_relu(y, 0.2) + self.scale", {"stride": "1,2,2"}),
    "conv_transpose1d": ("nn.ConvTranspose1d(C, 12, 4, stride=3, padding=1, output_padding=2)", "N, C, L", 12,
                         "torch.clamp(y, min=-0.5)", {"transposed": 1, "stride": "3", "output_padding": "2"}),
    "conv_transpose2d_groups": ("nn.ConvTranspose2d(C, 16, 3, stride=2, padding=1, output_padding=1, groups=2)",
                                "N, C, 9, 14", 16, "y / 2.0", {"transposed": 1, "groups": 2}),
    "conv_transpose3d": ("nn.ConvTranspose3d(C, 8, 2, stride=2)", "N, C, 5, 6, 7", 8, "torch.tanh(y)",
                         {"transposed": 1, "stride": "2,2,2"}),
    "conv2d_global_avg_pool": ("nn.Conv2d(C, 16, 3)", "N, C, L, 25", 16,
                               "F.adaptive_avg_pool2d(F.gelu(y), 1).squeeze(-1).squeeze(-1)", {"row": "mean"}),
    "conv1d_mean": ("nn.Conv1d(C, 16, 3)", "N, C, L", 16, "y.mean(dim=2)", {"row": "mean"}),
    "conv2d_group_norm": ("nn.Conv2d(C, 16, 3)", "N, C, L, 15", 16, "self.gn(torch.sigmoid(y * self.scale))",
                          {"row": "group_norm", "norm_groups": 4, "gamma": "gn_weight", "beta": "gn_bias"}),
}
NOT_COVERED = {"conv2d_max_pool": ("nn.Conv2d(C, 16, 3)", "N, C, L, 15", 16, "F.max_pool2d(y, 2)")}


def source(conv, input_shape, out_channels, body):
    dims = input_shape.count(",") - 1
    return MODULE.format(conv=conv, input_shape=input_shape, out_channels=out_channels,
                         channel_shape=", ".join([str(out_channels)] + ["1"] * dims),
                         body=f"(lambda y: {body})(self.conv(x))")


class ConvClass(ImportedClassTest):
    PREFIX = "cv_"
    CLASS = "conv"

    @classmethod
    def sources(cls):
        return {name: source(*case[:4]) for name, case in {**CASES, **NOT_COVERED}.items()}

    def test_each_names_its_template_keys(self):
        self.expect_keys({name: {"x": "x", "w": "conv_weight", **case[4]} for name, case in CASES.items()})

    def test_each_declares_its_workspace(self):
        for name in CASES:
            self.assertIn("workspace_bytes", self.operator(name), name)

    def test_a_chain_it_does_not_cover_becomes_a_sequence_of_parts(self):
        """No conv keys of its own: the conv is the first part of a `sequence`
        (tests/cli/test_sequence_class.py sweeps such chains)."""
        op = self.operator("conv2d_max_pool", "sequence")
        self.assertNotIn("x", op.get("template") or {})
        self.assertEqual(op["parts"][0]["class"], "conv")
        self.assertIn("x", op["parts"][0]["template"])

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        self.expect_served(list(CASES))


if __name__ == "__main__":
    unittest.main()
