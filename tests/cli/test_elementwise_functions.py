#!/usr/bin/python3
"""The elementwise class on operators kevolve has never seen: each of the
scalar functions PyTorch users reach for, written as a KernelBench-style
file, is imported (`kevolve ops import`), classified `elementwise` with a
`template.expr`, and served by the builtin synthesizer on cpu: a sweep's
kernels of every one of them pass the evaluator (fp64 reference at the
timed shape and at the holdout shapes, odd sizes).

Run by CTest (test elementwise_functions) with KEVOLVE_BIN and KEVOLVE_HOME;
by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_elementwise_functions.py
"""
import os
import subprocess
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import h5py
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve")
HOME = Path(os.environ.get("KEVOLVE_HOME") or ROOT)

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
}

# eval::status (src/eval/status.h) as the store keeps it
STATUS = ["ok", "compile_failed", "wrong_result", "runtime_failed", "timeout", "crashed", "suspicious", "skipped",
          "compile_only"]

MODULE = """import torch
import torch.nn as nn

B = 96
N = 517


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {args}):
        return {body}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
"""


def kevolve(*args, timeout=900):
    return subprocess.run([str(BIN), *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, KEVOLVE_HOME=str(HOME), OMP_NUM_THREADS="1"))


def describe(p):
    return f"exit {p.returncode}\n--- stdout ---\n{p.stdout[-3000:]}\n--- stderr ---\n{p.stderr[-3000:]}"


class ElementwiseFunctions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.out = d / "ops"
        files = []
        for name, (body, inputs) in FUNCTIONS.items():
            f = d / f"{name}.py"
            f.write_text(MODULE.format(args=", ".join("xy"[:len(inputs)]), body=body, inputs=", ".join(inputs)))
            files.append(f)
        with ThreadPoolExecutor(2) as pool:
            cls.imports = dict(zip(FUNCTIONS, pool.map(
                lambda f: kevolve("ops", "import", f, "--name", "ew_" + f.stem,
                                  "--out", cls.out), files)))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_each_is_elementwise_with_an_expression(self):
        for name in FUNCTIONS:
            with self.subTest(function=name):
                p = self.imports[name]
                self.assertEqual(p.returncode, 0, describe(p))
                op = yaml.safe_load((self.out / f"ew_{name}.yaml").read_text())
                self.assertEqual(op["class"], "elementwise", op.get("graph"))
                self.assertTrue((op.get("template") or {}).get("expr"), f"{name}: no template.expr ({op.get('graph')})")

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        yamls = [self.out / f"ew_{n}.yaml" for n in FUNCTIONS if self.imports[n].returncode == 0]
        self.assertEqual(len(yamls), len(FUNCTIONS))
        d = Path(self.tmp.name)
        cfg = d / "sweep.yaml"
        cfg.write_text(f"""sweep:
  operators: [{", ".join(str(y) for y in yamls)}]
  variants: all
  backends: [cpu]
  synthesizer: builtin
search:
  stop: {{max_evaluations: 2}}
evaluator:
  threads: 1
  budget: 0.02
  torch_compile: off
""")
        p = kevolve("run", cfg, "--store", d / "s.h5")
        self.assertEqual(p.returncode, 0, describe(p))
        served = {}
        with h5py.File(d / "s.h5", "r") as h:
            for t in h["tasks"].values():
                tid = t.attrs["id"]
                tid = tid.decode() if isinstance(tid, bytes) else tid
                nodes = t["nodes"][()]
                served[tid] = [STATUS[int(s)] for s in nodes["status"]]
        self.assertEqual(len(served), len(FUNCTIONS), sorted(served))
        for tid, statuses in sorted(served.items()):
            with self.subTest(task=tid):
                kernels = statuses[1:]  # the root is no kernel
                self.assertTrue(kernels, f"{tid}: no kernel was written")
                self.assertTrue(all(s == "ok" for s in kernels), f"{tid}: {statuses}")


if __name__ == "__main__":
    unittest.main()
