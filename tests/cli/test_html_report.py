#!/usr/bin/python3
"""kevolve report --html end to end: the report of a real small sweep, of a
synthetic 10,000-node tree, of a tiny sweep driven by the llm synthesizer
against tests/llm/replay_server.py and of a tiny mtia_emu sweep (profiles), rendered in headless Chromium (driven
over the DevTools pipe, tests/cli/chromium.py). Checks a screenshot, the tree
in the DOM against the store (read with h5py), the best path, that the page
makes no request, that its numbers are those of the CSV and of the store, and
that an LLM node shows the prompt and reply stored for it.

Run by CTest (test html_report) with KEVOLVE_BIN etc. set; by hand:
    KEVOLVE_BIN=build/kevolve KEVOLVE_SYNTHETIC_STORE=build/kevolve-test-synthetic-store \\
        .venv/bin/python tests/cli/test_html_report.py
"""
import csv
import io
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

import h5py

sys.path.insert(0, str(Path(__file__).resolve().parent))
import chromium  # noqa: E402
import test_llm  # noqa: E402  (the replay server's helpers)

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve")
SYNTHETIC = Path(os.environ.get("KEVOLVE_SYNTHETIC_STORE") or ROOT / "build" / "kevolve-test-synthetic-store")
DATA = Path(os.environ.get("KEVOLVE_TEST_DATA") or ROOT / "tests" / "data")
STATUSES = ["ok", "compile_failed", "wrong_result", "runtime_failed", "timeout", "crashed", "suspicious", "skipped",
            "compile_only"]


def setUpModule():
    if not chromium.find_chromium():
        raise unittest.SkipTest("chromium is not installed: the HTML report is not rendered "
                                "(scripts/install-deps.sh installs Debian's chromium package)")


