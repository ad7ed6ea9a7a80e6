#!/usr/bin/python3
"""The elementwise class on operators kevolve has never seen: each of the
scalar functions PyTorch users reach for, written as a KernelBench-style
file, is imported (`kevolve ops import`), classified `elementwise` with a
`template.expr`, and served by the builtin synthesizer on cpu: a sweep's
kernels of every one of them pass the evaluator (fp64 reference at the
timed shape and at the holdout shapes, odd sizes), a column and a
broadcast over a missing leading dim among them.

Run by CTest (test elementwise_functions) with KEVOLVE_BIN and KEVOLVE_HOME;
by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_elementwise_functions.py
"""
import sys
import tempfile
import unittest
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import describe, expect_every_kernel_ok, forward_module, import_all, sweep_statuses  # noqa: E402

# name: (forward body over x (and y), the inputs get_inputs draws)
POSITIVE = "torch.rand(B, N) + 0.1"
NORMAL = "torch.randn(B, N) * 2"
FUNCTIONS = {
    "log": ("torch.log(x)", [POSITIVE]),
    "log1p": ("torch.log1p(x)", [POSITIVE]),
    "log2": ("torch.log2(x)", [POSITIVE]),
    "expm1": ("torch.expm1(x)", [NORMAL]),
    "pow_scalar": ("torch.pow(x, 1.7)", [POSITIVE]),
    "pow_square": ("x ** 2 + x ** 3", [NORMAL]),
    "pow_tensor": ("torch.pow(x, y)", [POSITIVE, "torch.randn(B, N)"]),
    "rsqrt": ("torch.rsqrt(x)", [POSITIVE]),
    "reciprocal": ("torch.reciprocal(x)", [POSITIVE]),
    "softplus": ("torch.nn.functional.softplus(x, beta=2.0)", ["torch.randn(B, N) * 20"]),
    "mish": ("torch.nn.functional.mish(x)", [NORMAL]),
    "silu": ("torch.nn.functional.silu(x)", [NORMAL]),
    "selu": ("torch.selu(x)", [NORMAL]),
    "celu": ("torch.celu(x, alpha=0.5)", [NORMAL]),
    "hardswish": ("torch.nn.functional.hardswish(x)", ["torch.randn(B, N) * 4"]),
    "hardsigmoid": ("torch.nn.functional.hardsigmoid(x)", ["torch.randn(B, N) * 4"]),
    "hardtanh": ("torch.nn.functional.hardtanh(x, -0.5, 2.0)", [NORMAL]),
    "gelu_tanh": ("torch.nn.functional.gelu(x, approximate='tanh')", [NORMAL]),
    "erf": ("torch.erf(x)", [NORMAL]),
    "sin_cos": ("torch.sin(x) * torch.cos(y)", [NORMAL, NORMAL]),
    "maximum": ("torch.maximum(x, y) - torch.minimum(x, y)", [NORMAL, NORMAL]),
    "rsub": ("1.0 - torch.sigmoid(x)", [NORMAL]),
    "floor_ceil": ("torch.floor(x) + torch.ceil(y)", [NORMAL, NORMAL]),
    # broadcasts other than a bias row (tests/cli/test_broadcast_grid.py has every pattern)
    "column_scale": ("torch.sigmoid(x) * y", [NORMAL, "torch.randn(B, 1)"]),
    "leading_scale": ("x * y - 1.0", ["torch.randn(3, B, N)", "torch.randn(B, 1)"]),
}


class ElementwiseFunctions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.out = d / "ops"
        cls.imports = import_all({name: forward_module(", ".join("xy"[:len(inputs)]), body, ", ".join(inputs), B=96, N=517)
                                  for name, (body, inputs) in FUNCTIONS.items()}, d, "ew_")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_each_is_elementwise_with_an_expression(self):
        for name in FUNCTIONS:
            with self.subTest(function=name):
                p = self.imports[name]
                self.assertEqual(p.returncode, 0, describe(p))
                op = yaml.safe_load(p.yaml.read_text())
                self.assertEqual(op["class"], "elementwise", op.get("graph"))
                self.assertTrue((op.get("template") or {}).get("expr"), f"{name}: no template.expr ({op.get('graph')})")

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        yamls = [self.imports[n].yaml for n in FUNCTIONS if self.imports[n].returncode == 0]
        self.assertEqual(len(yamls), len(FUNCTIONS))
        served = sweep_statuses(self, yamls, self.tmp.name)
        self.assertEqual(len(served), len(FUNCTIONS), sorted(served))
        expect_every_kernel_ok(self, served)


if __name__ == "__main__":
    unittest.main()
