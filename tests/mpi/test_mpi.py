#!/usr/bin/python3
"""kevolve run through real MPI (Open MPI's mpirun, ranks oversubscribed on
this machine): 3- and 5-rank sweeps give the single-process run's verdicts;
an evaluator rank that hangs (SIGSTOP) or exits (SIGKILL) mid-sweep costs no
node; SIGTERM on any rank ends the job with a complete, resumable store.

Run by CTest (test mpi_sweeps); by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/mpi/test_mpi.py
"""
import hashlib
import os
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
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")


def sweep_yaml(operators, max_evaluations, runtime="", checkpoint_seconds=30):
    ops = ", ".join(str(DATA / "operators" / f"{o}.yaml") for o in operators)
    return f"""sweep:
  operators: [{ops}]
  backends: [cpu]
  seed: 7
search:
  policy: greedy
  fresh_probability: 0
  max_in_flight: 1
  stop: {{max_evaluations: {max_evaluations}}}
evaluator:
  torch_baselines: off  # PyTorch as the yardstick has its own tests (test_run.py, torch_baseline_test)
  threads: 1
  budget: 0.03
  timeout_ms: 5000
  trials: 2
checkpoint:
  every_seconds: {checkpoint_seconds}
{runtime}"""


def mpirun(n, *args, extra=(), cwd, timeout=600):
    cmd = ["mpirun", *extra, "-n", str(n), str(BIN), *map(str, args)]
    return subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def finish(p, timeout=600):
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        raise AssertionError(f"timed out after {timeout} s:\n{out[-6000:]}")
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # nothing may outlive the test
        except ProcessLookupError:
            pass
    return p.returncode, out


def nodes_of(store):
    """{task id: [(id, parent, state, status, sha1 of code, rank)]} from the HDF5 file."""
    out = {}
    with h5py.File(store, "r") as f:
        for name in f["tasks"]:
            g = f["tasks"][name]
            text = g["text"][...].tobytes()
            rows = []
            for n in g["nodes"][...]:
                code = text[int(n["code_offset"]):int(n["code_offset"]) + int(n["code_length"])]
                rows.append((int(n["id"]), int(n["parent"]), int(n["state"]), int(n["status"]),
                             hashlib.sha1(code).hexdigest(), int(n["rank"])))
            task_id = g.attrs["id"]
            task_id = task_id.decode() if isinstance(task_id, bytes) else str(task_id)
            out[task_id] = (rows, g.attrs["stop_reason"])
    return out


def rank_rows(store):
    with h5py.File(store, "r") as f:
        return [{k: (v.decode() if isinstance(v, bytes) else v) for k, v in zip(row.dtype.names, row.tolist())}
                for row in f["ranks"][...]]


def rank_pid(rank, config):
    """The process of MPI rank `rank` running `config` (the worker children have a scrubbed environment)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            env = (d / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"/kevolve") and str(config).encode() in cmd and \
                f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return int(d.name)
    return None


def wait_for_evaluations(store, count, timeout=300):
    """Until the store's last checkpoint holds `count` evaluated nodes."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            done = sum(sum(1 for r in rows if r[2] == 1 and r[0] > 0) for rows, _ in nodes_of(store).values())
            if done >= count:
                return done
        except (OSError, KeyError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"{store}: fewer than {count} evaluations after {timeout} s")


class Checks(unittest.TestCase):
    def assert_complete(self, store, evaluations_per_task, out):
        tasks = nodes_of(store)
        for task, (rows, stop) in tasks.items():
            ids = [r[0] for r in rows]
            self.assertEqual(ids, list(range(len(ids))), f"{task}: node ids not 0..n-1\n{out[-3000:]}")
            self.assertTrue(stop, f"{task}: no stop reason\n{out[-3000:]}")
            self.assertFalse([r for r in rows if r[2] == 0], f"{task}: pending nodes left\n{out[-3000:]}")
            evaluated = [r for r in rows if r[0] > 0]
            self.assertEqual(len(evaluated), evaluations_per_task, f"{task}: {rows}\n{out[-3000:]}")
        return tasks


