#!/usr/bin/python3
"""A sweep on backend hip on a node without an AMD GPU: the builtin HIP
templates are compiled for gfx90a and gfx940 and checked, every verdict is
compile_only (or compile_failed), no fitness is recorded and the summary
claims no speedup.

Run by CTest (test hip_sweep) with KEVOLVE_BIN etc. set; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_hip.py
"""
import csv
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import h5py

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve")
HIPCC = os.environ.get("KEVOLVE_HIPCC") or "hipcc"

SWEEP = """sweep:
  operators: [softmax, gemm_bias_relu]
  backends: [hip]
  synthesizer: builtin
  seed: 3
search:
  policy: uct
  memory: adaptive
  stop: {max_evaluations: 4, stagnation: 4}
evaluator:
  torch_baselines: off  # PyTorch as the yardstick has its own tests (test_run.py, torch_baseline_test)
  budget: 0.05
  timeout_ms: 5000
checkpoint:
  every_seconds: 30
"""


def hipcc_runs():
    try:
        return subprocess.run([HIPCC, "--offload-arch=gfx90a", "--version"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def amd_gpu():
    return Path("/dev/kfd").exists()


@unittest.skipUnless(hipcc_runs(), "no hipcc (scripts/install-deps.sh installs it)")
@unittest.skipIf(amd_gpu(), "this node has an AMD GPU: verdicts are not compile_only here")
class HipSweepWithoutAmdGpu(unittest.TestCase):
    def test_compile_only_verdicts_and_no_speedup_claims(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "hip.yaml").write_text(SWEEP)
            p = subprocess.run([str(BIN), "run", "hip.yaml", "--store", "hip.h5"], cwd=d, capture_output=True, text=True,
                               timeout=900)
            self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
            with h5py.File(Path(d) / "hip.h5", "r") as f:
                values = f["tasks"]["0"]["nodes"].attrs["status_values"]  # "0 ok, 1 compile_failed, ..."
                values = values.decode() if isinstance(values, bytes) else str(values)
                names = {int(v.split()[0]): v.split()[1] for v in values.split(", ")}
                compile_only = next(k for k, v in names.items() if v == "compile_only")
                evaluated = 0
                for t in f["tasks"]:
                    nodes = f["tasks"][t]["nodes"][...]
                    done = nodes[(nodes["state"] == 1) & (nodes["id"] != 0)]
                    evaluated += len(done)
                    self.assertTrue(len(done) > 0, f"task {t}: nothing evaluated")
                    statuses = {names[s] for s in done["status"]}
                    self.assertTrue(statuses <= {"compile_only", "compile_failed"}, f"task {t}: {statuses}")
                    self.assertIn("compile_only", statuses, f"task {t}: no template compiled")
                    self.assertTrue((done["fitness"] == 0).all(), f"task {t}: a fitness without running anything")
                    self.assertGreater(int((done["status"] == compile_only).sum()), 0)
                self.assertGreaterEqual(evaluated, 4)
            with open(Path(d) / "hip.summary.csv", newline="") as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(len(rows), 2)
            for r in rows:
                self.assertEqual(float(r["best_speedup"]), 0.0, r)
                self.assertEqual(r["correct"], "0", r)
                self.assertGreater(int(r["compile_only"]), 0, r)
            self.assertIn("compile_only: not run", (Path(d) / "hip.summary.md").read_text())
            rep = subprocess.run([str(BIN), "report", "hip.h5"], cwd=d, capture_output=True, text=True, timeout=120)
            self.assertEqual(rep.returncode, 0, rep.stderr)
            self.assertIn("compile_only", rep.stdout)
            self.assertNotRegex(rep.stdout, r"\d+\.\d\dx", "a speedup printed for a kernel that never ran")


if __name__ == "__main__":
    unittest.main(verbosity=2)
