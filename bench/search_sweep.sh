#!/usr/bin/env bash
# The search benchmark: a sweep of MINUTES (default 30) over every starter
# operator on this CPU with the builtin synthesizer, then the best kernel of
# each task against its baseline and against PyTorch, in one run.
# usage: bench/search_sweep.sh [MINUTES]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
ops=$(ls config/operators/*.yaml | wc -l)
per_task=$(( minutes * 60 / ops ))
out="bench/results/sweep-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$out"
cat > "$out/sweep.yaml" <<YAML
sweep:
  operators: all
  variants: default
  backends: [cpu]
  synthesizer: builtin
  seed: 1
search:
  policy: uct
  memory: adaptive
  stop: {max_seconds: $per_task, stagnation: 40}
evaluator:
  budget: 0.2
checkpoint:
  every_seconds: 60
YAML
./build/kevolve run "$out/sweep.yaml" --store "$out/sweep.h5"
/usr/bin/python3 bench/export_best.py "$out/sweep.h5" "$out/best"
/usr/bin/python3 bench/cpu_examples.py --kernel-dir "$out/best" --json-out "$out/compare.json" | tee "$out/compare.txt"
echo "results in $out"