class DistributedSweeps(Checks):
    OPS = ["ts_softmax", "ts_bias_gelu", "ts_rmsnorm", "ts_bucketize", "ts_silu", "ts_embedding_bag_sum"]

    def test_three_and_five_ranks_give_the_single_process_verdicts(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "sweep.yaml"
            cfg.write_text(sweep_yaml(self.OPS, 3))
            single = subprocess.run([str(BIN), "run", cfg, "--store", "one.h5"], cwd=d, env=ENV, capture_output=True,
                                    text=True, timeout=600)
            self.assertEqual(single.returncode, 0, single.stdout[-3000:] + single.stderr[-3000:])
            reference = self.assert_complete(Path(d) / "one.h5", 3, single.stdout)
            for n in (3, 5):
                rc, out = finish(mpirun(n, "run", cfg, "--store", f"mpi{n}.h5", cwd=d))
                self.assertEqual(rc, 0, out[-5000:])
                self.assertIn(f"{n - 1} evaluator ranks", out)
                got = self.assert_complete(Path(d) / f"mpi{n}.h5", 3, out)
                self.assertEqual(sorted(got), sorted(reference))
                status_of_code = {r[4]: r[3] for rows, _ in reference.values() for r in rows if r[0] > 0}
                compared = 0
                for task, (rows, _) in got.items():
                    ref_rows = reference[task][0]
                    # The first child is written from the seed alone: the same code everywhere.
                    self.assertEqual(rows[1][4], ref_rows[1][4], f"{task}: first kernel differs")
                    for r in rows[1:]:
                        self.assertIn(r[5], range(1, n), f"{task}: node {r[0]} evaluated by rank {r[5]}")
                        if r[4] in status_of_code:
                            self.assertEqual(r[3], status_of_code[r[4]], f"{task}: node {r[0]} verdict differs")
                            compared += 1
                self.assertGreaterEqual(compared, len(self.OPS))
                ranks = rank_rows(Path(d) / f"mpi{n}.h5")
                self.assertEqual(sorted(r["rank"] for r in ranks), list(range(1, n)))
                self.assertEqual(sum(r["evaluations"] for r in ranks), 3 * len(self.OPS))
                self.assertTrue(all(r["state"] == "finished" for r in ranks), ranks)


class RankRoles(unittest.TestCase):
    def test_a_rank_without_its_backend_stops_the_job_before_it_starts(self):
        if subprocess.run(["sh", "-c", "nvidia-smi -L"], capture_output=True).returncode == 0:
            self.skipTest("this node has a CUDA device: rank 2 could serve cuda")
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "roles.yaml"
            cfg.write_text(sweep_yaml(["ts_silu"], 2).replace("backends: [cpu]", "backends: [cpu, cuda]") +
                           'runtime:\n  ranks:\n    - {ranks: "1", backend: cpu}\n    - {ranks: "2", backend: cuda}\n')
            rc, out = finish(mpirun(3, "run", cfg, "--store", "s.h5", cwd=d), timeout=120)
            self.assertNotEqual(rc, 0, out[-3000:])
            self.assertIn("rank 2 (", out)
            self.assertIn("given backend 'cuda' by the rank map (runtime.ranks), but backend 'cuda' is not usable here", out)
            self.assertFalse((Path(d) / "s.h5").exists(), "a store was written before the sweep started")


class RankRoles(Checks):
    def test_the_readmes_sweep_on_three_ranks_gives_each_backend_a_rank(self):
        """The README's own sweep (cpu and mtia_emu, no rank map) as a new user starts it:
        mpirun --oversubscribe -np 3 kevolve run config/quickstart.yaml. It stopped after
        0.1 s (both evaluator ranks probed as cpu, mtia_emu 'all retired'); now rank 1 takes
        cpu and rank 2 mtia_emu, the rule of choose_backend (actors/runtime.h)."""
        config = ROOT / "config" / "quickstart.yaml"
        with tempfile.TemporaryDirectory() as d:
            log = Path(d) / "out.txt"
            with log.open("w") as sink:
                p = subprocess.Popen(["mpirun", "--oversubscribe", "-np", "3", str(BIN), "run", str(config)], cwd=d,
                                     env=ENV, stdout=sink, stderr=subprocess.STDOUT, text=True, start_new_session=True)
            try:
                end, store, backends = time.time() + 300, None, set()
                while time.time() < end and p.poll() is None and backends != {"cpu", "mtia_emu"}:
                    time.sleep(1)
                    stores = list(Path(d).glob("quickstart-*.h5"))
                    if not stores:
                        continue
                    store = stores[0]
                    try:
                        backends = {task.rsplit("/", 1)[1] for task, (rows, _) in nodes_of(store).items()
                                    if any(r[2] == 1 and r[0] > 0 for r in rows)}
                    except (OSError, KeyError):
                        pass
                if p.poll() is not None:
                    self.fail("the sweep ended early:\n" + log.read_text()[-3000:])
                self.assertEqual(backends, {"cpu", "mtia_emu"}, f"evaluated backends after 300 s: {backends}")
                os.kill(rank_pid(0, config), signal.SIGTERM)
                try:
                    rc = p.wait(timeout=180)
                except subprocess.TimeoutExpired:
                    rc = None
                out = log.read_text()
            finally:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.assertEqual(rc, 143, out[-3000:])
            self.assertNotIn("retired", out)
            roles = {r["rank"]: (r["backend"], r["state"]) for r in rank_rows(store)}
            self.assertEqual(roles[1][0], "cpu", roles)
            self.assertEqual(roles[2][0], "mtia_emu", roles)
            self.assertNotIn("retired", {state for _, state in roles.values()}, roles)

    def test_a_backend_no_rank_serves_stops_the_job_before_the_sweep_and_says_how_to_fix_it(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "roles.yaml"
            cfg.write_text(sweep_yaml(["ts_bias_gelu"], 2).replace("backends: [cpu]", "backends: [cpu, mtia_emu]"))
            rc, out = finish(mpirun(2, "run", cfg, "--store", "s.h5", cwd=d), timeout=120)
            self.assertNotEqual(rc, 0, out[-3000:])
            self.assertIn("no evaluator rank serves backend 'mtia_emu' of the sweep (rank 1 serves cpu)", out)
            self.assertIn('runtime: {ranks: [{ranks: "1", backend: mtia_emu}]}', out)
            self.assertNotIn("retired", out)
            self.assertFalse((Path(d) / "s.h5").exists(), "a store was written before the sweep started")


class Faults(Checks):
    OPS = ["ts_softmax", "ts_bias_gelu", "ts_rmsnorm", "ts_silu"]
    RUNTIME = "runtime: {heartbeat_seconds: 0.5, silence_seconds: 4, deadline_seconds: 60, grace_seconds: 20}\n"

    def start(self, d, n, evaluations, extra=()):
        cfg = Path(d) / "faults.yaml"
        cfg.write_text(sweep_yaml(self.OPS, evaluations, self.RUNTIME, checkpoint_seconds=1))
        return cfg, mpirun(n, "run", cfg, "--store", "s.h5", extra=extra, cwd=d)

    def test_a_hung_rank_is_retired_and_its_work_done_elsewhere(self):
        with tempfile.TemporaryDirectory() as d:
            cfg, p = self.start(d, 4, 5)
            wait_for_evaluations(Path(d) / "s.h5", 3)
            pid = rank_pid(2, cfg)
            self.assertIsNotNone(pid, "rank 2 not found")
            os.kill(pid, signal.SIGSTOP)
            rc, out = finish(p)
            self.assertIn("rank 2 has not been heard from", out)
            self.assertIn("wrote", out)  # the summaries: the sweep completed
            self.assert_complete(Path(d) / "s.h5", 5, out)
            states = {r["rank"]: r["state"] for r in rank_rows(Path(d) / "s.h5")}
            self.assertEqual(states[2], "retired", states)

    def test_a_rank_that_exits_is_retired_under_enable_recovery(self):
        with tempfile.TemporaryDirectory() as d:
            # Long enough that the sweep outlives the 4 s of silence after the kill.
            cfg, p = self.start(d, 4, 10, extra=["--enable-recovery"])
            wait_for_evaluations(Path(d) / "s.h5", 2)
            os.kill(rank_pid(3, cfg), signal.SIGKILL)
            rc, out = finish(p)
            self.assertIn("rank 3 has not been heard from", out)
            self.assertIn("wrote", out)
            self.assert_complete(Path(d) / "s.h5", 10, out)
            states = {r["rank"]: r["state"] for r in rank_rows(Path(d) / "s.h5")}
            self.assertEqual(states[3], "retired", states)

    def test_a_rank_that_exits_ends_the_job_and_resume_loses_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            cfg, p = self.start(d, 3, 5)
            wait_for_evaluations(Path(d) / "s.h5", 4)
            os.kill(rank_pid(2, cfg), signal.SIGKILL)
            rc, out = finish(p)
            self.assertNotEqual(rc, 0)  # Open MPI ends the whole job
            before = nodes_of(Path(d) / "s.h5")
            rc, out = finish(mpirun(3, "run", cfg, "--resume", "s.h5", cwd=d))
            self.assertEqual(rc, 0, out[-5000:])
            after = self.assert_complete(Path(d) / "s.h5", 5, out)
            for task, (rows, _) in before.items():
                for r in rows:
                    if r[2] == 1:  # evaluated before the crash: kept as it was
                        self.assertEqual(after[task][0][r[0]][:5], r[:5], f"{task} node {r[0]}")

    def test_sigterm_on_rank_0_or_an_evaluator_checkpoints_and_resumes(self):
        for victim in (0, 2):
            with self.subTest(rank=victim), tempfile.TemporaryDirectory() as d:
                cfg, p = self.start(d, 3, 6)
                wait_for_evaluations(Path(d) / "s.h5", 3)
                os.kill(rank_pid(victim, cfg), signal.SIGTERM)
                t0 = time.time()
                rc, out = finish(p, timeout=120)
                self.assertLess(time.time() - t0, 25, out[-3000:])  # within the grace period
                self.assertIn(f"SIGTERM on rank {victim}", out)
                self.assertIn("--resume s.h5", out)
                tasks = nodes_of(Path(d) / "s.h5")  # readable, complete
                self.assertTrue(any(not stop for _, stop in tasks.values()), "nothing left to resume")
                resumed = subprocess.run([str(BIN), "run", cfg, "--resume", "s.h5"], cwd=d, env=ENV,
                                         capture_output=True, text=True, timeout=600)
                self.assertEqual(resumed.returncode, 0, resumed.stdout[-3000:] + resumed.stderr[-3000:])
                self.assert_complete(Path(d) / "s.h5", 6, resumed.stdout)
                self.assertEqual(sorted({r["session"] for r in rank_rows(Path(d) / "s.h5")}), [0, 1])


if __name__ == "__main__":
    unittest.main(verbosity=2)
