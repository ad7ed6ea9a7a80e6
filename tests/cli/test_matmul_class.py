#!/usr/bin/python3
"""Matmuls with epilogue chains on operators kevolve has never seen: plain,
either operand transposed, batched, nn.Linear over a 3-D input, then
pointwise ops (constants, a 1-D parameter per column, GELU, swish) and a
row op (sum, mean, softmax, log_softmax, group norm), each written as a
KernelBench-style file at odd sizes, are imported (`kevolve ops import`),
classified `matmul` with the operands, transposes, epilogue expression and
row op as template keys, and served by the builtin synthesizer on cpu
(template cpu/matmul): every kernel of a sweep passes the evaluator (fp64
reference at the timed shape and at the holdout shapes). A chain the
template does not cover (a cumsum after the product) keeps no keys, so no
template claims it.

Run by CTest (test matmul_class) with KEVOLVE_BIN and KEVOLVE_HOME; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_matmul_class.py
"""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import ImportedClassTest  # noqa: E402

MODULE = """import torch
import torch.nn as nn

B = 3
M = 67
K = 129
N = 160


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
TWO = "a, b"
LINEAR = "        self.fc = nn.Linear(K, N)"
# name: (init, forward args, forward body, inputs, expected keys (None: the key is absent))
CASES = {
    "plain": ("        pass", TWO, "torch.matmul(a, b)", "torch.rand(M, K), torch.rand(K, N)",
              {"trans_a": 0, "trans_b": 0, "row": "none", "expr": None}),
    "trans_b_relu": ("        pass", TWO, "torch.relu(a @ b.T - 30.0)", "torch.rand(M, K), torch.rand(N, K)",
                     {"trans_a": 0, "trans_b": 1, "row": "none"}),
    "trans_a": ("        pass", TWO, "a.t() @ b", "torch.rand(K, M), torch.rand(K, N)",
                {"trans_a": 1, "trans_b": 0, "row": "none"}),
    "batched_scaled": ("        pass", TWO, "torch.bmm(a, b) * 0.5 + 1.0", "torch.randn(B, M, K), torch.randn(B, K, N)",
                       {"trans_a": 0, "trans_b": 0, "row": "none"}),
    "linear_3d_gelu": (LINEAR, "x", "torch.nn.functional.gelu(self.fc(x), approximate='tanh')", "torch.randn(B, M, K)",
                       {"a": "x", "b": "fc_weight", "trans_b": 1, "row": "none"}),
    "linear_sigmoid_sum": (LINEAR, "x", "torch.sigmoid(self.fc(x)).sum(dim=1, keepdim=True)", "torch.randn(M, K)",
                           {"row": "sum"}),
    "linear_mean": (LINEAR, "x", "self.fc(x).mean(-1)", "torch.randn(M, K)", {"row": "mean", "expr": "(acc + fc_bias)"}),
    "linear_softmax": (LINEAR, "x", "torch.softmax(self.fc(x) * 4.0, dim=-1)", "torch.randn(M, K)", {"row": "softmax"}),
    "linear_log_softmax": (LINEAR, "x", "torch.log_softmax(self.fc(x), dim=1)", "torch.randn(M, K)",
                           {"row": "log_softmax"}),
    "swish_bias_group_norm": (LINEAR + "\n        self.bias = nn.Parameter(torch.randn(N))\n"
                              "        self.gn = nn.GroupNorm(8, N)", "x",
                              "(lambda y: self.gn(torch.sigmoid(y) * y + self.bias))(self.fc(x))", "torch.randn(M, K)",
                              {"row": "group_norm", "groups": 8, "gamma": "gn_weight", "beta": "gn_bias"}),
}
NOT_COVERED = {"linear_cumsum": (LINEAR, "x", "torch.cumsum(self.fc(x), dim=1)", "torch.randn(M, K)")}


class MatmulClass(ImportedClassTest):
    PREFIX = "mm_"
    CLASS = "matmul"

    @classmethod
    def sources(cls):
        cases = {**CASES, **NOT_COVERED}
        return {name: MODULE.format(init=i, args=a, body=b, inputs=x) for name, (i, a, b, x, *_) in cases.items()}

    def test_each_names_its_template_keys(self):
        self.expect_keys({name: case[4] for name, case in CASES.items()})

    def test_each_names_its_operands_and_declares_its_workspace(self):
        for name in CASES:
            with self.subTest(case=name):
                op = self.operator(name)
                t = op.get("template") or {}
                self.assertIn(t.get("a"), [i["name"] for i in op["inputs"]], t)
                self.assertIn(t.get("b"), [i["name"] for i in op["inputs"]], t)
                self.assertIn("workspace_bytes", op)

    def test_a_chain_it_does_not_cover_becomes_a_sequence_of_parts(self):
        """No matmul keys of its own: the matmul is the first part of a `sequence`
        (tests/cli/test_sequence_class.py sweeps such chains)."""
        op = self.operator("linear_cumsum", "sequence")
        self.assertNotIn("a", op.get("template") or {})
        self.assertEqual(op["parts"][0]["class"], "matmul")
        self.assertIn("a", op["parts"][0]["template"])

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        self.expect_served(list(CASES))


if __name__ == "__main__":
    unittest.main()
