#!/usr/bin/python3
"""The llm synthesizer end to end against tests/llm/replay_server.py (an
OpenAI-protocol server on 127.0.0.1 that replays recorded completions): a
search on cpu driven by the LLM path with replies that are good kernels, no
code, a kernel that does not compile, a 429 with Retry-After, a 500 and
malformed JSON; the fallback to the builtin synthesizer (no endpoint, bad
credentials, budget spent), said once; the API key nowhere in the store,
output, summaries, report, exports or the candidate workers' environment;
`kevolve export` against the store; `kevolve kb`; skills written back with
`kevolve kb promote` and retrieved by a later sweep's prompts.

Run by CTest (test llm_sweeps); by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_llm.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

import h5py

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve")
DATA = Path(os.environ.get("KEVOLVE_TEST_DATA") or ROOT / "tests" / "data")
SERVER = ROOT / "tests" / "llm" / "replay_server.py"
KEY = "sk-test-SECRET-4f1c9e77d2"


class Replay:
    def __init__(self, d, script):
        self.dir = Path(d)
        (self.dir / "script.json").write_text(json.dumps(script))
        self.log = self.dir / "requests.jsonl"
        port = self.dir / "port"
        self.proc = subprocess.Popen([sys.executable, str(SERVER), "--script", str(self.dir / "script.json"),
                                      "--port-file", str(port), "--log", str(self.log)])
        for _ in range(200):
            if port.exists():
                break
            time.sleep(0.025)
        self.url = "http://127.0.0.1:%s/v1" % port.read_text()

    def requests(self):
        return [json.loads(l) for l in self.log.read_text().splitlines()] if self.log.exists() else []

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def reply(name):
    return {"content_file": str(DATA / "llm" / name)}


def sweep_yaml(llm, max_evaluations=8, synthesizer="llm"):
    return f"""sweep:
  operators: [{DATA / "operators" / "ts_softmax.yaml"}]
  backends: [cpu]
  synthesizer: {synthesizer}
  seed: 3
search:
  policy: greedy
  memory: adaptive
  stop: {{max_evaluations: {max_evaluations}, stagnation: {max_evaluations}}}
