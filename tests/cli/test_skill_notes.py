#!/usr/bin/python3
"""Skill notes of the llm synthesizer end to end against
tests/llm/replay_server.py: an improvement gets a note from the LLM, stored
with its evidence; a note over llm.skill_note_chars is refused with the
reason; `kevolve kb promote` writes the notes into the task's skill
document and `kevolve kb search` finds it; `kevolve run --seed-from STORE`
hands the store's skills (notes included) to the next sweep's prompts
without promote; the API key appears nowhere.

Run by CTest (test llm_skill_notes); by hand:
    KEVOLVE_BIN=$PWD/build/kevolve .venv/bin/python tests/cli/test_skill_notes.py
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import h5py

from test_llm import BIN, DATA, KEY, ROOT, Replay, endpoint_yaml, llm_rows, nodes, reply, run, sweep_yaml


def skill_rows(store):
    """The stored skill notes, strings decoded, evidence parsed."""
    rows = []
    with h5py.File(store, "r") as f:
        g = f["tasks/0"]
        text = g["skills_text"][...].tobytes()
        for r in g["skills"][...]:
            x = {k: r[k].item() for k in ("node", "parent", "exchange", "accepted", "parent_fitness", "child_fitness")}
            for s in ("note", "reason", "hardware", "evidence"):
                o, n = int(r[s + "_offset"]), int(r[s + "_length"])
                x[s] = text[o:o + n].decode()
            x["evidence"] = json.loads(x["evidence"])
            rows.append(x)
        purposes = [int(p) for p in g["llm"]["purpose"]]
    return rows, purposes


def measurements(store):
    with h5py.File(store, "r") as f:
        g = f["tasks/0"]
        text = g["text"][...].tobytes()
        out = {}
        for r in g["measurements"][...]:
            shape = text[int(r["shape_offset"]):int(r["shape_offset"]) + int(r["shape_length"])].decode()
            out[(int(r["node"]), shape)] = float(r["candidate_median_s"])
        return out


NOTE = (DATA / "llm" / "note_fused.md").read_text().strip()


class SkillNotes(unittest.TestCase):
    """An improvement under the llm synthesizer gets a note from the LLM:
    stored with its evidence, refused with the reason when too long,
    promoted into a skill document that `kb search` finds, and used by a
    later sweep that names the store in --seed-from."""

    def sweep(self, d, name, note_chars=None, seed_from=None, max_evaluations=4):
        """A sequential sweep (one request and one evaluation at a time):
        the first kernel is slow, the next ones are fused, so node 2 (grown
        from node 1) improves on the best."""
        (Path(d) / name).mkdir()
        server = Replay(Path(d) / name, {"require_key": KEY, "replies": [reply("softmax_slow.md"), reply("softmax_fused.md")],
                                         "when": [{"contains": "decisive change", "replies": [reply("note_fused.md")]}]})
        try:
            llm = endpoint_yaml(server.url).replace("max_in_flight: 2", "max_in_flight: 1")
            if note_chars is not None:
                llm = llm.replace("  retries: 3\n", "  retries: 3\n  skill_note_chars: %d\n" % note_chars)
            cfg = Path(d) / (name + ".yaml")
            cfg.write_text(sweep_yaml(llm, max_evaluations).replace("  memory: adaptive\n", "  memory: adaptive\n  max_in_flight: 1\n"))
            rc, out, err = run(["run", cfg, "--store", name + ".h5", *(["--seed-from", seed_from] if seed_from else [])], d)
            self.assertEqual(rc, 0, out + err)
            self.assertNotIn(KEY, out + err)
            return Path(d) / (name + ".h5"), server.requests(), out
        finally:
            server.stop()

    def test_notes_are_stored_refused_promoted_found_and_seeded(self):
        with tempfile.TemporaryDirectory() as d:
            store, requests, _ = self.sweep(d, "notes")
            ns, _ = nodes(store)
            by_id = {n["id"]: n for n in ns}
            skills, purposes = skill_rows(store)
            rows = llm_rows(store)
            self.assertTrue(skills, ns)
            asked = [q for q in requests if "decisive change" in q["body"]]
            self.assertEqual(len(asked), len(skills))
            times = measurements(store)
            for k in skills:
                child, parent = by_id[k["node"]], by_id[k["parent"]]
                # An improvement on the best so far, grown from another node (requests were sequential).
                self.assertEqual(child["parent"], parent["id"])
                self.assertGreater(parent["id"], 0)
                self.assertGreater(child["fitness"], max(n["fitness"] for n in ns if 0 < n["id"] < child["id"]))
                self.assertEqual((k["accepted"], k["note"], k["reason"], k["hardware"]), (1, NOTE, "", "x86"))
                self.assertAlmostEqual(k["child_fitness"], child["fitness"])
                self.assertAlmostEqual(k["parent_fitness"], parent["fitness"])
                ev = k["evidence"]
                self.assertEqual((ev["operator"], ev["variant"], ev["class"], ev["backend"], ev["hardware"], ev["model"]),
                                 ("ts_softmax", "fp32", "row_reduction", "cpu", "x86", "replay-coder"))
                for side, n in (("parent", parent), ("child", child)):
                    self.assertEqual((ev[side]["node"], ev[side]["origin"], ev[side]["status"]), (n["id"], n["origin"], "ok"))
                    self.assertAlmostEqual(ev[side]["fitness"], n["fitness"])
                    self.assertTrue(ev[side]["shapes"])
                    for m in ev[side]["shapes"]:
                        self.assertAlmostEqual(m["median_s"], times[(n["id"], m["shape"])])
                # The request is an exchange of the node like the others, marked as a note.
                x = rows[k["exchange"]]
                self.assertEqual((purposes[k["exchange"]], x["node"], x["status"], x["reply"].strip()), (1, k["node"], "ok", NOTE))
                prompt = json.loads(x["prompt"])[1]["content"]
                self.assertIn("Parent: node %d" % parent["id"], prompt)
                self.assertIn("Child: node %d" % child["id"], prompt)
                self.assertGreater(x["prompt_tokens"], 100)
            self.assertEqual(sum(purposes), len(skills))
            # Notes are not kernels: the exports leave them out.
            p = subprocess.run([str(BIN), "export", store, "--format", "sft"], cwd=d, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn("decisive change", p.stdout)

            # A note over llm.skill_note_chars is refused, with the reason kept.
            long_store, long_requests, long_out = self.sweep(d, "long", note_chars=100)
            refused, _ = skill_rows(long_store)
            long_nodes, _ = nodes(long_store)
            self.assertTrue(refused, "no skill row; nodes: %s; llm rows: %s; requests: %s; output: %s" % (
                [(n["id"], n["parent"], n["status"], n["fitness"], n["reason"][:120]) for n in long_nodes],
                [(r["node"], r["status"], r["error"][:120]) for r in llm_rows(long_store)],
                [q["body"][-200:] for q in long_requests], long_out[-3000:]))
            why = "the note has %d characters, over the limit of 100 (llm.skill_note_chars)" % len(NOTE)
            for k in refused:
                self.assertEqual((k["accepted"], k["note"], k["reason"]), (0, "", why))
                self.assertEqual((llm_rows(long_store)[k["exchange"]]["status"], llm_rows(long_store)[k["exchange"]]["error"]),
                                 ("unusable", why))

            # kb promote writes the note into the task's skill document; kb search finds it.
            home = Path(d) / "home"
            for part in ("config", "knowledge", "src/abi"):
                shutil.copytree(ROOT / part, home / part, ignore=shutil.ignore_patterns("skills"))
            env = dict(os.environ, KEVOLVE_HOME=str(home))
            for promoted in (store, long_store):
                p = subprocess.run([str(BIN), "kb", "promote", promoted, "--min-speedup", "0.01", "--dir",
                                    home / "knowledge" / "skills" / promoted.stem], cwd=d, env=env, capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
            text = (home / "knowledge" / "skills" / "notes" / "ts_softmax-fp32-cpu.md").read_text()
            k = skills[0]
            self.assertIn("- node %d (%.3fx) -> node %d (%.3fx, replay-coder, x86): %s" %
                          (k["parent"], k["parent_fitness"], k["node"], k["child_fitness"], NOTE), text)
            self.assertNotIn(NOTE, (home / "knowledge" / "skills" / "long" / "ts_softmax-fp32-cpu.md").read_text())
            p = subprocess.run([str(BIN), "kb", "search", "recomputed exp running sum vectorised", "--backend", "cpu"],
                               env=env, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("skills/notes/ts_softmax-fp32-cpu.md", p.stdout.splitlines()[0])
            self.assertNotIn(KEY, text + p.stdout)

            # --seed-from: without promote, the store's skills (its note
            # included) reach the next sweep's prompts.
            seeded, _, out = self.sweep(d, "seeded", seed_from=store.name, max_evaluations=3)
            self.assertIn("1 skill(s) from the --seed-from stores start the synthesizers", out)
            kernel_rows = [r for r, p in zip(llm_rows(seeded), skill_rows(seeded)[1]) if p == 0]
            self.assertTrue(kernel_rows)
            for r in kernel_rows:
                self.assertIn("notes.h5#ts_softmax-fp32-cpu.md", r["documents"])
                self.assertIn(NOTE, json.loads(r["prompt"])[1]["content"])

            for path in [p for p in Path(d).rglob("*") if p.is_file() and p.name != "script.json"]:
                self.assertNotIn(KEY.encode(), path.read_bytes(), path)


if __name__ == "__main__":
    unittest.main(verbosity=2)
