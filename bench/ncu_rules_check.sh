#!/usr/bin/env bash
# On a GPU node with Nsight Compute: do the hardware counters reach the store
# and steer the builtin synthesizer? A short cuda sweep (greedy, inherit: each
# child grows from its parent by the rules) of memory-bound starter operators
# with `evaluator.ncu: on`, then, from `kevolve export --format trajectory`:
# how many evaluated nodes carry counters, and for every child of a profiled
# parent the parent's counters, the ncu_* rules of knowledge/templates/rules.json
# whose `metrics` bounds they meet, and the parameters the child changed.
# Fails (exit 1) when the sweep fails or no node carries counters.
#
#   bench/ncu_rules_check.sh              # builds ./build first (needs scripts/install-deps.sh)
#   KEVOLVE_BIN_DIR=DIR bench/ncu_rules_check.sh
#
# Logs, the store and the export go to $OUT (default /tmp/kevolve-ncu-rules);
# NCU_RULES_EVALS sets the evaluations per operator (default 8).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/kevolve-ncu-rules}
mkdir -p "$OUT"
if [ -z "${KEVOLVE_BIN_DIR:-}" ]; then
  cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build "$ROOT/build" -j"$(nproc)" --target kevolve kevolve-worker >>"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
  KEVOLVE_BIN_DIR=$ROOT/build
fi
BIN=$KEVOLVE_BIN_DIR
export KEVOLVE_HOME=$ROOT KEVOLVE_CACHE_DIR=${KEVOLVE_CACHE_DIR:-$OUT/cache} KEVOLVE_WORKER=$BIN/kevolve-worker
command -v ncu >/dev/null && echo "ncu: $(ncu --version | tail -1)" || echo "ncu: not on PATH"

EVALS=${NCU_RULES_EVALS:-8}
cat >"$OUT/sweep.yaml" <<YAML
sweep:
  operators: [softmax, layernorm, bias_gelu, embedding_bag_sum]
  variants: default
  backends: [cuda]
  synthesizer: builtin
  seed: 1
search:
  policy: greedy
  memory: inherit
  max_in_flight: 1
  stop:
    max_evaluations: ${EVALS}
evaluator:
  budget: 0.05
  timeout_ms: 20000
  torch_baselines: off
  ncu: on
YAML
rm -f "$OUT/ncu.h5"
"$BIN/kevolve" run "$OUT/sweep.yaml" --store "$OUT/ncu.h5" >"$OUT/sweep.log" 2>&1 ||
  { echo "kevolve run failed:"; tail -30 "$OUT/sweep.log"; exit 1; }
"$BIN/kevolve" export "$OUT/ncu.h5" --format trajectory --out "$OUT/trajectory.jsonl" 2>>"$OUT/sweep.log" ||
  { echo "kevolve export failed:"; tail -5 "$OUT/sweep.log"; exit 1; }

python3 - "$OUT/trajectory.jsonl" "$ROOT/knowledge/templates/rules.json" <<'PY' | tee "$OUT/rules.txt"
import json, sys

rules = [r for r in json.load(open(sys.argv[2]))["rules"] if "metrics" in r["when"]]
KEYS = ["dram_pct", "occupancy_pct", "registers", "stall_long_scoreboard", "tensor_pct"]


def header(code):  # "// kevolve-template: <name> <params as JSON>"
    first = code.split("\n", 1)[0]
    if not first.startswith("// kevolve-template: "):
        return None, {}
    name, _, params = first[len("// kevolve-template: "):].partition(" ")
    return name, json.loads(params or "{}")


def holds(bounds, metrics):
    return all(k in metrics and ("below" not in b or metrics[k] < b["below"]) and
               ("above" not in b or metrics[k] > b["above"]) for k, b in bounds.items())


profiled = children = 0
for line in open(sys.argv[1]):
    task = json.loads(line)
    steps = {s["node"]: s for s in task["steps"]}
    print(f"== {task['task']}")
    for s in task["steps"]:
        metrics = next((p["metrics"] for p in s.get("profiles", []) if p["metrics"]), None)
        profiled += metrics is not None
        parent = steps.get(s["parent"])
        pm = next((p["metrics"] for p in parent.get("profiles", []) if p["metrics"]), None) if parent else None
        if not pm or s["state"] != "evaluated":
            continue
        children += 1
        (_, a), (_, b) = header(parent["code"]), header(s["code"])
        change = {k: b[k] for k in b if a.get(k) != b[k]}
        fits = [r["name"] for r in rules if holds(r["when"]["metrics"], pm)]
        print(f"node {s['node']} <- {s['parent']}: parent " +
              " ".join(f"{k}={pm[k]:.1f}" for k in KEYS if k in pm) +
              f"; ncu rules whose bounds hold: {fits or '-'}; child changed {change or '-'}; "
              f"{s['status']} {s['fitness']:.3f}x")
print(f"nodes with hardware counters: {profiled}; children of profiled parents: {children}")
sys.exit(0 if profiled else 1)
PY
