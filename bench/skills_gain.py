#!/usr/bin/python3
"""Skills as priors of the builtin synthesizer: do they save evaluations?

Sweep A learns on LEARN (default: the catalog softmax, fp32, cpu);
`kevolve kb promote` writes its skill into a temporary KEVOLVE_HOME (never
into the repository); sweep B then searches each TARGET (default: the test
operators ts_softmax, other shapes of the same template, and ts_rmsnorm,
another template of the same class) with the skill and without it, same
seeds, several seeds. Reported per target: the evaluations each run needed
to reach each PCT % of the best fitness any run of that target reached (the
baseline of the comparison is measured in this very run), the first
evaluation's fitness, and the final best.

usage: bench/skills_gain.py [--seeds 1,2,3] [--learn-evals 40] [--evals 16]
                            [--pct 50,75,90] [--targets ts_softmax,ts_rmsnorm] [--out DIR]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve").resolve()


def make_home(base, name):
    """A KEVOLVE_HOME: the repository's data with a knowledge/ of its own."""
    home = Path(base) / name
    if home.exists():
        return home
    home.mkdir()
    for part in ("config", "src", "data"):
        (home / part).symlink_to(ROOT / part)
    shutil.copytree(ROOT / "knowledge", home / "knowledge", ignore=shutil.ignore_patterns("skills"))
    return home


def sweep_yaml(op, seed, evals):
    return f"""sweep:
  operators: [{op}]
  variants: default
  backends: [cpu]
  synthesizer: builtin
  seed: {seed}
search:
  policy: greedy
  memory: adaptive
  stop: {{max_evaluations: {evals}, stagnation: {evals}}}
evaluator:
  budget: 0.05
  timeout_ms: 10000
"""


def run_sweep(home, work, name, op, seed, evals):
    cfg = Path(work) / (name + ".yaml")
    cfg.write_text(sweep_yaml(op, seed, evals))
    store = Path(work) / (name + ".h5")
    if store.exists():  # --out of an earlier run: its stores are reused
        return store
    env = dict(os.environ, KEVOLVE_HOME=str(home))
    p = subprocess.run([str(BIN), "run", str(cfg), "--store", str(store)], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"skills_gain: sweep {name} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return store


def curve(store):
    """Fitness of the evaluated nodes in creation order (0 for failures)."""
    with h5py.File(store, "r") as f:
        g = f["tasks/0"]
        text = g["text"][...].tobytes()
        rows = []
        for r in g["nodes"][...]:
            if int(r["id"]) == 0 or int(r["state"]) != 1:
                continue
            o, n = int(r["origin_offset"]), int(r["origin_length"])
            rows.append((int(r["id"]), float(r["fitness"]) if int(r["status"]) == 0 else 0.0, text[o:o + n].decode()))
    rows.sort()
    return [x[1] for x in rows]


def evals_to(c, target):
    for i, f in enumerate(c):
        if f >= target:
            return i + 1
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--learn", default=str(ROOT / "config/operators/softmax.yaml"))
    ap.add_argument("--learn-evals", type=int, default=40)
    ap.add_argument("--targets", default="ts_softmax,ts_rmsnorm")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--evals", type=int, default=16)
    ap.add_argument("--pct", default="50,75,90")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    work = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix="kevolve-skills-gain-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    plain = make_home(work, "home-plain")
    learned = make_home(work, "home-skills")
    store = run_sweep(plain, work, "learn", a.learn, 1, a.learn_evals)
    env = dict(os.environ, KEVOLVE_HOME=str(learned))
    p = subprocess.run([str(BIN), "kb", "promote", str(store), "--min-speedup", "1.0"], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("skills_gain: kb promote failed:\n" + p.stdout + p.stderr)
    print("sweep A (learn): %s, %d evaluations, best %.3fx\n%s" % (a.learn, a.learn_evals, max(curve(store)), p.stdout.strip()))
    results = {}
    for target in a.targets.split(","):
        op = ROOT / "tests/data/operators" / (target + ".yaml")
        if not op.exists():
            op = ROOT / "config/operators" / (target + ".yaml")
        runs = {}
        for arm, home in (("without", plain), ("with", learned)):
            for seed in seeds:
                runs[(arm, seed)] = curve(run_sweep(home, work, f"{target}-{arm}-{seed}", op, seed, a.evals))
        best = max(max(c) for c in runs.values())
        print(f"\n{target}: best of all runs {best:.3f}x; {a.evals} evaluations a run; seeds {a.seeds}")
        print("  seed | first eval: without   with | best: without   with")
        for seed in seeds:
            w, s = runs[("without", seed)], runs[("with", seed)]
            print(f"  {seed:4d} | {w[0]:>19.3f} {s[0]:>6.3f} | {max(w):>13.3f} {max(s):>6.3f}")
        fmt = lambda e: str(e) if e else f">{a.evals}"
        cap = lambda e: e if e else a.evals + 1
        out = {"best": best, "curves": {f"{arm}-{seed}": c for (arm, seed), c in runs.items()}, "goals": {}}
        for pct in (float(x) for x in a.pct.split(",")):
            goal = best * pct / 100
            ew = [evals_to(runs[("without", seed)], goal) for seed in seeds]
            es = [evals_to(runs[("with", seed)], goal) for seed in seeds]
            mw, ms = statistics.mean(map(cap, ew)), statistics.mean(map(cap, es))
            print(f"  evaluations to {pct:.0f} % of best ({goal:.2f}x), per seed: without "
                  f"{' '.join(map(fmt, ew))}; with {' '.join(map(fmt, es))}; mean (a miss counts {a.evals + 1}) "
                  f"without {mw:.1f}, with {ms:.1f} -> {mw / ms:.2f}x fewer")
            out["goals"][pct] = {"without": ew, "with": es, "mean_without": mw, "mean_with": ms}
        results[target] = out
    (work / "skills_gain.json").write_text(json.dumps(results, indent=1))
    print(f"\n{time.time() - t0:.0f} s; stores and skills_gain.json in {work}")


if __name__ == "__main__":
    main()