def kevolve(*args, cwd, timeout=600):
    p = subprocess.run([str(BIN), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError(f"kevolve {' '.join(map(str, args))}: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def store_tasks(path):
    """Per task, straight from the HDF5 file: nodes, code, measurements."""
    tasks = []
    with h5py.File(path, "r") as f:
        for k in range(int(f.attrs["task_count"])):
            g = f["tasks"][str(k)]
            ident = g.attrs["id"]
            nodes, text, meas = g["nodes"][...], g["text"][...], g["measurements"][...]
            tasks.append({"id": ident.decode() if isinstance(ident, bytes) else str(ident), "nodes": nodes,
                          "text": bytes(text), "measurements": meas})
    return tasks


def expected_summary(task):
    """The summary's numbers computed here from the raw store rows."""
    n = task["nodes"]
    evaluated = n[(n["state"] == 1) & (n["id"] != 0)]
    ok = evaluated[evaluated["status"] == 0]
    best = int(ok["id"][ok["fitness"].argmax()]) if len(ok) else -1
    m = task["measurements"]
    timed = m[(m["node"] == best) & (m["holdout"] == 0)]
    failures = {STATUSES[s]: int((evaluated["status"] == s).sum()) for s in range(1, len(STATUSES))}
    return {"evaluations": len(evaluated), "correct": len(ok), "best_node": best,
            "best_speedup": float(ok["fitness"].max()) if len(ok) else 0.0,
            "best_roofline_fraction": float(timed["roofline_fraction"].min()) if len(timed) else 0.0,
            "failures": {k: v for k, v in failures.items() if v}}


def best_path(task, best):
    parent = {int(r["id"]): int(r["parent"]) for r in task["nodes"]}
    path = [best]
    while path[-1] != 0:
        path.append(parent[path[-1]])
    return sorted(path)


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def sweep_yaml(operators, max_evaluations):
    ops = ", ".join(str(DATA / "operators" / f"{o}.yaml") for o in operators)
    return f"""sweep:
  operators: [{ops}]
  backends: [cpu]
  synthesizer: builtin
  seed: 3
search:
  policy: uct
  memory: adaptive
  stop: {{max_evaluations: {max_evaluations}, stagnation: {max_evaluations}}}
evaluator:
  torch_baselines: off  # PyTorch as the yardstick has its own tests (test_run.py, torch_baseline_test)
  budget: 0.03
  timeout_ms: 5000
checkpoint:
  every_seconds: 30
"""


class SmallSweepReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        d = Path(cls.dir.name)
        (d / "small.yaml").write_text(sweep_yaml(["ts_softmax", "ts_gemm_bias_relu"], max_evaluations=6))
        kevolve("run", d / "small.yaml", "--store", "small.h5", cwd=d)
        cls.csv_text = kevolve("report", "small.h5", "--csv", "--html", "small.html", cwd=d).stdout
        cls.markdown = kevolve("report", "small.h5", "--markdown", cwd=d).stdout
        cls.html_path = d / "small.html"
        cls.html = cls.html_path.read_text()
        cls.tasks = store_tasks(d / "small.h5")
        cls.browser = chromium.Chromium(width=1400, height=1000)
        cls.load_seconds = cls.browser.load(cls.html_path.as_uri())
        cls.png = cls.browser.screenshot()
        (d / "small.png").write_bytes(cls.png)

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.dir.cleanup()

    def js(self, expression):
        return self.browser.eval(expression)

    def test_a_screenshot_of_the_page_is_taken(self):
        width, height = png_size(self.png)
        self.assertGreaterEqual(width, 1000)
        self.assertGreater(height, 1500, "the page should hold the summary, the trees and the charts")
        self.assertGreater(len(self.png), 40_000, "a screenshot this small is an empty page")
        self.assertEqual(self.browser.problems(), [], "console errors, exceptions or CSP violations")

    def test_every_node_of_the_store_is_drawn_in_its_tree(self):
        for k, task in enumerate(self.tasks):
            drawn = self.js(f"Array.from(document.querySelectorAll('details.task[data-task-index=\"{k}\"] "
                            f"svg.tree circle.node')).map(c => Number(c.dataset.id)).sort((a, b) => a - b)")
            self.assertEqual(drawn, sorted(int(i) for i in task["nodes"]["id"]), task["id"])
            self.assertEqual(len(drawn), len(task["nodes"]))

    def test_the_best_path_is_marked(self):
        for k, task in enumerate(self.tasks):
            best = expected_summary(task)["best_node"]
            self.assertGreater(best, 0, f"{task['id']}: the sweep found no correct kernel")
            q = f"details.task[data-task-index=\"{k}\"] svg.tree circle.node"
            marked = self.js(f"Array.from(document.querySelectorAll('{q}[data-best-path=\"1\"]'))"
                             ".map(c => Number(c.dataset.id)).sort((a, b) => a - b)")
            self.assertEqual(marked, best_path(task, best), task["id"])
            self.assertEqual(self.js(f"Array.from(document.querySelectorAll('{q}.best')).map(c => Number(c.dataset.id))"),
                             [best])
            # the edges of the path are drawn apart: one segment per step
            segments = self.js(f"document.querySelector('details.task[data-task-index=\"{k}\"] svg.tree path.edge.best-path')"
                               ".getAttribute('d').split('M').length - 1")
            self.assertEqual(segments, len(marked) - 1)

    def test_no_request_leaves_the_page(self):
        self.assertEqual(self.browser.requests(), [self.html_path.as_uri()])
        self.assertIn("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
                      "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">", self.html)
        self.assertIsNone(re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", self.html, re.I))
        # The recorder sees requests: a page that loads an image is caught.
        control = Path(self.dir.name) / "control.html"
        control.write_text('<!DOCTYPE html><img src="http://example.invalid/x.png"><script>document.body.dataset.ready="1"'
                           "</script>")
        other = chromium.Chromium(width=400, height=300)
        try:
            other.load(control.as_uri())
            time.sleep(0.3)
            self.assertIn("http://example.invalid/x.png", other.requests())
        finally:
            other.close()

    def test_the_numbers_are_those_of_the_csv_and_the_store(self):
        rows = list(csv.DictReader(io.StringIO(self.csv_text)))
        self.assertEqual([r["task"] for r in rows], [t["id"] for t in self.tasks])
        for k, (row, task) in enumerate(zip(rows, self.tasks)):
            cells = self.js(f"Object.fromEntries(Array.from(document.querySelectorAll('#kv-summary tbody tr')[{k}]"
                            ".querySelectorAll('td[data-field]')).map(c => [c.dataset.field, c.dataset.value ?? c.textContent]))")
            want = expected_summary(task)
            for field in ("best_speedup", "best_roofline_fraction"):
                self.assertAlmostEqual(float(cells[field]), want[field], places=12, msg=f"{task['id']} {field} vs store")
                self.assertAlmostEqual(float(cells[field]), float(row[field]), places=4, msg=f"{task['id']} {field} vs CSV")
            for field in ("evaluations", "correct"):
                self.assertEqual(int(cells[field]), want[field], f"{task['id']} {field} vs store")
                self.assertEqual(int(cells[field]), int(row[field]), f"{task['id']} {field} vs CSV")
            self.assertEqual(int(cells["evaluations_to_90pct"]), int(row["evaluations_to_90pct"]))
            self.assertAlmostEqual(float(cells["seconds"]), float(row["seconds"]), places=1)
            self.assertEqual(cells["stop_reason"], row["stop_reason"])
            shown = {f[len("failures_"):]: int(v) for f, v in cells.items() if f.startswith("failures_") and int(v)}
            self.assertEqual(shown, want["failures"])
            csv_failures = dict((p.rsplit(" ", 1)[0], int(p.rsplit(" ", 1)[1])) for p in row["failures"].split(", ") if p)
            self.assertEqual(shown, csv_failures)
            self.assertIn(f"| {task['id']} | {want['best_speedup']:.2f}x |", self.markdown)
            text = self.js(f"document.querySelectorAll('#kv-summary tbody tr')[{k}].textContent")
            self.assertIn(f"{want['best_speedup']:.2f}x", text)
        self.assertNotIn("LLM", self.js("document.querySelector('#kv-summary thead').textContent"),
                         "a sweep without an LLM has no LLM columns")
        geomean = math.exp(sum(math.log(expected_summary(t)["best_speedup"]) for t in self.tasks) / len(self.tasks))
        self.assertIn(f"geometric mean of the best speedups: {geomean:.2f}x", self.js("document.body.textContent"))

    def test_clicking_a_node_shows_its_code_and_measurements(self):
        task = self.tasks[1]
        best = expected_summary(task)["best_node"]
        row = task["nodes"][best]
        code = task["text"][int(row["code_offset"]):int(row["code_offset"]) + int(row["code_length"])].decode()
        self.js(f"document.querySelector('details.task[data-task-index=\"1\"] svg.tree circle.node[data-id=\"{best}\"]')"
                ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        panel = "document.querySelector('details.task[data-task-index=\"1\"] .node-panel')"
        self.assertEqual(self.js(panel + ".querySelector('pre.code').textContent"), code)
        self.assertIn(f"node {best} (best)", self.js(panel + ".querySelector('h3').textContent"))
        rows = int((task["measurements"]["node"] == best).sum())
        self.assertEqual(self.js(panel + ".querySelectorAll('table')[1].querySelectorAll('tr').length - 1"), rows)
        # hovering shows the measurements too
        self.js(f"document.querySelector('details.task[data-task-index=\"1\"] svg.tree circle.node[data-id=\"{best}\"]')"
                ".dispatchEvent(new MouseEvent('mouseover', {bubbles: true}))")
        tip = self.js("document.getElementById('kv-tooltip').textContent")
        self.assertIn(f"node {best} · ok · fitness {float(row['fitness']):.3f}x", tip)
        self.assertIn("of roofline", tip)

    def test_bad_options_and_missing_stores_are_refused_and_nothing_is_written(self):
        d = Path(self.dir.name)
        p = subprocess.run([str(BIN), "report", "small.h5", "--csv", "--markdown"], cwd=d, capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--markdown and --csv", p.stderr)
        p = subprocess.run([str(BIN), "report", "missing.h5", "--html", "missing.html"], cwd=d, capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("missing.h5", p.stderr)
        self.assertFalse((d / "missing.html").exists())

    def test_the_charts_show_every_evaluation_and_the_best_kernel_on_the_roofline(self):
        for k, task in enumerate(self.tasks):
            want = expected_summary(task)
            xlabel = self.js(f"document.querySelectorAll('details.task[data-task-index=\"{k}\"] svg.chart')[0].textContent")
            self.assertIn(f"evaluation (1 to {want['evaluations']},", xlabel)
            m = task["measurements"]
            timed = int(((m["node"] == want["best_node"]) & (m["holdout"] == 0)).sum())
            q = f"details.task[data-task-index=\"{k}\"] svg.chart"
            self.assertEqual(self.js(f"document.querySelectorAll('{q} .best-point').length"), timed)
            self.assertEqual(self.js(f"document.querySelectorAll('{q} .baseline-point').length"), timed)


class LlmSweepReport(unittest.TestCase):
    """A node written by the llm synthesizer shows what was sent and what came back."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        d = Path(cls.dir.name)
        # a usable kernel, a reply without code, then the fused kernel for every later request
        script = {"require_key": test_llm.KEY, "replies": [
            test_llm.reply("softmax_plain.md"), test_llm.reply("no_code.md"), test_llm.reply("softmax_fused.md")]}
        server = test_llm.Replay(d, script)
        try:
            (d / "llm.yaml").write_text(test_llm.sweep_yaml(test_llm.endpoint_yaml(server.url), max_evaluations=3))
            rc, out, err = test_llm.run(["run", d / "llm.yaml", "--store", "llm.h5"], d)
            assert rc == 0, out + err
        finally:
            server.stop()
        kevolve("report", "llm.h5", "--html", "llm.html", cwd=d)
        cls.html_path = d / "llm.html"
        cls.rows = test_llm.llm_rows(d / "llm.h5")
        cls.browser = chromium.Chromium(width=1400, height=1000)
        cls.browser.load(cls.html_path.as_uri())

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.dir.cleanup()

    def js(self, expression):
        return self.browser.eval(expression)

    def open_node(self, node):
        self.js(f"document.querySelector('details.task[data-task-index=\"0\"] svg.tree circle.node[data-id=\"{node}\"]')"
                ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        return "document.querySelector('details.task[data-task-index=\"0\"] .node-panel')"

    def shown(self, panel, field):
        return self.js(f"{panel}.querySelector('tr[data-field=\"{field}\"] td').textContent")

    def test_an_llm_node_shows_the_stored_prompt_and_reply(self):
        ok = [r for r in self.rows if r["status"] == "ok"]
        self.assertTrue(ok, self.rows)
        x = ok[0]
        panel = self.open_node(x["node"])
        self.assertEqual(self.js(f"{panel}.querySelectorAll('div.llm-exchange').length"),
                         sum(r["node"] == x["node"] for r in self.rows))
        self.assertEqual(self.js(f"{panel}.querySelector('details.llm-reply pre').textContent"), x["reply"])
        self.assertIn("kevolve_kernel", x["reply"])
        messages = json.loads(x["prompt"])
        self.assertEqual([m["role"] for m in messages], ["system", "user"])
        summaries = self.js(f"Array.from({panel}.querySelectorAll('details.llm-message > summary')).map(s => s.textContent)")
        self.assertEqual(summaries, [f"{m['role']} · {len(m['content'])} characters" for m in messages])
        # the messages are rendered when opened, not before
        pres = f"Array.from({panel}.querySelectorAll('details.llm-message pre'))"
        self.assertEqual(self.js(f"{pres}.map(p => p.textContent)"), ["", ""])
        self.js(f"{panel}.querySelector('details.llm-prompt').open = true;"
                f" {panel}.querySelectorAll('details.llm-message').forEach(d => {{ d.open = true; }})")
        deadline = time.monotonic() + 10
        while not self.js(f"{pres}.every(p => p.dataset.filled === '1')") and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(self.js(f"{pres}.map(p => p.textContent)"), [m["content"] for m in messages])
        self.assertEqual(self.shown(panel, "outcome"), "usable")
        self.assertEqual(self.shown(panel, "tokens"), f"{x['prompt_tokens']} / {x['completion_tokens']}")
        self.assertEqual(self.shown(panel, "cost"), f"{x['cost']:.6f}" if x["cost"] < 0.01 else f"{x['cost']:.4f}")
        self.assertEqual(self.shown(panel, "attempts"), str(x["attempts"]))
        self.assertGreater(x["latency_s"], 0)
        self.assertRegex(self.shown(panel, "latency"), r"^\d+(\.\d+)? (ns|µs|ms|s)\b")
        documents = [p for p in x["documents"].split("\n") if p]
        self.assertIn("constraints/cpu.md", documents)
        self.assertEqual(self.js(f"{panel}.querySelector('tr[data-field=\"documents\"] td').innerText").split("\n"),
                         documents)

    def test_an_unusable_reply_says_why(self):
        unusable = [r for r in self.rows if r["status"] == "unusable"]
        self.assertTrue(unusable, self.rows)
        x = unusable[0]
        panel = self.open_node(x["node"])
        self.assertEqual(self.shown(panel, "outcome"), "not usable")
        self.assertEqual(self.shown(panel, "error"), "the reply has no fenced code block or diff")
        self.assertEqual(self.js(f"{panel}.querySelector('details.llm-reply pre').textContent"), x["reply"])

    def test_the_summary_shows_the_llm_spending_of_the_store(self):
        cells = self.js("Object.fromEntries(Array.from(document.querySelectorAll('#kv-summary tbody tr')[0]"
                        ".querySelectorAll('td[data-field]')).map(c => [c.dataset.field, c.dataset.value]))")
        self.assertEqual(int(cells["llm_requests"]), len(self.rows))
        self.assertEqual(int(cells["llm_prompt_tokens"]), sum(r["prompt_tokens"] for r in self.rows))
        self.assertEqual(int(cells["llm_completion_tokens"]), sum(r["completion_tokens"] for r in self.rows))
        self.assertAlmostEqual(float(cells["llm_cost"]), sum(r["cost"] for r in self.rows), places=12)

    def test_no_request_leaves_the_page_and_the_key_is_not_in_it(self):
        self.assertEqual(self.browser.requests(), [self.html_path.as_uri()])
        self.assertEqual(self.browser.problems(), [])
        self.assertNotIn(test_llm.KEY.encode(), self.html_path.read_bytes())


class ProfiledSweepReport(unittest.TestCase):
    """A sweep on mtia_emu, whose evaluator profiles every timed shape: a
    node's panel lists the profile lines the store keeps for its shapes."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        d = Path(cls.dir.name)
        (d / "emu.yaml").write_text(sweep_yaml(["ts_softmax"], max_evaluations=2).replace("[cpu]", "[mtia_emu]"))
        kevolve("run", d / "emu.yaml", "--store", "emu.h5", cwd=d)
        kevolve("report", "emu.h5", "--html", "emu.html", cwd=d)
        cls.task = store_tasks(d / "emu.h5")[0]
        cls.browser = chromium.Chromium(width=1400, height=1000)
        cls.browser.load((d / "emu.html").as_uri())

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.dir.cleanup()

    def test_a_node_panel_lists_the_stored_profile_lines(self):
        m, text = self.task["measurements"], self.task["text"]
        node = int(m["node"][0])

        def cut(r, field):
            o, n = int(r[field + "_offset"]), int(r[field + "_length"])
            return text[o:o + n].decode()

        want = [f"{cut(r, 'shape')}: {cut(r, 'profile')}" for r in m if int(r["node"]) == node and r["profile_length"]]
        self.assertTrue(want, "mtia_emu profiles every timed shape")
        self.browser.eval(f"document.querySelector('svg.tree circle.node[data-id=\"{node}\"]')"
                          ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        got = self.browser.eval("[...document.querySelectorAll('.node-panel li')].map((li) => li.textContent)")
        self.assertEqual(got, want)
        self.assertIn("busy:", want[0])


class LargeTreeReport(unittest.TestCase):
    """10,000 evaluated nodes: the page opens quickly and stays usable."""

    def test_a_10000_node_tree_opens_collapsed_and_expands(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([str(SYNTHETIC), "big.h5", "10000"], cwd=d, check=True, capture_output=True)
            start = time.monotonic()
            kevolve("report", "big.h5", "--html", "big.html", cwd=d)
            write_seconds = time.monotonic() - start
            html = Path(d) / "big.html"
            nodes = store_tasks(Path(d) / "big.h5")[0]["nodes"]
            total = len(nodes)
            self.assertEqual(total, 10001)
            b = chromium.Chromium(width=1400, height=1000)
            try:
                seconds = b.load(html.as_uri(), timeout=60)
                render_ms = int(b.eval("Number(document.body.dataset.renderMs)"))
                print(f"\n10,000-node report: {html.stat().st_size / 1e6:.1f} MB written in {write_seconds:.2f} s; "
                      f"opened in {seconds:.2f} s (script {render_ms} ms)", file=sys.stderr)
                self.assertLess(seconds, 20, "the page must open in seconds, not minutes")
                count = "document.querySelectorAll('svg.tree circle.node').length"
                self.assertEqual(b.eval("Number(document.querySelector('svg.tree').dataset.total)"), total)
                visible = b.eval(count)
                self.assertLess(visible, total, "a tree this large starts with deeper levels collapsed")
                self.assertLess(visible, 3000)
                # a collapsed node opens on double-click: its children appear (themselves collapsed)
                node = b.eval("Number(document.querySelector('svg.tree circle.node.collapsed').dataset.id)")
                children = int((nodes["parent"] == node).sum())
                self.assertGreater(children, 0)
                b.eval(f"document.querySelector('svg.tree circle.node[data-id=\"{node}\"]')"
                       ".dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))")
                self.assertEqual(b.eval(count), visible + children)
                # status filters hide failed leaves
                failed = "document.querySelectorAll('svg.tree circle.node[data-category=\"failed\"]').length"
                before = b.eval(failed)
                b.eval("const f = document.querySelector('input[data-category=\"failed\"]'); f.checked = false;"
                       " f.dispatchEvent(new Event('change', {bubbles: true}))")
                self.assertLess(b.eval(failed), before)
                start = time.monotonic()
                b.eval("document.querySelector('input[data-category=\"failed\"]').click();"
                       " document.querySelector('button[data-action=\"expand-tree\"]').click()")
                self.assertEqual(b.eval(count), total, "expand all draws every node")
                self.assertLess(time.monotonic() - start, 5)
                self.assertEqual(b.requests(), [html.as_uri()])
                self.assertEqual(b.problems(), [])
            finally:
                b.close()


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)