evaluator:
  torch_baselines: off  # PyTorch as the yardstick has its own tests (test_run.py, torch_baseline_test)
  budget: 0.05
  timeout_ms: 5000
{llm}"""


def endpoint_yaml(url, extra="", budget=""):
    return f"""llm:
  max_in_flight: 2
  retries: 3
  backoff_s: 0.05
  failures_to_suspend: 10
{budget}  endpoints:
    - base_url: {url}
      model: replay-coder
      api_key_env: KEVOLVE_TEST_API_KEY
      input_cost_per_mtok: 1.0
      output_cost_per_mtok: 4.0
      read_timeout_s: 20
{extra}"""


def run(args, cwd, env_key=KEY, watch_workers=None):
    env = dict(os.environ)
    if env_key is not None:
        env["KEVOLVE_TEST_API_KEY"] = env_key
    proc = subprocess.Popen([str(BIN), *map(str, args)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    stop = threading.Event()
    if watch_workers is not None:
        def watch():
            while not stop.is_set():
                for pid in os.listdir("/proc"):
                    if not pid.isdigit():
                        continue
                    try:
                        exe = os.readlink(f"/proc/{pid}/exe")
                        if not exe.endswith("kevolve-worker"):
                            continue
                        with open(f"/proc/{pid}/environ", "rb") as f:
                            environ = f.read()
                    except OSError:
                        continue
                    watch_workers.append(environ)
                time.sleep(0.02)
        t = threading.Thread(target=watch, daemon=True)
        t.start()
    out, err = proc.communicate(timeout=600)
    stop.set()
    return proc.returncode, out, err


def llm_rows(store):
    """Every stored exchange: dicts with the strings decoded."""
    rows = []
    with h5py.File(store, "r") as f:
        for name in f["tasks"]:
            g = f["tasks"][name]
            text = g["llm_text"][...].tobytes()
            for r in g["llm"][...]:
                x = {k: r[k].item() for k in ("node", "attempts", "prompt_tokens", "completion_tokens", "cost", "latency_s")}
                x["purpose"] = int(r["purpose"])  # 0 kernel, 1 skill note
                for s in ("endpoint", "model", "status", "error", "prompt", "reply", "documents"):
                    o, n = int(r[s + "_offset"]), int(r[s + "_length"])
                    x[s] = text[o:o + n].decode()
                rows.append(x)
    return rows


def nodes(store):
    out = []
    with h5py.File(store, "r") as f:
        g = f["tasks/0"]
        text = g["text"][...].tobytes()
        for r in g["nodes"][...]:
            s = lambda k: text[int(r[k + "_offset"]):int(r[k + "_offset"]) + int(r[k + "_length"])].decode()
            out.append({"id": int(r["id"]), "parent": int(r["parent"]), "status": int(r["status"]),
                        "state": int(r["state"]), "fitness": float(r["fitness"]), "origin": s("origin"),
                        "reason": s("reason")})
        best = float(g.attrs["best_fitness"])
    return out, best


class LlmDrivenSearch(unittest.TestCase):
    def test_a_search_on_cpu_driven_by_the_llm_path(self):
        script = {"require_key": KEY, "cycle": True, "replies": [
            reply("softmax_plain.md"), reply("no_code.md"), reply("does_not_compile.md"),
            {"status": 429, "headers": {"Retry-After": "1"}, "body": {"error": {"message": "rate limited"}}},
            reply("softmax_fused.md"), {"status": 500}, reply("softmax_plain.md"), {"raw": "{oops"},
            reply("softmax_fused.md")]}
        with tempfile.TemporaryDirectory() as d:
            server = Replay(d, script)
            try:
                cfg = Path(d) / "llm.yaml"
                cfg.write_text(sweep_yaml(endpoint_yaml(server.url), max_evaluations=8))
                workers = []
                rc, out, err = run(["run", cfg, "--store", "llm.h5"], d, watch_workers=workers)
                self.assertEqual(rc, 0, out + err)
                requests = server.requests()
            finally:
                server.stop()
            store = Path(d) / "llm.h5"
            rows = llm_rows(store)
            ns, best = nodes(store)
            statuses = {r["status"] for r in rows}
            self.assertIn("ok", statuses, rows)
            self.assertIn("unusable", statuses, rows)
            unusable = [r for r in rows if r["status"] == "unusable"]
            self.assertEqual(unusable[0]["error"], "the reply has no fenced code block or diff")
            skipped = [n for n in ns if n["id"] == unusable[0]["node"]][0]
            self.assertEqual(skipped["status"], 7)  # skipped, without an evaluation
            self.assertIn("llm reply unusable: the reply has no fenced code block or diff", skipped["reason"])
            by_llm = [n for n in ns if n["origin"] == "llm:replay-coder"]
            self.assertTrue(any(n["status"] == 0 and n["fitness"] > 0 for n in by_llm), ns)
            self.assertTrue(any(n["status"] == 1 for n in by_llm), ns)  # the kernel that does not compile
            self.assertGreater(best, 0)
            retried = [r for r in rows if r["attempts"] > 1]
            self.assertTrue(retried, rows)  # 429, 500 and malformed replies were retried
            for r in rows:
                if r["status"] == "ok" and r["purpose"] == 0:  # a skill note's prompt has no documents
                    self.assertGreater(r["prompt_tokens"], 500)
                    self.assertAlmostEqual(r["cost"], r["prompt_tokens"] * 1e-6 + r["completion_tokens"] * 4e-6, places=12)
                    msgs = json.loads(r["prompt"])
                    self.assertEqual([m["role"] for m in msgs], ["system", "user"])
                    self.assertIn("constraints/cpu.md", r["documents"])
            self.assertTrue(all(q["headers"]["authorization"] == "matched" for q in requests))
            # The key: nowhere but in the requests' Authorization header.
            self.assertTrue(workers, "no kevolve-worker process was seen during the sweep")
            for environ in workers:
                self.assertNotIn(KEY.encode(), environ)
            for path in [p for p in Path(d).iterdir() if p.is_file() and p.name != "script.json"]:
                self.assertNotIn(KEY.encode(), path.read_bytes(), path)
            self.assertNotIn(KEY, out + err)
            exports = {}
            for fmt in ("sft", "dpo", "trajectory"):
                p = subprocess.run([str(BIN), "export", "llm.h5", "--format", fmt, "--out", fmt + ".jsonl"], cwd=d,
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                data = (Path(d) / (fmt + ".jsonl")).read_text()
                self.assertNotIn(KEY, data)
                exports[fmt] = [json.loads(l) for l in data.splitlines()]
            html = subprocess.run([str(BIN), "report", "llm.h5", "--html", "r.html"], cwd=d, capture_output=True, text=True)
            self.assertEqual(html.returncode, 0, html.stderr)
            self.assertNotIn(KEY.encode(), (Path(d) / "r.html").read_bytes())
            by_id = {n["id"]: n for n in ns}
            # trajectory: one task, every node, numbers as stored
            (traj,) = exports["trajectory"]
            self.assertAlmostEqual(traj["best_fitness"], best)
            self.assertEqual([s["node"] for s in traj["steps"]], [n["id"] for n in ns[1:]])
            for s in traj["steps"]:
                self.assertAlmostEqual(s["fitness"], by_id[s["node"]]["fitness"])
                self.assertGreaterEqual(s["reward"], 0)
            self.assertAlmostEqual(sum(s["reward"] for s in traj["steps"]), best, places=9)
            # sft: verified kernels that improved on their parent, as chat messages
            self.assertTrue(exports["sft"], "no sft record")
            for rec in exports["sft"]:
                n = by_id[rec["metadata"]["node"]]
                self.assertEqual(n["status"], 0)
                self.assertAlmostEqual(rec["metadata"]["fitness"], n["fitness"])
                self.assertGreater(n["fitness"], rec["metadata"]["parent_fitness"])
                self.assertEqual([m["role"] for m in rec["messages"]], ["system", "user", "assistant"])
                self.assertIn("kevolve_kernel", rec["messages"][2]["content"])
            for rec in exports["dpo"]:
                m = rec["metadata"]
                self.assertGreater(by_id[m["chosen_node"]]["fitness"], by_id[m["rejected_node"]]["fitness"])
                self.assertEqual(by_id[m["chosen_node"]]["parent"], by_id[m["rejected_node"]]["parent"])
                self.assertTrue(rec["prompt"] and rec["chosen"] and rec["rejected"])
            high = subprocess.run([str(BIN), "export", "llm.h5", "--format", "sft", "--min-fitness", "1000"], cwd=d,
                                  capture_output=True, text=True)
            self.assertEqual(high.stdout, "")
            for flt, same in ((["--operator", "ts_softmax", "--backend", "cpu"], True), (["--operator", "softmax"], False),
                              (["--backend", "cuda"], False)):
                p = subprocess.run([str(BIN), "export", "llm.h5", "--format", "trajectory", *flt], cwd=d,
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(len(p.stdout.splitlines()), 1 if same else 0, flt)
            self.check_skills_are_written_back(d, best, ns)

    def check_skills_are_written_back(self, d, best, ns):
        """kb promote turns the sweep into a skill document that a later
        sweep's prompts retrieve (in a copy of KEVOLVE_HOME)."""
        home = Path(d) / "home"
        for part in ("config", "knowledge", "src/abi"):
            shutil.copytree(ROOT / part, home / part)
        env = dict(os.environ, KEVOLVE_HOME=str(home))
        p = subprocess.run([str(BIN), "kb", "promote", "llm.h5", "--min-speedup", "0.01"], cwd=d, env=env,
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        (skill,) = list((home / "knowledge" / "skills").glob("ts_softmax-*-cpu.md"))
        text = skill.read_text()
        self.assertIn("level: skill", text)
        self.assertIn("classes: [row_reduction]", text)
        best_node = max((n for n in ns if n["status"] == 0), key=lambda n: n["fitness"])
        self.assertIn("best node %d at %.3fx" % (best_node["id"], best), text)
        self.assertNotIn(KEY, text)
        p = subprocess.run([str(BIN), "kb", "search", "ts_softmax", "--backend", "cpu"], env=env, capture_output=True, text=True)
        self.assertIn("skills/" + skill.name, p.stdout)
        (Path(d) / "again").mkdir()
        server = Replay(Path(d) / "again", {"require_key": KEY, "cycle": True, "replies": [reply("softmax_fused.md")]})
        try:
            cfg = Path(d) / "again.yaml"
            cfg.write_text(sweep_yaml(endpoint_yaml(server.url), max_evaluations=2))
            env["KEVOLVE_TEST_API_KEY"] = KEY
            r = subprocess.run([str(BIN), "run", cfg, "--store", "again.h5"], cwd=d, env=env, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        finally:
            server.stop()
        rows = llm_rows(Path(d) / "again.h5")
        self.assertTrue(rows)
        self.assertIn("skills/" + skill.name, rows[0]["documents"])
        self.assertIn("Strategies that worked before", json.loads(rows[0]["prompt"])[1]["content"])


class Fallback(unittest.TestCase):
    def test_no_endpoint_means_builtin_said_once(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "none.yaml"
            cfg.write_text(sweep_yaml("", max_evaluations=4))
            rc, out, err = run(["run", cfg, "--store", "none.h5"], d)
            self.assertEqual(rc, 0, out + err)
            self.assertEqual(err.count("no endpoint is configured (llm.endpoints)"), 1, err)
            ns, _ = nodes(Path(d) / "none.h5")
            self.assertTrue(all(n["origin"].startswith("builtin:") for n in ns[1:]), ns)
            self.assertEqual(llm_rows(Path(d) / "none.h5"), [])

    def test_bad_credentials_stop_the_endpoint_said_once_and_the_sweep_goes_on(self):
        with tempfile.TemporaryDirectory() as d:
            server = Replay(d, {"require_key": "another-key", "replies": [reply("softmax_plain.md")]})
            try:
                cfg = Path(d) / "bad.yaml"
                cfg.write_text(sweep_yaml(endpoint_yaml(server.url), max_evaluations=4))
                rc, out, err = run(["run", cfg, "--store", "bad.h5"], d)
                self.assertEqual(rc, 0, out + err)
                # Only the requests already in flight (max_in_flight: 2) reach the server.
                self.assertLessEqual(len(server.requests()), 2)
            finally:
                server.stop()
            self.assertEqual(err.count("refused the credentials in $KEVOLVE_TEST_API_KEY"), 1, err)
            self.assertNotIn(KEY, out + err)
            ns, _ = nodes(Path(d) / "bad.h5")
            self.assertTrue(all(n["origin"].startswith("builtin:") for n in ns[1:] if n["state"] == 1), ns)
            self.assertNotIn(KEY.encode(), (Path(d) / "bad.h5").read_bytes())

    def test_the_budget_stops_spending(self):
        with tempfile.TemporaryDirectory() as d:
            server = Replay(d, {"require_key": KEY, "replies": [reply("softmax_plain.md")]})
            try:
                cfg = Path(d) / "budget.yaml"
                llm = endpoint_yaml(server.url, budget="  budget: {tokens: 100}\n").replace("max_in_flight: 2", "max_in_flight: 1")
                cfg.write_text(sweep_yaml(llm, max_evaluations=5))
                rc, out, err = run(["run", cfg, "--store", "budget.h5"], d)
                self.assertEqual(rc, 0, out + err)
                self.assertEqual(len(server.requests()), 1)
            finally:
                server.stop()
            self.assertEqual(err.count("the sweep's token budget is spent"), 1, err)
            rows = llm_rows(Path(d) / "budget.h5")
            self.assertEqual(len(rows), 1)
            ns, _ = nodes(Path(d) / "budget.h5")
            self.assertEqual(sum(n["origin"].startswith("llm:") for n in ns), 1)
            self.assertGreater(sum(n["origin"].startswith("builtin:") for n in ns), 2)


class KnowledgeCommands(unittest.TestCase):
    def test_kb_list_and_search(self):
        p = subprocess.run([str(BIN), "kb", "list"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        for doc in ("constraints/cpu.md", "guides/debugging.md", "hardware/h200/memory-hierarchy.md",
                    "hardware/mi300x/architecture.md", "hardware/mtia2i/engines.md", "hardware/x86/memory-hierarchy.md"):
            self.assertIn(doc, p.stdout)
        p = subprocess.run([str(BIN), "kb", "search", "memory", "bandwidth", "--trigger", "memory_bound", "--backend", "cpu",
                            "--hardware", "x86"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("hardware/x86/memory-hierarchy.md", p.stdout.splitlines()[0])
        p = subprocess.run([str(BIN), "kb", "search"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("kb search: expected a query or --trigger", p.stderr)

    def test_bad_llm_config_is_refused_naming_the_key(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "bad.yaml"
            cfg.write_text(sweep_yaml("""llm:
  endpoints:
    - base_url: 127.0.0.1:8000
      model: m
      api_key_env: sk-abc123-not-a-name
"""))
            p = subprocess.run([str(BIN), "run", cfg, "--store", "x.h5"], cwd=d, capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("'llm.endpoints[0].base_url' must start with http:// or https://", p.stderr)
            self.assertIn("'llm.endpoints[0].api_key_env' must be the NAME of an environment variable", p.stderr)
            self.assertNotIn("sk-abc123", p.stderr)
            self.assertFalse((Path(d) / "x.h5").exists())


if __name__ == "__main__":
    unittest.main(verbosity=2)
