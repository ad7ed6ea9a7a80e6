#!/usr/bin/python3
"""Max and average pooling on operators kevolve has never seen: 1-D, 2-D
and 3-D; stride, padding, dilation (max), ceil_mode, count_include_pad and
divisor_override (average), each written as a KernelBench-style file at odd
sizes, are imported (`kevolve ops import`), classified `pooling` with the
geometry as template keys, and served by the builtin synthesizer on cpu
(template cpu/pooling): every kernel of a sweep passes the evaluator (fp64
reference at the timed shape and at the holdout shapes). An adaptive pool
keeps no keys, so no template claims it.

Run by CTest (test pooling_class) with KEVOLVE_BIN and KEVOLVE_HOME; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_pooling_class.py
"""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import ImportedClassTest  # noqa: E402

MODULE = """import torch
import torch.nn as nn
import torch.nn.functional as F

N = 3
C = 5
L = 301


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}


def get_inputs():
    return [torch.randn({shape})]


def get_init_inputs():
    return []
"""
# name: (forward body over x, input shape, expected keys)
CASES = {
    "avg1d_pad": ("F.avg_pool1d(x, 8, stride=1, padding=4)", "N, C, L", {"kind": "avg", "kernel": "1,8", "padding": "0,4"}),
    "avg2d_ceil_no_pad_count": ("F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)",
                                "N, C, 40, 42", {"kind": "avg", "ceil_mode": 1, "count_include_pad": 0}),
    "avg3d_divisor": ("F.avg_pool3d(x, 2, divisor_override=3)", "N, C, 6, 8, 10", {"kind": "avg", "divisor": 3}),
    "max1d_dilated": ("F.max_pool1d(x, 3, stride=2, dilation=2)", "N, C, L", {"kind": "max", "dilation": "1,2"}),
    "max2d_ceil_pad": ("F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)", "N, C, 40, 42",
                       {"kind": "max", "ceil_mode": 1, "padding": "1,1"}),
    "max3d": ("F.max_pool3d(x, (2, 3, 3), stride=(1, 2, 2))", "N, C, 6, 12, 14", {"kind": "max", "kernel": "2,3,3"}),
}
NOT_COVERED = {"adaptive_max": ("F.adaptive_max_pool2d(x, 5)", "N, C, 40, 42")}


class PoolingClass(ImportedClassTest):
    PREFIX = "pl_"
    CLASS = "pooling"

    @classmethod
    def sources(cls):
        return {n: MODULE.format(body=b, shape=s) for n, (b, s, *_) in {**CASES, **NOT_COVERED}.items()}

    def test_each_names_its_template_keys(self):
        self.expect_keys({name: case[2] for name, case in CASES.items()})

    def test_an_adaptive_pool_keeps_no_keys(self):
        self.assertNotIn("kind", self.operator("adaptive_max").get("template") or {})

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        self.expect_served(list(CASES))


if __name__ == "__main__":
    unittest.main()
