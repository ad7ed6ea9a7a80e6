#!/usr/bin/env bash
# The class-template tests on a GPU node: the generated problems of each
# tests/cli class test (KernelBench-style files at odd sizes, ranks and
# broadcast patterns, imported with `kevolve ops import`) swept by the
# builtin synthesizer on cuda instead of cpu (KEVOLVE_CLASS_BACKEND=cuda);
# every kernel must be `ok` (verified at the timed and held-out shapes).
#
#   KEVOLVE_BIN_DIR=DIR bench/cuda_classes.sh [TEST...]   (binaries from bench/cuda_carry.sh)
#   default tests: the classes with cuda templates
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${KEVOLVE_BIN_DIR:-$ROOT/build}
OUT=${OUT:-/tmp/kevolve-cuda-classes}
mkdir -p "$OUT"
export KEVOLVE_HOME=$ROOT KEVOLVE_BIN=$BIN/kevolve KEVOLVE_WORKER=$BIN/kevolve-worker KEVOLVE_CLASS_BACKEND=cuda
export KEVOLVE_CACHE_DIR=${KEVOLVE_CACHE_DIR:-$OUT/cache} PYTHONUNBUFFERED=1
tests=${*:-test_matmul_class test_axis_reductions test_norms_and_losses test_pooling_class test_elementwise_functions}
rc=0
for t in $tests; do
  start=$SECONDS
  python3 "$ROOT/tests/cli/$t.py" >"$OUT/$t.log" 2>&1
  r=$?
  echo "$t: $([ $r = 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s"
  [ $r = 0 ] || { rc=1; grep -E "^(FAIL|ERROR):|AssertionError" "$OUT/$t.log" | head -20; }
done
exit $rc
