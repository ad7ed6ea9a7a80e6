#!/usr/bin/env bash
# The development set (../shared/kernelbench, 24 KernelBench problems) on
# this CPU with the builtin synthesizer: every file imported with
# `kevolve ops import --scale S` (--eval-mode where it holds a BatchNorm),
# one sweep of all of them on cpu (EVALS evaluations a task, PyTorch eager
# and torch.compile timed in the same run), then the per-problem table of
# bench/kernelbench_table.py (class, template, x eager, x compile, % of
# the roofline floor; problems with no correct kernel say why).
#
#   bench/kernelbench_cpu.sh     (KB=../shared/kernelbench SCALE=0.25 EVALS=20 TASK_SECONDS=90 OUT=/tmp/kevolve-kb-cpu)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KB=${KB:-$ROOT/../shared/kernelbench}
SCALE=${SCALE:-0.25}
EVALS=${EVALS:-20}
OUT=${OUT:-/tmp/kevolve-kb-cpu}
BIN=${KEVOLVE_BIN:-$ROOT/build/kevolve}
rm -rf "$OUT/ops" && mkdir -p "$OUT"
for f in "$KB"/level1/*.py "$KB"/level2/*.py; do
  KEVOLVE_HOME=$ROOT "$BIN" ops import "$f" --scale "$SCALE" --out "$OUT/ops" 2>"$OUT/import.err" >/dev/null ||
    KEVOLVE_HOME=$ROOT "$BIN" ops import "$f" --scale "$SCALE" --eval-mode --out "$OUT/ops" >/dev/null ||
    { echo "import failed: $f"; cat "$OUT/import.err"; }
done
echo "imported $(ls "$OUT"/ops/*.yaml | wc -l) operators"
cat > "$OUT/sweep.yaml" <<YAML
sweep:
  operators: [$(ls "$OUT"/ops/*.yaml | paste -sd, -)]
  variants: default
  backends: [cpu]
  synthesizer: builtin
  seed: 1
search:
  stop: {max_evaluations: $EVALS, max_seconds: ${TASK_SECONDS:-90}}
evaluator:
  budget: 0.1
  torch_baselines: on
YAML
rm -f "$OUT/sweep.h5"
start=$SECONDS
KEVOLVE_HOME=$ROOT "$BIN" run "$OUT/sweep.yaml" --store "$OUT/sweep.h5" 2>&1 | tail -5
echo "sweep: $((SECONDS - start)) s"
"$ROOT/.venv/bin/python" "$ROOT/bench/kernelbench_table.py" "$OUT/sweep.h5" "$OUT/ops" | tee "$OUT/table.md"
