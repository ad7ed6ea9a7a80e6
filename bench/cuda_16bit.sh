#!/usr/bin/env bash
# The memory-bound CUDA templates in every dtype variant (issue 21, 16-bit on
# cuda) at the shapes of bench/cuda_shapes.yaml, on one GPU: each kernel's
# median time next to PyTorch eager, torch.compile and the copy bandwidth,
# all measured in this one run (bench/cuda_16bit.py says how).
#
#   bench/cuda_16bit.sh [KERNEL_DIR]
#
# KERNEL_DIR with a manifest.json (bench/cuda_16bit_render.py's output, built
# where there is no GPU and carried): times those libraries. Without it:
# renders bench/cuda_16bit_points.json (the templates' defaults and the best
# points measured) with $KEVOLVE_BIN_DIR/kevolve (default ./build) into
# $OUT/kernels and compiles them there with nvcc; BEFORE_HOME=DIR also
# renders DIR's template defaults (an older checkout) as the 'before' column.
# Needs python3 with PyTorch (and PyYAML) and a GPU. Results in $OUT (default
# /tmp/kevolve-cuda-16bit): results.json, log.txt; the table comes last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/kevolve-cuda-16bit}
mkdir -p "$OUT"
KDIR=${1:-}
if [ -z "$KDIR" ] || [ ! -f "$KDIR/manifest.json" ]; then
  KDIR=${KDIR:-$OUT/kernels}
  BIN=${KEVOLVE_BIN_DIR:-$ROOT/build}
  python3 "$ROOT/bench/cuda_16bit_render.py" "$BIN/kevolve" "$ROOT/bench/cuda_16bit_points.json" "$KDIR" || exit 1
  if [ -n "${BEFORE_HOME:-}" ]; then
    python3 "$ROOT/bench/cuda_16bit_render.py" "$BIN/kevolve" "$ROOT/bench/cuda_16bit_before.json" "$KDIR" \
      --home "$BEFORE_HOME" --label before || exit 1
  fi
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null
# The kernels link the shared CUDA runtime, which PyTorch's process has loaded (the toolkit's as a fallback).
env -u LD_LIBRARY_PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64 PYTHONUNBUFFERED=1 \
  python3 "$ROOT/bench/cuda_16bit.py" "$KDIR" "$OUT/results.json" ${CUDA16_ARGS:-} 2>&1 | tee "$OUT/log.txt"
