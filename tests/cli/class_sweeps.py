"""What the class-template tests share (test_elementwise_functions.py,
test_axis_reductions.py, test_matmul_class.py, test_conv_class.py,
test_norms_and_losses.py, test_pooling_class.py, test_scan_class.py,
test_segment_class.py): KernelBench-style files written from a module
template, imported with `kevolve ops import`, then one builtin cpu sweep
of them whose node statuses the test checks."""
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import h5py
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve")
HOME = Path(os.environ.get("KEVOLVE_HOME") or ROOT)
# The backend the sweeps run on: cpu in CI; KEVOLVE_CLASS_BACKEND=cuda runs the
# same generated problems through the cuda templates on a GPU node
# (bench/cuda_classes.sh).
BACKEND = os.environ.get("KEVOLVE_CLASS_BACKEND", "cpu")

# eval::status (src/eval/status.h) as the store keeps it
STATUS = ["ok", "compile_failed", "wrong_result", "runtime_failed", "timeout", "crashed", "suspicious", "skipped",
          "compile_only"]


FORWARD_MODULE = """import torch
import torch.nn as nn

{sizes}


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


def forward_module(args, body, inputs, **sizes):
    """A KernelBench-style file whose forward(args) returns body, inputs the
    text of get_inputs()'s list, sizes its globals (B=96, ...)."""
    return FORWARD_MODULE.format(sizes="\n".join(f"{k} = {v}" for k, v in sizes.items()), args=args, body=body,
                                 inputs=inputs)


def kevolve(*args, timeout=900):
    return subprocess.run([str(BIN), *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, KEVOLVE_HOME=str(HOME), OMP_NUM_THREADS="1"))


def describe(p):
    return f"exit {p.returncode}\n--- stdout ---\n{p.stdout[-3000:]}\n--- stderr ---\n{p.stderr[-3000:]}"


def imported_yamls(stdout):
    """{file: its YAML} of the files an `ops import` call imported (its
    lines `imported: YAML (...) from FILE`)."""
    return {line.rsplit(" from ", 1)[1]: Path(line.split(" ")[1])
            for line in stdout.splitlines() if line.startswith("imported: ")}


def import_all(sources, directory, prefix):
    """{name: the result of importing it} of each {name: file text}, written
    to directory/<prefix><name>.py and imported, all in one `ops import`
    call, into directory/ops. A result has the call's stdout and stderr,
    `yaml` (None where the file was not imported) and returncode 0 where it
    was, else the call's (nonzero) exit code."""
    directory = Path(directory)
    files = {}
    for name, text in sources.items():
        f = directory / f"{prefix}{name}.py"
        f.write_text(text)
        files[name] = f
    p = kevolve("ops", "import", *files.values(), "--out", directory / "ops")
    yamls = imported_yamls(p.stdout)
    results = {}
    for name, f in files.items():
        r = subprocess.CompletedProcess(p.args, 0 if str(f) in yamls else (p.returncode or 1), p.stdout, p.stderr)
        r.yaml = yamls.get(str(f))
        results[name] = r
    return results


def sweep_statuses(test, yamls, directory):
    """{task id: [(status, reason) of each node]} of a builtin sweep on
    BACKEND of the operator files (2 evaluations per task); fails `test`
    where the run fails."""
    directory = Path(directory)
    cfg = directory / "sweep.yaml"
    cfg.write_text(f"""sweep:
  operators: [{", ".join(str(y) for y in yamls)}]
  variants: all
  backends: [{BACKEND}]
  synthesizer: builtin
search:
  stop: {{max_evaluations: 2}}
evaluator:
  threads: 1
  budget: 0.02
  torch_compile: off
{"  ncu: off" if BACKEND != "cpu" else ""}
""")
    p = kevolve("run", cfg, "--store", directory / "s.h5")
    test.assertEqual(p.returncode, 0, describe(p))
    served = {}
    with h5py.File(directory / "s.h5", "r") as h:
        for t in h["tasks"].values():
            tid = t.attrs["id"]
            tid = tid.decode() if isinstance(tid, bytes) else tid
            nodes, text = t["nodes"][()], t["text"][()]
            served[tid] = [(STATUS[int(n["status"])],
                            bytes(text[n["reason_offset"]:n["reason_offset"] + n["reason_length"]]).decode())
                           for n in nodes]
    return served


def expect_every_kernel_ok(test, served):
    for tid, statuses in sorted(served.items()):
        with test.subTest(task=tid):
            kernels = statuses[1:]  # the root is no kernel
            test.assertTrue(kernels, f"{tid}: no kernel was written")
            test.assertTrue(all(s == "ok" for s, _ in kernels),
                            f"{tid}: " + "; ".join(f"{s}{': ' + r[:300] if s != 'ok' else ''}" for s, r in kernels))


class ImportedClassTest(unittest.TestCase):
    """A class template's test over generated files: `sources()` gives
    {name: file text}; setUpClass imports them all as PREFIX<name> (class
    CLASS), `operator(name)` reads one back, `expect_keys` checks their
    template keys and `expect_served` one builtin cpu sweep of them."""
    PREFIX = ""
    CLASS = ""

    @classmethod
    def sources(cls):
        raise NotImplementedError

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "ops"
        cls.imports = import_all(cls.sources(), cls.tmp.name, cls.PREFIX)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def operator(self, name, op_class=None):
        """The imported YAML of `name`, checked to be of `op_class` (default
        CLASS; "" checks none)."""
        p = self.imports[name]
        self.assertEqual(p.returncode, 0, describe(p))
        op = yaml.safe_load(p.yaml.read_text())
        want = self.CLASS if op_class is None else op_class
        if want:
            self.assertEqual(op["class"], want, op.get("graph"))
        return op

    def expect_keys(self, expected):
        """expected: {name: {template key: value (None: absent)}}."""
        for name, keys in expected.items():
            with self.subTest(case=name):
                op = self.operator(name)
                t = op.get("template") or {}
                for key, want in keys.items():
                    self.assertEqual(t.get(key), want, f"template.{key} of {t}")

    def expect_served(self, names):
        yamls = [self.imports[n].yaml for n in names if self.imports[n].returncode == 0]
        self.assertEqual(len(yamls), len(names))
        served = sweep_statuses(self, yamls, self.tmp.name)
        self.assertEqual(len(served), len(names), sorted(served))
        expect_every_kernel_ok(self, served)
