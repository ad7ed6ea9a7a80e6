#!/usr/bin/python3
"""Reductions over axes on operators kevolve has never seen: sum, mean,
amax, amin and prod of a tensor over one axis (first, middle, last, keepdim
or not), over a run of adjacent axes and over all of them, each written as
a KernelBench-style file, are imported (`kevolve ops import`), classified
`row_reduction` with template.reduction and the axes, and served by the
builtin synthesizer on cpu (template cpu/axis_reduction): every kernel of a
sweep passes the evaluator (fp64 reference at the timed shape and at the
holdout shapes, odd sizes). A reduction the template does not cover (two
outputs: torch.max with a dim) keeps no axes, so no template claims it.
The timed shape (10 MB a set) is rotated past the caches, as a user's
tensors of this size would be.

Run by CTest (test axis_reductions) with KEVOLVE_BIN and KEVOLVE_HOME;
by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_axis_reductions.py
"""
import sys
import tempfile
import unittest
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import describe, expect_every_kernel_ok, import_all, sweep_statuses  # noqa: E402

UNIFORM = "torch.rand(B, C, L)"
NEAR_ONE = "torch.rand(B, C, L) * 0.2 + 0.9"
# name: (forward body over x, the input get_inputs draws, expected (reduction, first axis, last axis))
REDUCTIONS = {
    "sum_middle_keepdim": ("torch.sum(x, dim=1, keepdim=True)", UNIFORM, ("sum", 1, 1)),
    "sum_last": ("x.sum(-1)", UNIFORM, ("sum", 2, 2)),
    "mean_first": ("torch.mean(x, dim=0)", UNIFORM, ("mean", 0, 0)),
    "amax_last": ("torch.amax(x, dim=2)", "torch.randn(B, C, L)", ("amax", 2, 2)),
    "amin_middle": ("torch.amin(x, dim=1, keepdim=True)", "torch.randn(B, C, L)", ("amin", 1, 1)),
    "prod_middle": ("torch.prod(x, dim=1)", NEAR_ONE, ("prod", 1, 1)),
    "sum_two_axes": ("torch.sum(x, dim=(1, 2))", UNIFORM, ("sum", 1, 2)),
    "mean_all": ("torch.mean(x)", UNIFORM, ("mean", 0, 2)),
}
NOT_COVERED = {"max_with_indices": ("torch.max(x, dim=1)[0]", UNIFORM)}

MODULE = """import torch
import torch.nn as nn

B = 64
C = 37
L = 1029


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
"""


class AxisReductions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.out = d / "ops"
        cases = {**{k: (b, i) for k, (b, i, _) in REDUCTIONS.items()}, **NOT_COVERED}
        cls.imports = import_all({name: MODULE.format(body=body, inputs=inputs) for name, (body, inputs) in cases.items()},
                                 d, "ax_")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def template(self, name):
        p = self.imports[name]
        self.assertEqual(p.returncode, 0, describe(p))
        op = yaml.safe_load(p.yaml.read_text())
        self.assertEqual(op["class"], "row_reduction", op.get("graph"))
        return op.get("template") or {}

    def test_each_names_its_reduction_and_axes(self):
        for name, (_, _, (kind, first, last)) in REDUCTIONS.items():
            with self.subTest(reduction=name):
                t = self.template(name)
                self.assertEqual((t.get("reduction"), t.get("axis_first"), t.get("axis_last")), (kind, first, last), t)

    def test_a_reduction_with_indices_is_not_claimed(self):
        self.assertNotIn("axis_first", self.template("max_with_indices"))

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        yamls = [self.imports[n].yaml for n in REDUCTIONS if self.imports[n].returncode == 0]
        self.assertEqual(len(yamls), len(REDUCTIONS))
        served = sweep_statuses(self, yamls, self.tmp.name)
        self.assertEqual(len(served), len(REDUCTIONS), sorted(served))
        expect_every_kernel_ok(self, served)


if __name__ == "__main__":
    unittest.main()
