#!/usr/bin/env python3
"""The same candidates get the same verdicts before and after a change of the
evaluation pipeline (issue 21: compile-ahead, merged emulator timing, reused
inputs): each candidate of tests/data/verdicts/candidates.json is evaluated
with `kevolve eval --json` and compared with the verdicts recorded by an
earlier kevolve (tests/data/verdicts/recorded.json, which names its commit).

mtia_emu's timer is deterministic (emulated cycles): status, per-shape status
and fitness must be equal (1e-9 relative). On cpu the timer is the wall
clock, so statuses must be equal and the fitness of a correct candidate
within a factor of 3 (it is a ratio of two noisy medians on a shared CI
machine; a pipeline bug that, say, times the wrong kernel moves it further).

usage: verdict_stability.py KEVOLVE_BIN (--check | --record COMMIT)
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "verdicts")


def kernel_source(kevolve, c):
    if "kernel" in c:
        return os.path.join(ROOT, c["kernel"])
    # A template at given parameters (kevolve kb render).
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "kv-verdict-%d-%s.cpp" % (os.getpid(), c["id"].replace("/", "_")))
    args = [kevolve, "kb", "render", os.path.join(ROOT, c["op"]), "--backend", c["backend"]]
    if c.get("variant"):
        args += ["--variant", c["variant"]]
    if c.get("params"):
        args += ["--params", json.dumps(c["params"])]
    with open(out, "w") as f:
        subprocess.run(args, check=True, stdout=f)
    return out


def evaluate(kevolve, c):
    src = kernel_source(kevolve, c)
    args = [kevolve, "eval", "--op", os.path.join(ROOT, c["op"]), "--backend", c["backend"], "--kernel", src,
            "--json", "--torch", "off", "--budget", "0.05"]
    if c.get("variant"):
        args += ["--variant", c["variant"]]
    p = subprocess.run(args, capture_output=True, text=True)
    try:  # exit code 1: a verdict other than ok, still printed
        v = json.loads(p.stdout)
    except ValueError:
        raise SystemExit("%s: kevolve eval failed (%d): %s" % (c["id"], p.returncode, p.stderr[-2000:]))
    return {"status": v["status"], "fitness": v.get("fitness", 0.0),
            "shapes": {s["shape"]: s["status"] for s in v["shapes"]}}


def main():
    kevolve, mode = sys.argv[1], sys.argv[2]
    cands = json.load(open(os.path.join(DATA, "candidates.json")))["candidates"]
    got = {c["id"]: evaluate(kevolve, c) for c in cands}
    path = os.path.join(DATA, "recorded.json")
    if mode == "--record":
        json.dump({"commit": sys.argv[3], "verdicts": got}, open(path, "w"), indent=1, sort_keys=True)
        print("recorded %d verdicts in %s" % (len(got), path))
        return
    rec = json.load(open(path))
    bad = []
    for c in cands:
        want, have = rec["verdicts"][c["id"]], got[c["id"]]
        if want["status"] != have["status"] or want["shapes"] != have["shapes"]:
            bad.append("%s: status %s %s, recorded %s %s" % (c["id"], have["status"], have["shapes"], want["status"], want["shapes"]))
        elif want["status"] == "ok":
            a, b = want["fitness"], have["fitness"]
            if c["backend"] == "mtia_emu" and abs(a - b) > 1e-9 * max(abs(a), 1e-12):
                bad.append("%s: fitness %.12g, recorded %.12g (deterministic timer: must be equal)" % (c["id"], b, a))
            elif c["backend"] != "mtia_emu" and not (a / 3 <= b <= a * 3):
                bad.append("%s: fitness %.4g, recorded %.4g (more than 3x apart)" % (c["id"], b, a))
        print("%-44s %-14s %.6g" % (c["id"], have["status"], have["fitness"]))
    if bad:
        print("verdicts differ from those recorded at %s:\n  %s" % (rec["commit"], "\n  ".join(bad)))
        sys.exit(1)
    print("all %d verdicts as recorded at %s" % (len(cands), rec["commit"]))


if __name__ == "__main__":
    main()
