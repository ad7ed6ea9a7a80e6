#!/usr/bin/python3
"""Reduce-then-broadcast normalizations along any axis on operators
kevolve has never seen: softmax and log_softmax along a leading or middle
axis of 3-D and 4-D inputs, and an input divided by its L1 or L2 norm over
one axis or a run of adjacent axes (x / x.norm(p, dim, keepdim=True),
F.normalize with its eps), each written as a KernelBench-style file at odd
sizes, are imported (`kevolve ops import`), classified `row_reduction`
with template keys (`stat`, `axis_first`, `axis_last`, `pre`, `post`) and
served by the builtin synthesizer on cpu (template cpu/axis_normalize):
every kernel of a sweep passes the evaluator (fp64 reference at the timed
shape and at the holdout shapes). A 2-D softmax over its last axis keeps
the row template (`reduction: softmax`).

Run by CTest (test axis_normalize) with KEVOLVE_BIN and KEVOLVE_HOME; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_axis_normalize.py
"""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import ImportedClassTest, forward_module  # noqa: E402

X3, X4, X2 = "torch.randn(B, C, L) * 3", "torch.randn(B, C, 5, L)", "torch.randn(C, L)"
# name: (body, inputs, expected template keys)
CASES = {
    "softmax_middle": ("torch.softmax(x, dim=1)", X3,
                       {"stat": "logsumexp", "axis_first": 1, "axis_last": 1, "post": "expf(x - s)"}),
    "log_softmax_first": ("torch.log_softmax(x, dim=0)", X3,
                          {"stat": "logsumexp", "axis_first": 0, "axis_last": 0, "post": "x - s"}),
    "softmax_last_4d": ("torch.nn.functional.softmax(x, dim=-1)", X4, {"stat": "logsumexp", "axis_first": 3, "axis_last": 3}),
    "l2_by_norm": ("x / x.norm(p=2, dim=1, keepdim=True)", X3,
                   {"stat": "sum", "axis_first": 1, "axis_last": 1, "pre": "x * x", "post": "x / sqrtf(s)"}),
    "l1_over_two_axes": ("x / x.norm(p=1, dim=(1, 2), keepdim=True)", X4,
                         {"stat": "sum", "axis_first": 1, "axis_last": 2, "pre": "fabsf(x)", "post": "x / s"}),
    "f_normalize_l2": ("torch.nn.functional.normalize(x, p=2, dim=2)", X3,
                       {"stat": "sum", "axis_first": 2, "axis_last": 2, "post": "x / fmaxf(sqrtf(s), 1e-12f)"}),
}
ROW = {"softmax_rows_2d": ("torch.softmax(x, dim=1)", X2)}


class AxisNormalize(ImportedClassTest):
    PREFIX = "an_"
    CLASS = "row_reduction"

    @classmethod
    def sources(cls):
        cases = {**CASES, **ROW}
        return {n: forward_module("x", b, x, B=4, C=24, L=333) for n, (b, x, *_) in cases.items()}

    def test_each_names_its_template_keys(self):
        self.expect_keys({name: case[2] for name, case in CASES.items()})

    def test_a_2d_softmax_over_rows_keeps_the_row_template(self):
        self.assertEqual((self.operator("softmax_rows_2d").get("template") or {}).get("reduction"), "softmax")

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        self.expect_served(list(CASES))


if __name__ == "__main__":
    unittest.main()
