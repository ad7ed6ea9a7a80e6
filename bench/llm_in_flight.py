#!/usr/bin/python3
"""Many LLM requests in flight without blocking the scheduler.

Runs real `kevolve run` sweeps on cpu (one task, ts_softmax) whose children
are written by the llm synthesizer against tests/llm/replay_server.py with a
fixed per-request latency, with `llm.max_in_flight` 1 and 8 (everything
else equal: search.max_in_flight 16, so that children written ahead do not
cap the requests, one local cpu evaluator, the same replies, a warm compile
cache, skill notes off so that every request is a child). Measured per run,
in this very run:

- children per second: LLM-written children evaluated / wall time from the
  first request to the last verdict;
- the peak of requests in flight that the server saw;
- verdicts recorded while requests were outstanding (the scheduler records
  verdicts and dispatches evaluations while the pool waits on HTTP): how
  many, and the most requests outstanding at one verdict.

Prints the median over the repeats and the ratio 8 : 1. Throughput is
bounded by the evaluator too: one local cpu evaluator takes a few hundred
ms per candidate, so with short requests (0.5 s / 8) the evaluator, not the
LLM, is the bottleneck; LLM latencies of seconds show the LLM-bound ratio.

usage: bench/llm_in_flight.py [--latency 0.5] [--evals 32] [--repeats 3] [--in-flight 1,8]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve").resolve()
SERVER = ROOT / "tests" / "llm" / "replay_server.py"
DATA = ROOT / "tests" / "data"


def sweep_yaml(url, in_flight, evals, search_in_flight):
    return f"""sweep:
  operators: [{DATA / "operators" / "ts_softmax.yaml"}]
  backends: [cpu]
  synthesizer: llm
  seed: 7
search:
  policy: greedy
  memory: adaptive
  max_in_flight: {search_in_flight}
  stop: {{max_evaluations: {evals}, stagnation: {evals}}}
evaluator:
  budget: 0.02
  timeout_ms: 5000
llm:
  max_in_flight: {in_flight}
  skill_note_chars: 0
  retries: 0
  endpoints:
    - base_url: {url}
      model: replay-coder
      max_concurrency: 16
      read_timeout_s: 30
"""


def one_run(base, name, latency, in_flight, evals, cache, search_in_flight=16):
    d = Path(base) / name
    d.mkdir()
    script = {"cycle": True, "delay_s": latency,
              "replies": [{"content_file": str(DATA / "llm" / f)} for f in ("softmax_plain.md", "softmax_fused.md")]}
    (d / "script.json").write_text(json.dumps(script))
    server = subprocess.Popen(["/usr/bin/python3", str(SERVER), "--script", str(d / "script.json"), "--port-file",
                               str(d / "port"), "--log", str(d / "log.jsonl"), "--timeline", str(d / "timeline.jsonl")])
    try:
        for _ in range(400):
            if (d / "port").exists():
                break
            time.sleep(0.025)
        url = "http://127.0.0.1:%s/v1" % (d / "port").read_text()
        (d / "sweep.yaml").write_text(sweep_yaml(url, in_flight, evals, search_in_flight))
        env = dict(os.environ, KEVOLVE_CACHE_DIR=str(cache))
        verdicts = []  # (time, line) of each progress line: one per verdict
        proc = subprocess.Popen([str(BIN), "run", "sweep.yaml", "--store", "s.h5"], cwd=d, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        def read():
            for line in proc.stdout:
                if line.startswith("task ") and "; node " in line:
                    verdicts.append((time.time(), line))
        reader = threading.Thread(target=read)
        reader.start()
        err = proc.stderr.read()
        proc.wait()
        reader.join()
        if proc.returncode != 0:
            sys.exit(f"kevolve run failed ({name}): {err}")
    finally:
        server.terminate()
        server.wait()
    log = [json.loads(l) for l in (d / "log.jsonl").read_text().splitlines()]
    spans = [json.loads(l) for l in (d / "timeline.jsonl").read_text().splitlines()]
    llm_verdicts = [(t, l) for t, l in verdicts if "(llm:" in l]
    first = min(x["t"] for x in log)
    last = max(t for t, _ in llm_verdicts)
    outstanding = [sum(s["start"] <= t < s["end"] for s in spans) for t, _ in verdicts]
    return {
        "children_per_s": len(llm_verdicts) / (last - first),
        "children": len(llm_verdicts),
        "seconds": last - first,
        "requests": len(log),
        "peak_in_flight": max(x["in_flight"] for x in log),
        "verdicts": len(verdicts),
        "verdicts_while_outstanding": sum(o > 0 for o in outstanding),
        "max_outstanding_at_a_verdict": max(outstanding) if outstanding else 0,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latency", type=float, default=0.5, help="seconds per request at the server")
    ap.add_argument("--evals", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--in-flight", default="1,8")
    a = ap.parse_args()
    levels = [int(x) for x in a.in_flight.split(",")]
    with tempfile.TemporaryDirectory(prefix="kevolve-bench-llm-") as base:
        cache = Path(base) / "cache"
        one_run(base, "warmup", 0.0, max(levels), 4, cache)  # both replies compiled once
        results = {n: [] for n in levels}
        for r in range(a.repeats):
            for n in levels:  # interleaved, so both see the same machine load
                results[n].append(one_run(base, f"r{r}-{n}", a.latency, n, a.evals, cache))
    print(f"llm_in_flight: ts_softmax on cpu, {a.evals} evaluations, {a.latency * 1000:.0f} ms per request, "
          f"{a.repeats} repeats (median [min, max])")
    print(f"{'max_in_flight':>13} {'children/s':>22} {'peak in flight':>15} {'verdicts while requests out':>28} "
          f"{'max out at a verdict':>21}")
    med = {}
    for n in levels:
        rs = results[n]
        cps = [x["children_per_s"] for x in rs]
        med[n] = statistics.median(cps)
        share = statistics.median(x["verdicts_while_outstanding"] / x["verdicts"] for x in rs)
        print(f"{n:>13} {med[n]:>8.2f} [{min(cps):.2f}, {max(cps):.2f}]".ljust(37) +
              f"{max(x['peak_in_flight'] for x in rs):>15} {100 * share:>27.0f}% "
              f"{max(x['max_outstanding_at_a_verdict'] for x in rs):>21}")
    if len(levels) == 2:
        lo, hi = levels
        ratios = [h["children_per_s"] / l["children_per_s"] for h, l in zip(results[hi], results[lo])]
        print(f"ratio {hi} : {lo} in flight: {statistics.median(ratios):.2f}x (per repeat: "
              + ", ".join(f"{x:.2f}" for x in ratios) + f"); ideal with {a.latency * 1000:.0f} ms requests: "
              f"up to {hi / lo:.0f}x while requests, not evaluations, are the bottleneck")
    print(json.dumps({str(n): results[n] for n in levels}))


if __name__ == "__main__":
    main()
