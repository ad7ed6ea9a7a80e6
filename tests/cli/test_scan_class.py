#!/usr/bin/python3
"""Scans on operators kevolve has never seen: cumsum and cumprod along the
last axis, a middle axis and the first, reversed (through flips), a masked
cumsum (a pointwise prologue over two inputs), an exclusive cumsum written
as cumsum(x) - x (an epilogue over the scan and the inputs) and a scan
under a pointwise epilogue, each written as a KernelBench-style file at odd
sizes (rows shorter and longer than a vector), are imported (`kevolve ops
import`), classified `scan` with their keys, and served by the builtin
synthesizer on cpu (template cpu/scan): every kernel of a sweep passes the
evaluator (fp64 reference at the timed shape and at the holdout shapes).
A logcumsumexp keeps no keys, so no template claims it.

Run by CTest (test scan_class) with KEVOLVE_BIN and KEVOLVE_HOME; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_scan_class.py
"""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import ImportedClassTest, forward_module  # noqa: E402

# name: (forward args, body, inputs, expected keys)
CASES = {
    "cumsum_last": ("x", "torch.cumsum(x, dim=1)", "torch.randn(B, L)", {"op": "sum", "axis": 1, "reverse": 0}),
    "cumsum_middle": ("x", "torch.cumsum(x, dim=1)", "torch.randn(3, 37, 19)", {"op": "sum", "axis": 1}),
    "cumprod_first": ("x", "torch.cumprod(x, dim=0)", "torch.rand(21, 5, 3) + 0.5", {"op": "prod", "axis": 0}),
    "cumprod_last": ("x", "torch.cumprod(x, dim=-1)", "torch.rand(B, 29) + 0.5", {"op": "prod", "axis": 1}),
    "reverse_cumsum": ("x", "torch.cumsum(x.flip(1), dim=1).flip(1)", "torch.randn(B, L)",
                       {"op": "sum", "axis": 1, "reverse": 1}),
    "reverse_middle": ("x", "torch.cumsum(x.flip(1), 1).flip(1)", "torch.randn(3, 37, 19)", {"reverse": 1, "axis": 1}),
    "masked_cumsum": ("x, mask", "torch.cumsum(x * mask, dim=1)", "torch.randn(B, L), (torch.rand(B, L) > 0.5).float()",
                      {"op": "sum", "expr": "(x * mask)"}),
    "exclusive_cumsum": ("x", "torch.cumsum(x, dim=1) - x", "torch.randn(B, L)", {"op": "sum", "post": "(acc - x)"}),
    "scaled_cumsum": ("x", "torch.sigmoid(torch.cumsum(x, dim=1)) * 2.0", "torch.randn(B, 11)",
                      {"post": "(sigmoidf(acc) * 2.0f)"}),
}
NOT_COVERED = {"logcumsumexp": ("x", "torch.logcumsumexp(x, dim=1)", "torch.randn(B, L)")}


class ScanClass(ImportedClassTest):
    PREFIX = "sc_"
    CLASS = "scan"

    @classmethod
    def sources(cls):
        return {n: forward_module(a, b, i, B=7, L=203) for n, (a, b, i, *_) in {**CASES, **NOT_COVERED}.items()}

    def test_each_names_its_template_keys(self):
        self.expect_keys({name: case[3] for name, case in CASES.items()})

    def test_a_logcumsumexp_keeps_no_keys(self):
        self.assertNotIn("op", self.operator("logcumsumexp").get("template") or {})

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        self.expect_served(list(CASES))


if __name__ == "__main__":
    unittest.main()
