#!/usr/bin/python3
"""Segment reductions over jagged offsets on operators kevolve has never
seen: torch.segment_reduce along axis 0 by an offsets input, sum, mean
(empty segments NaN), max, min, prod, with `initial`, over values of rank
2 and 3 with odd widths, each written as a KernelBench-style file, are
imported (`kevolve ops import`), classified `jagged` with their keys and
offsets generators (segments up to twice the mean, and a heavy skew with
most segments empty), and served by the builtin synthesizer on cpu
(template cpu/segment_reduce): every kernel of a sweep passes the
evaluator (fp64 reference at the timed shape and at the holdout shapes).
A reduction by lengths is refused at import, saying what is expected.

Run by CTest (test segment_class) with KEVOLVE_BIN and KEVOLVE_HOME; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_segment_class.py
"""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import ImportedClassTest  # noqa: E402

MODULE = """import torch
import torch.nn as nn

B = 67
NNZ = 1500
D = 33


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, values, offsets):
        return torch.segment_reduce(values, "{reduce}", {by}=offsets, axis=0{extra})


def get_inputs():
    offsets = torch.sort(torch.randint(0, NNZ + 1, (B + 1,))).values
    offsets[0], offsets[-1] = 0, NNZ
    return [{values}, offsets{lengths}]


def get_init_inputs():
    return []
"""


def case(reduce, values="torch.randn(NNZ, D)", extra="", by="offsets"):
    return MODULE.format(reduce=reduce, values=values, extra=extra, by=by,
                         lengths="[1:] - offsets[:-1]" if by == "lengths" else "")


CASES = {
    "sum": (case("sum"), {"reduce": "sum", "values": "values", "offsets": "offsets", "initial": None}),
    "mean": (case("mean"), {"reduce": "mean"}),
    "max": (case("max"), {"reduce": "max"}),
    "min_3d": (case("min", "torch.randn(NNZ, 3, 7)"), {"reduce": "min"}),
    "prod": (case("prod", "torch.rand(NNZ, D) + 0.5"), {"reduce": "prod"}),
    "mean_initial": (case("mean", extra=", initial=0.5"), {"reduce": "mean", "initial": 0.5}),
}
NOT_COVERED = {"by_lengths": case("sum", by="lengths")}


class SegmentClass(ImportedClassTest):
    PREFIX = "sg_"
    CLASS = "jagged"

    @classmethod
    def sources(cls):
        return {**{n: c[0] for n, c in CASES.items()}, **NOT_COVERED}

    def test_each_names_its_template_keys(self):
        self.expect_keys({name: case[1] for name, case in CASES.items()})

    def test_offsets_are_drawn_as_segment_offsets_with_empty_segments(self):
        gens = self.operator("sum")["generators"]["offsets"]
        self.assertEqual([g["dist"] for g in gens], ["offsets", "offsets"], gens)
        self.assertEqual(gens[0]["total"], "NNZ", gens)

    def test_a_reduction_by_lengths_is_refused_plainly(self):
        p = self.imports["by_lengths"]
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("expected segments given by `offsets`", p.stderr)

    def test_the_builtin_sweep_serves_each_with_correct_kernels(self):
        self.expect_served(list(CASES))


if __name__ == "__main__":
    unittest.main()
