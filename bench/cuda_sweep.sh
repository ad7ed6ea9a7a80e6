#!/usr/bin/env bash
# The issue-5 acceptance run on a GPU node: the CUDA templates' GPU tests, a
# sweep of every starter operator on the cuda backend at the shapes of
# bench/cuda_shapes.yaml (several times the L2), then each task's best
# kernel (verified at the held-out shapes and timed against the cuda baseline
# in the sweep's own evaluations, read from the store) next to, PyTorch eager, torch.compile and the roofline
# floor (bench/cuda_torch.py).
#
#   bench/cuda_sweep.sh [PHASE...]     phases: tests torch sweep (default: all three)
#   KEVOLVE_BIN_DIR=DIR bench/cuda_sweep.sh ...   binaries built elsewhere (bench/cuda_carry.sh)
#
# Small logs and the table go to $OUT (default /tmp/kevolve-cuda-sweep):
# log.txt, torch_times.json (PyTorch medians, reused by later runs when
# present), best.tar.gz (the exported kernels), sweep.h5 (when small), table.txt.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/kevolve-cuda-sweep}
WORK=${KEVOLVE_SWEEP_WORK:-/tmp/kevolve-cuda-sweep-work}
BIN=${KEVOLVE_BIN_DIR:-$ROOT/build}
phases=${*:-tests torch sweep}
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/log.txt") 2>&1
export KEVOLVE_CACHE_DIR=$WORK/cache KEVOLVE_WORKER=$BIN/kevolve-worker KEVOLVE_TEST_DATA=$ROOT/tests/data
export KEVOLVE_BIN=$BIN/kevolve PYTHONUNBUFFERED=1
[ -n "${TORCH_TIMES:-}" ] && [ -f "$TORCH_TIMES" ] && cp "$TORCH_TIMES" "$OUT/torch_times.json"
ops="softmax layernorm rmsnorm bias_gelu embedding_bag_sum bucketize feature_hash jagged_to_padded_dense sequence_truncate dot_interaction conv1d gemm_bias_relu"

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
KEVOLVE_HOME=$ROOT "$BIN/kevolve" doctor | tee "$WORK/doctor.txt"
copy_gbs=$(awk '/device-to-device/ {print $2}' "$WORK/doctor.txt")
# The H200 shapes: a data root whose operators time bench/cuda_shapes.yaml.
env -u LD_LIBRARY_PATH python3 "$ROOT/bench/cuda_shapes.py" "$ROOT" "$WORK/home" || exit 1
H200_OPS=$WORK/home/config/operators

for phase in $phases; do
  start=$SECONDS
  case $phase in
    tests)
      # Every template's defaults through the real evaluator, every variant (the operators' own shapes).
      KEVOLVE_HOME=$ROOT timeout "${TESTS_SECONDS:-200}" "$BIN/kevolve_synth_eval_tests" --gtest_filter='*CudaTemplatesOnGpu*' 2>&1 |
        grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED) |cuda-template-gpu|Failure|Expected|Which is|: ' | grep -v '^\s*$' | head -150
      ;;
    torch)
      env -u LD_LIBRARY_PATH python3 "$ROOT/bench/cuda_torch.py" "$H200_OPS" "$copy_gbs" --times "$OUT/torch_times.json" \
        --only-torch $ops
      ;;
    sweep)
      rm -f "$WORK/sweep.h5"
      KEVOLVE_HOME=$WORK/home timeout "${SWEEP_SECONDS:-300}" "$BIN/kevolve" run "${SWEEP_CONFIG:-$ROOT/bench/cuda_sweep.yaml}" \
        --store "$WORK/sweep.h5" 2>&1 | tail -40
      rm -rf "$WORK/best" && mkdir -p "$WORK/best"
      env -u LD_LIBRARY_PATH python3 "$ROOT/bench/export_best.py" "$WORK/sweep.h5" "$WORK/best" cu
      tar -czf "$OUT/best.tar.gz" -C "$WORK" best
      [ -f "$WORK/sweep.h5" ] && [ "$(stat -c %s "$WORK/sweep.h5")" -lt 15000000 ] && cp "$WORK/sweep.h5" "$OUT/"
      # The store's own measurements of each task's best kernel (held-out shapes
      # verified in the same evaluation), next to PyTorch and the floor.
      fp32_peak=$(awk '/fp32 peak/ {v=$3} END {print v}' "$WORK/doctor.txt")
      env -u LD_LIBRARY_PATH python3 "$ROOT/bench/cuda_torch.py" "$H200_OPS" "$copy_gbs" --times "$OUT/torch_times.json" \
        --store "$WORK/sweep.h5" "$fp32_peak" | tee "$OUT/table.txt"
      ;;
    *) echo "cuda_sweep.sh: unknown phase '$phase' (tests, torch, sweep)"; exit 2 ;;
  esac
  echo "phase $phase: $((SECONDS - start)) s"
done
