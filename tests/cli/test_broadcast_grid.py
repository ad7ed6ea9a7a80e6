#!/usr/bin/python3
"""The elementwise class over a generated grid of small problems: output
ranks 1 to 5 at odd sizes, each operator with a full-shape input and
inputs of the NumPy broadcast patterns (a scalar, a row, a column, a
channel, missing leading dims, every other dim of 1), expressions that
mix the functions users reach for, in fp32 and in bf16 or fp16 storage.
The operators are written as YAML (torch expression as the reference,
template.expr for the builtin synthesizer), and one builtin cpu sweep
checks that every kernel of template cpu/elementwise passes the evaluator
at the timed shape and at holdout shapes that set other sizes, 1 among
them. The cuda and hip elementwise templates, which read inputs of the
output's shape or rows only, refuse the other patterns, naming the input.

Run by CTest (test broadcast_grid) with KEVOLVE_BIN and KEVOLVE_HOME; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_broadcast_grid.py
"""
import sys
import tempfile
import unittest
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import describe, expect_every_kernel_ok, kevolve, sweep_statuses  # noqa: E402

TIMED = [7, 5, 3, 9, 131]
HOLDOUTS = [[2, 1, 5, 3, 17], [1, 3, 1, 1, 1]]


def pattern(rank, kind):
    """The shape (symbols and 1s) of a broadcast input of this kind."""
    dims = [f"D{d}" for d in range(rank)]
    if kind == "full":
        return dims
    if kind == "scalar":
        return [1]  # kevolve's tensors have rank >= 1: a scalar is [1]
    if kind == "ones":
        return [1] * rank
    if kind == "row":
        return dims[-1:]
    if kind == "column":
        return dims[:-1] + [1]
    if kind == "channel":
        return [dims[1]] + [1] * (rank - 2)  # [C, 1, ..] against [N, C, ..]
    if kind == "leading":
        return dims[1:]
    if kind == "alternate":
        return [d if i % 2 else 1 for i, d in enumerate(dims)]
    raise ValueError(kind)


# (rank, broadcast patterns of inputs a, b, c, template expr, torch expr, variants)
GRID = [
    (1, ["scalar", "full", "ones"], "expf(-fabsf(x)) * a + b - c", "torch.exp(-x.abs()) * a + b - c", ["fp32", "bf16"]),
    (2, ["row", "column", "scalar"], "tanhf(x * a) + b * c", "torch.tanh(x * a) + b * c", ["fp32", "fp16"]),
    (2, ["column", "ones", "full"], "fmaxf(x, b) * sigmoidf(a) - c", "torch.maximum(x, b) * torch.sigmoid(a) - c",
     ["fp32"]),
    (3, ["channel", "leading", "alternate"], "0.5f * x * (1.0f + erff(x * 0.70710678f)) * a + b * c",
     "F.gelu(x) * a + b * c", ["fp32", "bf16"]),
    (3, ["column", "row", "scalar"], "log1pf(fabsf(x)) + sqrtf(fabsf(a)) * b + c",
     "torch.log1p(x.abs()) + a.abs().sqrt() * b + c", ["fp32"]),
    (4, ["channel", "alternate", "column"], "x / (1.0f + expf(-x)) * a + fminf(b, c)",
     "F.silu(x) * a + torch.minimum(b, c)", ["fp32", "bf16"]),
    (4, ["leading", "row", "ones"], "(x > 0.0f ? x : 0.1f * x) + a * b - c", "F.leaky_relu(x, 0.1) + a * b - c",
     ["fp32"]),
    (5, ["alternate", "channel", "leading"], "fminf(fmaxf(x + a, -1.0f), 1.0f) * b + c",
     "torch.clamp(x + a, -1.0, 1.0) * b + c", ["fp32", "fp16"]),
    (5, ["column", "scalar", "full"], "powf(fabsf(x), 1.5f) * a + b / (1.0f + c * c)",
     "x.abs().pow(1.5) * a + b / (1.0 + c * c)", ["fp32"]),
]
TOLERANCE = {"fp32": {"atol": 2.0e-5, "rtol": 2.0e-5}, "bf16": {"atol": 2.0e-2, "rtol": 1.6e-2},
             "fp16": {"atol": 2.0e-3, "rtol": 2.0e-3}}


def operator(i, rank, kinds, expr, torch_expr, variants):
    shapes = {"x": pattern(rank, "full"), **{n: pattern(rank, k) for n, k in zip("abc", kinds)}}
    syms = [f"D{d}" for d in range(rank)]

    def numel(shape):
        return "*".join(str(d) for d in shape) or "1"
    return {
        "name": f"bg_{i}_rank{rank}",
        "class": "elementwise",
        "description": f"rank {rank}: x full, a {kinds[0]}, b {kinds[1]}, c {kinds[2]}",
        "variants": {v: {"T": v} for v in variants},
        "symbols": syms,
        "inputs": [{"name": n, "dtype": "T", "shape": s} for n, s in shapes.items()],
        "outputs": [{"name": "y", "dtype": "T", "shape": syms}],
        "params": [],
        "generators": {n: [{"dist": "normal", "mean": 0, "std": 1}, {"dist": "uniform", "low": -3, "high": 3}]
                       for n in shapes},
        "shapes": [{"name": "odd", **dict(zip(syms, TIMED[-rank:]))}],
        "holdout_shapes": [{"name": f"holdout_{j}", **dict(zip(syms, h[-rank:]))} for j, h in enumerate(HOLDOUTS)],
        "bytes": " + ".join(f"{numel(s)} * sizeof(T)" for s in list(shapes.values()) + [syms]),
        "flops": f"8 * {numel(syms)}",
        "tolerance": {v: TOLERANCE[v] for v in variants},
        "torch": torch_expr,
        "template": {"expr": expr},
    }


class BroadcastGrid(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)
        cls.yamls = []
        for i, case in enumerate(GRID):
            op = operator(i, *case)
            y = cls.dir / f"{op['name']}.yaml"
            y.write_text(yaml.safe_dump(op, sort_keys=False))
            cls.yamls.append(y)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_operator_validates(self):
        for y in self.yamls:
            p = kevolve("ops", "validate", y)
            self.assertEqual(p.returncode, 0, describe(p))

    def test_every_rank_and_pattern_gets_correct_cpu_kernels(self):
        served = sweep_statuses(self, self.yamls, self.dir)
        self.assertEqual(len(served), sum(len(c[-1]) for c in GRID), sorted(served))
        expect_every_kernel_ok(self, served)


if __name__ == "__main__":
    unittest.main()
