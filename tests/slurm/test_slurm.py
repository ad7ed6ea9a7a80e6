#!/usr/bin/python3
"""kevolve under a real Slurm: a single-node cluster on localhost (munged,
slurmctld, slurmd started by this test in a temporary directory; see
cluster.py) runs the batch scripts of slurm/:

- sbatch slurm/kevolve-homogeneous.slurm completes a small sweep;
- a job that gets the time-limit signal (USR1 to the batch shell, as
  --signal=B:USR1@N sends it) checkpoints and requeues itself, is then
  preempted (scontrol requeue), and resumes each time from its checkpoint
  until it completes, with no node lost or duplicated;
- a job killed with SIGKILL leaves a readable store that a new submission resumes;
- slurm/submit-split runs the sweep as a job array, one piece per operator,
  and the dependent merge job combines the pieces' stores with kevolve merge.
The daemons are stopped by PID file at the end. Skips only when not root or
when Slurm and MUNGE cannot be installed.

Run by CTest (test slurm_jobs); by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/slurm/test_slurm.py
"""
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

import h5py

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cluster  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve")
DATA = Path(os.environ.get("KEVOLVE_TEST_DATA") or ROOT / "tests" / "data")
SLURM = ROOT / "slurm"


def sweep_yaml(operators, max_evaluations):
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
  every_seconds: 1
runtime: {{heartbeat_seconds: 0.5, grace_seconds: 20}}
"""


def nodes_of(store):
    """{task id: ([(id, parent, state, status, sha1 of code)], stop reason)}"""
    out = {}
    with h5py.File(store, "r") as f:
        for name in f["tasks"]:
            g = f["tasks"][name]
            text = g["text"][...].tobytes()
            for n in g["nodes"][...]:  # a verdict must never come from the job's own signals
                reason = text[int(n["reason_offset"]):int(n["reason_offset"]) + int(n["reason_length"])]
                assert b"killed by signal" not in reason, f"{store}: node {n['id']}: {reason!r}"
            rows = [(int(n["id"]), int(n["parent"]), int(n["state"]), int(n["status"]),
                     hashlib.sha1(text[int(n["code_offset"]):int(n["code_offset"]) + int(n["code_length"])]).hexdigest())
                    for n in g["nodes"][...]]
            attr = lambda k: g.attrs[k].decode() if isinstance(g.attrs[k], bytes) else str(g.attrs[k])  # noqa: E731
            out[attr("id")] = (rows, attr("stop_reason"))
    return out


def evaluated(store):
    try:
        return sum(sum(1 for r in rows if r[2] == 1 and r[0] > 0) for rows, _ in nodes_of(store).values())
    except (OSError, KeyError):
        return 0


def job_pids(job):
    """Processes whose environment says they belong to Slurm job `job` (batch shell, srun, ranks)."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if f"SLURM_JOB_ID={job}".encode() in (d / "environ").read_bytes().split(b"\0"):
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def sessions(store):
    with h5py.File(store, "r") as f:
        return sorted({int(r["session"]) for r in f["ranks"][...]})


class SlurmJobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise unittest.SkipTest("needs root: the test starts munged, slurmctld and slurmd")
        if cluster.missing_tools():
            r = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "slurm-wlm", "munge"],
                               capture_output=True, text=True, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
            if cluster.missing_tools():
                raise unittest.SkipTest(f"Slurm and MUNGE are not installed and could not be ({cluster.missing_tools()} "
                                        f"missing; apt-get said: {r.stderr.strip()[-400:]})")
        cls.c = cluster.LocalCluster(cpus=4)
        t0 = time.time()
        cls.c.start()
        print(f"cluster up in {time.time() - t0:.1f} s: {cls.c.dir}", flush=True)
        cls.d = cls.c.dir / "work"
        cls.d.mkdir()
        site = cls.d / "site.conf"
        site.write_text(f"""source {SLURM / 'site.conf'}
KEVOLVE_HOME={ROOT}
KEVOLVE_BIN={BIN}
KEVOLVE_STORE_DIR={cls.d / 'runs'}
KEVOLVE_NTASKS=2
KEVOLVE_TIME=00:20:00
KEVOLVE_SIGNAL_LEAD=120
""")
        cls.env = dict(cls.c.env, KEVOLVE_SITE_CONF=str(site), KEVOLVE_HOME=str(ROOT), KEVOLVE_BIN=str(BIN),
                       OMPI_MCA_btl_vader_single_copy_mechanism="none")

    @classmethod
    def tearDownClass(cls):
        if hasattr(cls, "c"):
            cls.c.stop()
            left = [n for n, pid in cls.c.pids().items() if Path(f"/proc/{pid}").exists()]
            assert not left, f"daemons still running: {left}"
            if not os.environ.get("KEVOLVE_KEEP_TEST_DIRS"):
                shutil.rmtree(cls.c.dir, ignore_errors=True)

    def sbatch(self, *args):
        r = self.c.run(["sbatch", "--parsable", *map(str, args)], cwd=str(self.d), env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip().split(";")[0]

    def output(self, job):
        f = self.d / f"kevolve-{job}.out"
        return f.read_text(errors="replace") if f.exists() else ""

    def wait_done(self, job, timeout=300):
        st = self.c.wait_state(job, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}, timeout)
        self.assertTrue(all(s == "COMPLETED" for s in st.values()), f"{st}\n{self.output(job)[-4000:]}")

    def wait_evaluations(self, store, count, job, timeout=240):
        end = time.time() + timeout
        while time.time() < end:
            if Path(store).exists() and evaluated(store) >= count:
                return
            time.sleep(0.3)
        self.fail(f"{store}: fewer than {count} evaluations after {timeout} s\n{self.output(job)[-4000:]}")

    def restart(self, job, count, store):
        """Waits until the requeued job is pending again, takes the store's nodes (the interrupted
        run's last checkpoint), then lets the job start now (not BeginTime + 120 s)."""
        end = time.time() + 120
        snapshot = None
        while time.time() < end:
            j = self.c.job(job)
            if int(j.get("Restarts", 0)) >= count and j.get("JobState") == "RUNNING" and snapshot:
                return snapshot
            if int(j.get("Restarts", 0)) >= count and j.get("JobState") == "PENDING":
                snapshot = snapshot or nodes_of(store)
                # Slurm holds a requeued job for 120 s. Start it now, but only once the node has
                # finished with the previous run: launched while the node still completes it (the
                # batch shell that requeued itself is still exiting), the batch launch fails.
                node = self.c.run(["sinfo", "-h", "-o", "%T"]).stdout.split()
                if node and all(state.startswith("idle") for state in node):
                    self.c.run(["scontrol", "update", f"JobId={job}", "StartTime=now"])
            time.sleep(0.5)
        self.fail(f"job {job} did not restart: {self.c.job(job)}\n{self.output(job)[-3000:]}")

    def assert_complete(self, store, per_task, before=None):
        tasks = nodes_of(store)
        for task, (rows, stop) in tasks.items():
            self.assertEqual([r[0] for r in rows], list(range(len(rows))), f"{task}: node ids not 0..n-1")
            self.assertTrue(stop, f"{task}: no stop reason")
            self.assertFalse([r for r in rows if r[2] == 0], f"{task}: pending nodes left")
            self.assertEqual(len([r for r in rows if r[0] > 0]), per_task, f"{task}: {rows}")
        for task, (rows, _) in (before or {}).items():
            for r in rows:
                if r[2] == 1:  # evaluated before the interruption: kept exactly
                    self.assertEqual(tasks[task][0][r[0]], r, f"{task} node {r[0]} changed")
        return tasks

    def status(self, store):
        r = subprocess.run([str(BIN), "status", str(store)], capture_output=True, text=True, timeout=60, env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_1_a_batch_job_completes_a_sweep(self):
        cfg = self.d / "small.yaml"
        cfg.write_text(sweep_yaml(["ts_softmax", "ts_bias_gelu"], 2))
        t0 = time.time()
        job = self.sbatch("--ntasks=3", SLURM / "kevolve-homogeneous.slurm", cfg)
        self.wait_done(job)
        print(f"small sweep job: {time.time() - t0:.1f} s", flush=True)
        store = self.d / "runs" / "small.h5"
        self.assert_complete(store, 2)
        out = self.output(job)
        self.assertIn("2 evaluator ranks", out)
        self.assertIn("sweep finished", out)
        st = self.status(store)
        self.assertIn("tasks: 2 done, 0 running, 0 pending (2 in all)", st)
        self.assertIn("estimated time left: none", st)

    def test_2_time_limit_signal_and_preemption_resume_without_losing_a_node(self):
        cfg = self.d / "long.yaml"
        # Long enough that the signal (scancel -> batch shell -> srun -> ranks) lands mid-sweep.
        cfg.write_text(sweep_yaml(["ts_softmax", "ts_rmsnorm"], 12))
        store = self.d / "runs" / "long.h5"
        t0 = time.time()
        job = self.sbatch("--ntasks=3", SLURM / "kevolve-homogeneous.slurm", cfg)
        self.wait_evaluations(store, 3, job)
        st = self.status(store)  # while the job runs: a complete checkpoint
        self.assertRegex(st, r"tasks: \d done, \d running")
        self.assertIn("estimated time left: about", st)
        # What --signal=B:USR1@N does before the time limit: USR1 to the batch shell.
        self.assertEqual(self.c.run(["scancel", "--batch", "--signal=USR1", job]).returncode, 0)
        # The job ends after its final checkpoint, with kevolve's exit status 143: FAILED.
        self.c.wait_state(job, {"FAILED", "COMPLETED"}, 120)
        first = nodes_of(store)
        out = self.output(job)
        self.assertIn("got SIGUSR1", out)
        self.assertIn("SIGUSR1 on rank", out)  # rank 0 saw it and stopped after its checkpoint
        self.assertTrue(any(not stop for _, stop in first.values()), "nothing left to resume")
        # A new submission with the same store resumes; then it is preempted (scontrol requeue:
        # SIGTERM everywhere) and the requeued job resumes again.
        job = self.sbatch("--ntasks=3", SLURM / "kevolve-homogeneous.slurm", cfg)
        end = time.time() + 180
        while evaluated(store) < sum(len([r for r in rows if r[2] == 1 and r[0] > 0]) for rows, _ in first.values()) + 2:
            self.assertLess(time.time(), end, self.output(job)[-3000:])
            time.sleep(0.3)
        self.assertIn("--resume", self.output(job))
        self.assertEqual(self.c.run(["scontrol", "requeue", job]).returncode, 0)
        second = self.restart(job, 1, store)
        self.wait_done(job)
        print(f"signalled + resubmitted + preempted: {time.time() - t0:.1f} s", flush=True)
        out = self.output(job)
        self.assertIn("restart 1", out)
        # Whether the batch shell logs the preemption's SIGTERM before Slurm's SIGKILL is up to
        # Slurm's timing; what must hold is in the store: nothing lost, nothing done twice.
        self.assert_complete(store, 12, first)
        self.assert_complete(store, 12, second)
        self.assertEqual(sessions(store), [0, 1, 2])

    def test_3_a_store_survives_sigkill_and_a_new_submission_resumes_it(self):
        cfg = self.d / "killed.yaml"
        cfg.write_text(sweep_yaml(["ts_softmax", "ts_bias_gelu"], 12))  # still running when killed
        store = self.d / "runs" / "killed.h5"
        job = self.sbatch("--ntasks=3", SLURM / "kevolve-homogeneous.slurm", cfg)
        self.wait_evaluations(store, 3, job)
        # SIGKILL to every process of the job at once, as the OOM killer or a dying node
        # would (scancel --signal=KILL is turned into Slurm's TERM-then-KILL sequence).
        killed = job_pids(job)
        self.assertGreaterEqual(len(killed), 4, "batch shell, srun and 3 ranks expected")
        for pid in killed:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.c.wait_state(job, {"CANCELLED", "FAILED", "COMPLETED"}, 120)
        out = self.output(job)
        self.assertNotIn("got SIGTERM", out)
        self.assertNotIn("stopped (", out)  # no final checkpoint: the periodic one must do
        before = nodes_of(store)  # readable
        self.assertIn("tasks:", self.status(store))
        tmp = list(store.parent.glob("killed.h5.tmp-*"))
        if tmp:  # a checkpoint cut short: status refuses to read it
            r = subprocess.run([str(BIN), "status", str(tmp[0])], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("still being written", r.stderr)
        job2 = self.sbatch("--ntasks=3", SLURM / "kevolve-homogeneous.slurm", cfg)
        self.wait_done(job2)
        self.assertIn("--resume", self.output(job2))
        self.assert_complete(store, 12, before)

    def test_4_a_job_array_runs_the_pieces_and_merge_combines_them(self):
        cfg = self.d / "split.yaml"
        cfg.write_text(sweep_yaml(["ts_softmax", "ts_bias_gelu", "ts_rmsnorm"], 2))
        pieces = self.d / "pieces"
        t0 = time.time()
        r = subprocess.run([str(SLURM / "submit-split"), str(cfg), str(pieces)], cwd=self.d, env=self.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        array = r.stdout.split("array job ")[1].split(":")[0]
        merge = r.stdout.split("merge job ")[1].split(":")[0]
        self.wait_done(array)
        self.wait_done(merge)
        print(f"array of 3 pieces + merge: {time.time() - t0:.1f} s", flush=True)
        merged = pieces / "merged.h5"
        tasks = self.assert_complete(merged, 2)
        self.assertEqual(len(tasks), 3)
        for i in range(3):
            for task, piece in nodes_of(pieces / f"piece-{i:03}.h5").items():
                self.assertEqual(tasks[task], piece, f"{task} differs from piece {i}")
        self.assertTrue((pieces / "merged.html").exists())
        self.assertIn("tasks: 3 done", self.status(merged))
        # Refusals: an existing OUT, a task in two stores.
        again = subprocess.run([str(BIN), "merge", str(merged), str(pieces / "piece-000.h5")], capture_output=True, text=True)
        self.assertEqual(again.returncode, 2)
        self.assertIn("already exists", again.stderr)
        dup = subprocess.run([str(BIN), "merge", str(self.d / "dup.h5"), str(pieces / "piece-000.h5"),
                              str(pieces / "piece-000.h5")], capture_output=True, text=True)
        self.assertEqual(dup.returncode, 2)
        self.assertIn("each task must come from exactly one store", dup.stderr)
        self.assertFalse((self.d / "dup.h5").exists())


if __name__ == "__main__":
    unittest.main(verbosity=2)
