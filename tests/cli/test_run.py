#!/usr/bin/python3
"""kevolve run end to end: a small sweep on this CPU that must find kernels
faster than the baselines, an operator known only from its YAML, and a sweep
killed with SIGKILL again and again that always resumes from an intact store.

Run by CTest (test run_sweeps) with KEVOLVE_BIN etc. set; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_run.py
"""
import csv
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

import h5py

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve")
DATA = Path(os.environ.get("KEVOLVE_TEST_DATA") or ROOT / "tests" / "data")


def kevolve(*args, cwd, timeout=900):
    return subprocess.run([str(BIN), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def describe(p):
    return f"exit {p.returncode}\n--- stdout ---\n{p.stdout[-4000:]}\n--- stderr ---\n{p.stderr[-4000:]}"


def sweep_yaml(operators, max_evaluations, checkpoint_seconds=30, seed=1, policy="uct"):
    ops = ", ".join(str(DATA / "operators" / f"{o}.yaml") for o in operators)
    return f"""sweep:
  operators: [{ops}]
  backends: [cpu]
  synthesizer: builtin
  seed: {seed}
search:
  policy: {policy}
  memory: adaptive
  stop: {{max_evaluations: {max_evaluations}, stagnation: {max_evaluations}}}
evaluator:
  torch_baselines: off  # PyTorch as the yardstick has its own tests (test_run.py, torch_baseline_test)
  budget: 0.05
  timeout_ms: 5000
checkpoint:
  every_seconds: {checkpoint_seconds}
"""


def read_summary_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def stored_nodes(store):
    """{task id: (node ids, number evaluated)} straight from the HDF5 file."""
    out = {}
    with h5py.File(store, "r") as f:
        for name in f["tasks"]:
            g = f["tasks"][name]
            nodes = g["nodes"][...]
            evaluated = int((nodes["state"] == 1).sum()) - 1  # the root counts as evaluated
            out[g.attrs["id"].decode() if isinstance(g.attrs["id"], bytes) else str(g.attrs["id"])] = (
                list(nodes["id"]), evaluated)
    return out


class SmallSweep(unittest.TestCase):
    def test_finds_faster_kernels_than_the_baselines(self):
        ops = ["ts_softmax", "ts_layernorm", "ts_bias_gelu", "ts_rmsnorm"]
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "small.yaml"
            cfg.write_text(sweep_yaml(ops, max_evaluations=6))
            p = kevolve("run", cfg, "--store", "small.h5", cwd=d)
            self.assertEqual(p.returncode, 0, describe(p))
            rows = read_summary_csv(Path(d) / "small.summary.csv")
            self.assertEqual(len(rows), len(ops), rows)
            faster = [r for r in rows if float(r["best_speedup"]) > 1.0]
            self.assertGreaterEqual(len(faster), len(ops) / 2, rows)
            self.assertTrue((Path(d) / "small.summary.md").exists())
            r = kevolve("report", "small.h5", cwd=d)
            self.assertEqual(r.returncode, 0, describe(r))
            self.assertIn("tasks beat their baseline", r.stdout)

    def test_an_operator_known_only_from_yaml_is_searched_and_beaten(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "silu.yaml"
            cfg.write_text(sweep_yaml(["ts_silu"], max_evaluations=5))
            p = kevolve("run", cfg, "--store", "silu.h5", cwd=d)
            self.assertEqual(p.returncode, 0, describe(p))
            rows = read_summary_csv(Path(d) / "silu.summary.csv")
            self.assertGreater(float(rows[0]["best_speedup"]), 1.0, rows)


class SweepShapes(unittest.TestCase):
    def test_a_sweep_times_its_own_shapes_and_still_verifies_the_holdouts(self):
        """`sweep.shapes` replaces an operator's timed shapes for the sweep; its
        holdout shapes stay, and every measurement the store keeps is at one or the other."""
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "shapes.yaml"
            cfg.write_text(sweep_yaml(["ts_softmax"], max_evaluations=3).replace(
                "  backends: [cpu]\n",
                "  backends: [cpu]\n  shapes:\n    ts_softmax: [{name: sweep_rows_2k, B: 2048, N: 512}]\n"))
            p = kevolve("run", cfg, "--store", "shapes.h5", cwd=d)
            self.assertEqual(p.returncode, 0, describe(p))
            data = (Path(d) / "shapes.h5").read_bytes()
            self.assertGreaterEqual(data.count(b"sweep_rows_2k"), 3)  # a measurement per evaluated node
            self.assertGreaterEqual(data.count(b"odd_tail"), 3)       # the operator's holdout shape
            self.assertEqual(data.count(b"rows_1024"), 0)             # the operator's own timed shape
            rows = read_summary_csv(Path(d) / "shapes.summary.csv")
            self.assertEqual(int(rows[0]["correct"]), 3, rows)


class Reproducible(unittest.TestCase):
    def test_a_seeded_emulator_sweep_grows_the_same_trees_twice(self):
        """mtia_emu (a deterministic timer), three children of each task in flight, two
        tasks sharing the evaluator, the next requests compiled ahead: verdicts reach a
        task's tree in the order its children were handed out and child k is chosen from
        the first k - 3 of them, however the evaluations interleave, so the same seed gives
        the same trees, kernels and fitness."""
        ops = ["ts_softmax", "ts_bias_gelu"]
        with tempfile.TemporaryDirectory() as d:
            y = (sweep_yaml(ops, max_evaluations=7).replace("backends: [cpu]", "backends: [mtia_emu]")
                 .replace("  memory: adaptive\n", "  memory: adaptive\n  max_in_flight: 3\n"))
            (Path(d) / "a.yaml").write_text(y)
            runs = []
            for name in ("one", "two"):
                p = kevolve("run", Path(d) / "a.yaml", "--store", f"{name}.h5", cwd=d)
                self.assertEqual(p.returncode, 0, describe(p))
                rows = read_summary_csv(Path(d) / f"{name}.summary.csv")
                with h5py.File(Path(d) / f"{name}.h5", "r") as f:
                    codes = {}
                    for i in f["tasks"]:
                        n = f["tasks"][i]["nodes"][...]
                        codes[str(i)] = list(zip(n["parent"].tolist(), n["status"].tolist(), n["fitness"].tolist()))
                runs.append(([(r["task"], r["best_speedup"], r["evaluations"], r["correct"]) for r in rows], codes))
            self.assertEqual(runs[0][0], runs[1][0])
            self.assertEqual(runs[0][1], runs[1][1])
            self.assertEqual(len(runs[0][0]), 2)


class FromPyTorch(unittest.TestCase):
    def test_an_operator_declared_by_a_torch_line_alone_is_searched_and_beats_pytorch(self):
        """ts_swiglu has a YAML and a `torch:` line, no C++: PyTorch (fp64) is its
        reference and the faster of eager and torch.compile its yardstick; the builtin
        synthesizer's elementwise template beats it on this CPU at a shape of the catalog's
        swiglu (4096 x 4096: 64 MB per tensor; at 512 x 1024, in cache, torch.compile is
        ahead of 5 evaluations)."""
        with tempfile.TemporaryDirectory() as d:
            op = Path(d) / "ts_swiglu.yaml"
            op.write_text((DATA / "operators" / "ts_swiglu.yaml").read_text().replace(
                "{name: rows_1024, B: 512, N: 1024}", "{name: ffn_4096, B: 4096, N: 4096}"))
            cfg = Path(d) / "swiglu.yaml"
            cfg.write_text(sweep_yaml(["ts_swiglu"], max_evaluations=5).replace("torch_baselines: off", "torch_baselines: on")
                           .replace(str(DATA / "operators" / "ts_swiglu.yaml"), str(op)))
            p = kevolve("run", cfg, "--store", "swiglu.h5", cwd=d)
            self.assertEqual(p.returncode, 0, describe(p))
            rows = read_summary_csv(Path(d) / "swiglu.summary.csv")
            self.assertEqual(len(rows), 1, rows)
            self.assertTrue(rows[0]["fitness_over"].startswith("× PyTorch"), rows)
            self.assertGreater(float(rows[0]["best_speedup"]), 1.0, rows)
            self.assertGreater(float(rows[0]["best_vs_torch_eager"]), 0.0, rows)
            self.assertGreater(float(rows[0]["best_vs_torch_compile"]), 0.0, rows)
            self.assertAlmostEqual(float(rows[0]["best_speedup"]),
                                   min(float(rows[0]["best_vs_torch_eager"]), float(rows[0]["best_vs_torch_compile"])),
                                   delta=0.05 * float(rows[0]["best_speedup"]))
            self.assertIn("tasks beat PyTorch (the faster of eager and torch.compile)", p.stdout)
            with h5py.File(Path(d) / "swiglu.h5", "r") as f:
                over = f["tasks"]["0"].attrs["fitness_over"]
                self.assertTrue((over.decode() if isinstance(over, bytes) else over).startswith("× PyTorch"), over)


class WarmStart(unittest.TestCase):
    def test_a_new_sweep_starts_from_the_best_kernels_of_earlier_stores(self):
        with tempfile.TemporaryDirectory() as d:
            first = Path(d) / "first.yaml"
            first.write_text(sweep_yaml(["ts_softmax"], max_evaluations=5))
            p = kevolve("run", first, "--store", "first.h5", cwd=d)
            self.assertEqual(p.returncode, 0, describe(p))
            second = Path(d) / "second.yaml"
            second.write_text(sweep_yaml(["ts_softmax"], max_evaluations=2, seed=9))
            p = kevolve("run", second, "--store", "second.h5", "--seed-from", "first.h5", cwd=d)
            self.assertEqual(p.returncode, 0, describe(p))
            with h5py.File(Path(d) / "first.h5", "r") as f1, h5py.File(Path(d) / "second.h5", "r") as f2:
                n1, t1 = f1["tasks/0/nodes"][...], f1["tasks/0/text"][...]
                n2, t2 = f2["tasks/0/nodes"][...], f2["tasks/0/text"][...]
                ok = n1[(n1["status"] == 0) & (n1["id"] > 0)]
                best = ok[ok["fitness"].argmax()]
                code = lambda n, t: bytes(t[int(n["code_offset"]):int(n["code_offset"]) + int(n["code_length"])])
                origin = lambda n, t: bytes(t[int(n["origin_offset"]):int(n["origin_offset"]) + int(n["origin_length"])])
                self.assertEqual(origin(n2[1], t2), b"seed")
                self.assertEqual(code(n2[1], t2), code(best, t1))
                self.assertEqual(int(n2[1]["status"]), 0)


class KilledAndResumed(unittest.TestCase):
    def test_every_resume_starts_from_an_intact_store_and_completes(self):
        ops = ["ts_softmax", "ts_bias_gelu"]
        per_task = 8
        rng = random.Random(5)
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "kill.yaml"
            cfg.write_text(sweep_yaml(ops, max_evaluations=per_task, checkpoint_seconds=0.05))
            store = Path(d) / "kill.h5"
            seen = {}
            for attempt in range(6):
                args = ["run", cfg, "--resume", store] if store.exists() else ["run", cfg, "--store", store]
                proc = subprocess.Popen([str(BIN), *map(str, args)], cwd=d, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
                time.sleep(rng.uniform(0.3, 2.5))
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                if not store.exists():
                    continue  # killed before the first checkpoint
                leftovers = [p.name for p in Path(d).iterdir() if p.name.startswith("kill.h5") and p.name != "kill.h5"]
                nodes = stored_nodes(store)  # an intact, readable store
                r = kevolve("report", store, cwd=d)
                self.assertEqual(r.returncode, 0, f"attempt {attempt}: {describe(r)}; leftovers {leftovers}")
                for task, (ids, evaluated) in nodes.items():
                    self.assertEqual(ids, list(range(len(ids))), f"{task}: node ids must be 0..n-1, no duplicates")
                    self.assertGreaterEqual(evaluated, seen.get(task, 0), f"{task}: a checkpoint lost evaluations")
                    seen[task] = evaluated
            p = kevolve("run", cfg, "--resume", store, cwd=d) if store.exists() else kevolve("run", cfg, "--store", store, cwd=d)
            self.assertEqual(p.returncode, 0, describe(p))
            for task, (ids, evaluated) in stored_nodes(store).items():
                self.assertEqual(evaluated, per_task, f"{task}: the sweep did not complete")
                self.assertEqual(ids, list(range(len(ids))))

    def test_sigterm_checkpoints_and_stops_and_the_sweep_resumes(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "term.yaml"
            cfg.write_text(sweep_yaml(["ts_softmax", "ts_bias_gelu"], max_evaluations=12))
            proc = subprocess.Popen([str(BIN), "run", str(cfg), "--store", "term.h5"], cwd=d,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out = ""
            while "evaluation 2/" not in out:  # stop it in the middle of the first task
                line = proc.stdout.readline()
                self.assertTrue(line, "kevolve run ended early: " + out)
                out += line
            proc.send_signal(signal.SIGTERM)
            rest, err = proc.communicate(timeout=120)
            out += rest
            self.assertEqual(proc.returncode, 128 + signal.SIGTERM, out + err)
            self.assertIn("--resume", out)
            before = stored_nodes(Path(d) / "term.h5")
            self.assertTrue(any(n for _, n in before.values()), "nothing was kept")
            p = kevolve("run", cfg, "--resume", "term.h5", cwd=d)
            self.assertEqual(p.returncode, 0, describe(p))
            for task, (ids, evaluated) in stored_nodes(Path(d) / "term.h5").items():
                self.assertEqual(evaluated, 12, task)
                self.assertGreaterEqual(evaluated, before.get(task, ([], 0))[1])

    def test_resume_refuses_missing_corrupt_and_incompatible_stores(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "a.yaml"
            cfg.write_text(sweep_yaml(["t_softmax"], max_evaluations=2))
            p = kevolve("run", cfg, "--resume", "missing.h5", cwd=d)
            self.assertEqual(p.returncode, 2, describe(p))
            self.assertIn("missing.h5", p.stderr)
            (Path(d) / "junk.h5").write_bytes(os.urandom(4096))
            p = kevolve("run", cfg, "--resume", "junk.h5", cwd=d)
            self.assertEqual(p.returncode, 2, describe(p))
            self.assertIn("junk.h5", p.stderr)
            p = kevolve("run", cfg, "--store", "a.h5", cwd=d)
            self.assertEqual(p.returncode, 0, describe(p))
            p = kevolve("run", cfg, "--store", "a.h5", cwd=d)  # no silent overwrite
            self.assertEqual(p.returncode, 2, describe(p))
            self.assertIn("--resume", p.stderr)
            other = Path(d) / "b.yaml"
            other.write_text(sweep_yaml(["t_softmax"], max_evaluations=2, policy="greedy"))
            p = kevolve("run", other, "--resume", "a.h5", cwd=d)
            self.assertEqual(p.returncode, 2, describe(p))
            self.assertIn("incompatible config", p.stderr)
            self.assertIn("policy=uct", p.stderr)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)
