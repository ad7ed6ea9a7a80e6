#!/usr/bin/env bash
# Correctness of the HIP templates on another device: on a node with an
# NVIDIA GPU and nvcc (no hipcc or AMD GPU needed), every builtin HIP
# template (knowledge/templates/hip/) is rendered at its defaults and at
# KEVOLVE_HIP_CROSS_POINTS sampled parameter points (default 2), compiled by
# nvcc through kevolve's HIP-on-CUDA header (src/abi/hip_on_cuda: 32-lane
# waves, MFMA emulated with AMD's documented layout) and verified by the cuda
# evaluation path (backend hip_on_cuda: every shape, held-out ones included,
# every dtype variant; never timed). Also run: the HIP backend's device test
# (a kernel with the wave size hard-coded to 64 must be wrong there).
#
# This is a correctness check on another device, not an AMD performance
# figure: nothing here is timed, and nothing says how fast the kernels are on
# an MI300X.
#
#   bench/hip_cross_check.sh [OUT_DIR]     # builds ./build first; OUT_DIR default $OUT or /tmp/kevolve-hip-cross
#   KEVOLVE_BIN_DIR=DIR bench/hip_cross_check.sh   # uses binaries built elsewhere
#
# Writes to OUT_DIR: table.md (one row per checked kernel), tests.txt (gtest
# output), build.log, gpu.txt; the table is printed last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-${OUT:-/tmp/kevolve-hip-cross}}
mkdir -p "$OUT"
if [ -z "${KEVOLVE_BIN_DIR:-}" ]; then
  cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build "$ROOT/build" -j"$(nproc)" --target kevolve kevolve_synth_eval_tests kevolve_trust_tests \
      >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  KEVOLVE_BIN_DIR=$ROOT/build
fi
BIN=$KEVOLVE_BIN_DIR
export KEVOLVE_HOME=$ROOT KEVOLVE_CACHE_DIR=${KEVOLVE_CACHE_DIR:-$OUT/cache} KEVOLVE_WORKER=$BIN/kevolve-worker
export KEVOLVE_TEST_DATA=$ROOT/tests/data KEVOLVE_BIN=$BIN/kevolve
export KEVOLVE_HIP_CROSS_TABLE=$OUT/cross.tsv KEVOLVE_HIP_CROSS_POINTS=${KEVOLVE_HIP_CROSS_POINTS:-2}
rm -f "$KEVOLVE_HIP_CROSS_TABLE"

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
"$BIN/kevolve" doctor >"$OUT/doctor.txt" 2>&1 || true
start=$(date +%s)
"$BIN/tests/kevolve_synth_eval_tests" --gtest_filter='Starter/HipOnCuda.*:Starter/HipTemplates.*' 2>&1 |
  tee "$OUT/tests.txt" | grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED) '
rc=${PIPESTATUS[0]}
"$BIN/tests/kevolve_trust_tests" --gtest_filter='Hip*' 2>&1 | tee -a "$OUT/tests.txt" | grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED) '
rc2=${PIPESTATUS[0]}

{
  echo "# HIP templates verified on $(head -1 "$OUT/gpu.txt") through kevolve's HIP-on-CUDA header"
  echo
  echo "Correctness on another device, not an AMD performance figure: nothing was timed."
  echo "Every dtype variant, every shape (held-out ones included); max error ratio: worst |out-ref| / (atol + rtol |ref|), <= 1 passes."
  echo
  echo "| operator | variant | template and parameters | verdict | shapes | max error ratio |"
  echo "|---|---|---|---|---|---|"
  [ -f "$KEVOLVE_HIP_CROSS_TABLE" ] && awk -F'\t' '{printf "| %s | %s | `%s` | %s%s | %s | %.3f |\n", $1, $2, $3, $4, ($4 == "ok" ? "" : ": " $8), $5, $6}' "$KEVOLVE_HIP_CROSS_TABLE"
  echo
  ok=$( [ -f "$KEVOLVE_HIP_CROSS_TABLE" ] && awk -F'\t' '$4 == "ok"' "$KEVOLVE_HIP_CROSS_TABLE" | wc -l || echo 0)
  all=$( [ -f "$KEVOLVE_HIP_CROSS_TABLE" ] && wc -l <"$KEVOLVE_HIP_CROSS_TABLE" || echo 0)
  echo "$ok of $all kernels verified; template tests exit $rc, hip backend tests exit $rc2; $(( $(date +%s) - start )) s."
} >"$OUT/table.md"
cat "$OUT/table.md"
[ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ]
