#!/usr/bin/python3
"""Forwards no one class template covers, served as a sequence of class
kernels: each written as a KernelBench-style file at odd sizes, imported
(`kevolve ops import`) as class `sequence` with its parts (a convolution
then a max pool, a matmul then a cumulative sum, an average pool then a sum
over channels, a convolution, a batch norm in training mode (batch
statistics) and an average pool, a matmul, a batch norm and a scale, a
matmul with a softmax row and a second matmul) and the
intermediates between them; a builtin cpu sweep serves each with one
candidate that runs the parts in order, and every kernel passes the
evaluator (fp64 PyTorch reference at the timed and the holdout shapes).
A forward that no chain of parts covers keeps its class and no parts.

Run by CTest (test sequence_class) with KEVOLVE_BIN and KEVOLVE_HOME; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_sequence_class.py
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
L = 37


class Model(nn.Module):
    def __init__(self):
        super().__init__()
{init}

    def forward(self, x):
        return {body}


def get_inputs():
    return [torch.randn({shape})]


def get_init_inputs():
    return []
"""
# name: (init lines, forward body over x, input shape, the parts' classes)
CASES = {
    "conv_relu_maxpool": ("        self.conv = nn.Conv2d(C, 7, 3)",
                          "F.max_pool2d(torch.relu(self.conv(x)), 2)", "N, C, 19, 23", ["conv", "pooling"]),
    "linear_cumsum": ("        self.fc = nn.Linear(L, 29)", "torch.cumsum(self.fc(x), dim=1)", "N * 11, L",
                      ["matmul", "scan"]),
    "avgpool_channel_sum": ("", "torch.sum(F.avg_pool2d(x, 2), dim=1)", "N, C, 18, 22", ["pooling", "row_reduction"]),
    "conv_batchnorm_avgpool": ("        self.conv = nn.Conv2d(C, 6, 3)\n        self.bn = nn.BatchNorm2d(6)",
                               "F.avg_pool2d(self.bn(self.conv(x)), 2)", "N, C, 17, 21", ["conv", "row_reduction", "pooling"]),
    "linear_batchnorm_rows": ("        self.fc = nn.Linear(L, 29)\n        self.bn = nn.BatchNorm1d(29)", "self.bn(self.fc(x)) * 0.5",
                              "N * 11, L", ["matmul", "row_reduction", "elementwise"]),
    "linear_softmax_linear": ("        self.a = nn.Linear(L, 31)\n        self.b = nn.Linear(31, 13)",
                              "self.b(torch.softmax(self.a(x), dim=-1))", "N * 7, L", ["matmul", "matmul"]),
}
NOT_COVERED = {"sort_then_sum": ("", "torch.sort(x, dim=-1).values.sum(dim=-1)", "N, L")}


class SequenceClass(ImportedClassTest):
    PREFIX = "sq_"
    CLASS = "sequence"

    @classmethod
    def sources(cls):
        return {n: MODULE.format(init=i or "        pass", body=b, shape=s)
                for n, (i, b, s, *_) in {**CASES, **NOT_COVERED}.items()}

    def test_each_is_a_chain_of_class_parts(self):
        for name, case in CASES.items():
            with self.subTest(case=name):
                op = self.operator(name)
                parts = op.get("parts") or []
                self.assertEqual([p["class"] for p in parts], case[3], parts)
                # Each intermediate is written by one part and read by the next.
                written = [p["outputs"] for p in parts]
                inter = [t["name"] for t in op["intermediates"]]
                self.assertEqual([w[0] for w in written[:-1]], inter)
                self.assertEqual(written[-1], [o["name"] for o in op["outputs"]])
                for k, t in enumerate(inter):
                    self.assertIn(t, parts[k + 1]["inputs"])

    def test_a_forward_no_chain_covers_keeps_no_parts(self):
        op = self.operator("sort_then_sum", "")
        self.assertNotEqual(op["class"], "sequence")
        self.assertNotIn("parts", op)

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        self.expect_served(list(CASES))


if __name__ == "__main__":
    unittest.main()
