#!/usr/bin/env bash
# The development set (../shared/kernelbench, 24 KernelBench problems) on a
# GPU node with the builtin synthesizer: every file imported with `kevolve
# ops import` at its own sizes, or scaled down where they exceed the
# evaluator's 4 GiB a shape (SCALE_level<L>_<N>=S: --scale S instead), one
# sweep of all of them on cuda (EVALS evaluations a task, PyTorch eager and
# torch.compile timed in the same evaluations), then the per-problem table
# of bench/kernelbench_table.py (class, template, x eager, x compile, % of
# floor; problems with no correct kernel say why).
#
#   KEVOLVE_BIN_DIR=DIR bench/kernelbench_cuda.sh   (binaries from bench/cuda_carry.sh)
#   env: KB=../shared/kernelbench EVALS=20 TASK_SECONDS=120 OUT=/tmp/kevolve-kb-cuda
#        ONLY="level1/17 level2/9 ..." (only these problems)
#        STEPS="import sweep table" (any of them; import needs no GPU, so a
#          GPU call can take an ops folder imported elsewhere)
#        RESUME=1: the sweep goes on from $OUT/sweep.h5 (a run stopped by
#          SWEEP_SECONDS checkpoints there first)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KB=${KB:-$ROOT/../shared/kernelbench}
EVALS=${EVALS:-20}
OUT=${OUT:-/tmp/kevolve-kb-cuda}
BIN=${KEVOLVE_BIN_DIR:-$ROOT/build}
export KEVOLVE_HOME=$ROOT KEVOLVE_CACHE_DIR=${KEVOLVE_CACHE_DIR:-$OUT/cache} KEVOLVE_WORKER=$BIN/kevolve-worker
export KEVOLVE_BIN=$BIN/kevolve PYTHONUNBUFFERED=1
STEPS=${STEPS:-import sweep table}
step() { grep -qw "$1" <<<"$STEPS"; }
# One problem: at its own sizes, else (inputs and outputs over the evaluator's
# 4 GiB a shape) at the largest of --scale 0.5, 0.25, 0.125 that fits; with
# --eval-mode where it holds a BatchNorm. Prints "file scale".
import_one() {
  local f=$1 num lvl scale_var s
  num=$(basename "$f" | cut -d_ -f1); lvl=$(basename "$(dirname "$f")")
  scale_var="SCALE_${lvl}_$num"
  for s in ${!scale_var:-1 0.5 0.25 0.125}; do
    for mode in "" --eval-mode; do
      if "$BIN/kevolve" ops import "$f" --out "$OUT/ops" $([ "$s" = 1 ] || echo --scale "$s") $mode >/dev/null 2>"$OUT/import-$lvl-$num.err"; then
        echo "$lvl/$num scale $s"; return 0
      fi
    done
  done
  echo "import failed: $f"; tail -2 "$OUT/import-$lvl-$num.err"
}
export -f import_one; export OUT BIN
if step import; then
rm -rf "$OUT/ops" && mkdir -p "$OUT/ops"
for f in "$KB"/level1/*.py "$KB"/level2/*.py; do
  num=$(basename "$f" | cut -d_ -f1)
  if [ -n "${ONLY:-}" ] && ! grep -qw -- "$(basename "$(dirname "$f")")/$num" <<<"$ONLY"; then continue; fi
  echo "$f"
done | xargs -P "${JOBS:-8}" -I{} bash -c 'import_one {}' | sort -V | tee "$OUT/scales.txt"
echo "imported $(ls "$OUT"/ops/*.yaml | wc -l) operators"
fi
if step sweep; then
ops=$(cd "$OUT" && ls ops/*.yaml | paste -sd, -)
cat > "$OUT/sweep.yaml" <<YAML
sweep:
  operators: [$ops]
  variants: default
  backends: [cuda]
  synthesizer: builtin
  seed: 1
search:
  stop: {max_evaluations: $EVALS, max_seconds: ${TASK_SECONDS:-120}}
evaluator:
  torch_baselines: on
YAML
start=$SECONDS
if [ "${RESUME:-0}" = 1 ] && [ -f "$OUT/sweep.h5" ]; then
  store_args=(--resume "$OUT/sweep.h5")
else
  rm -f "$OUT/sweep.h5"; store_args=(--store "$OUT/sweep.h5")
fi
(cd "$OUT" && timeout -k 45 -s INT "${SWEEP_SECONDS:-100000}" "$BIN/kevolve" run sweep.yaml "${store_args[@]}" > sweep.log 2>&1)
rc=$?; echo "sweep: $((SECONDS - start)) s, exit $rc"; tail -5 "$OUT/sweep.log"
fi
step table && python3 "$ROOT/bench/kernelbench_table.py" "$OUT/sweep.h5" "$OUT/ops" | tee "$OUT/table.md"
