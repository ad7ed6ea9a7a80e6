#!/usr/bin/env bash
# On a GPU node (the H200): gemm_bias_relu in bf16 and fp16 on the cuda
# backend. One run measures, per (dtype, shape of bench/cuda_gemm16_shapes.yaml):
#  1. every parameter point of bench/cuda_gemm16_points.txt, rendered by
#     `kevolve kb render`, compiled as the evaluator compiles (nvcc, sm_90a so
#     wgmma applies) and timed by bench/gemm16_time.cu beside the operator's
#     cuda baseline (cuBLASLt, fused RELU_BIAS epilogue), each output compared
#     with the baseline's, also at the odd holdout sizes;
#  2. the templates' defaults through the evaluator (`kevolve eval --backend
#     cuda`, KEVOLVE_CUDA_ARCH=sm_90a): verified at the holdout shapes and every
#     timed shape, timed against the baseline and PyTorch eager and
#     torch.compile of relu(A @ B + bias) in the variant's dtype;
#  3. a table: the best point per (dtype, shape), its TFLOP/s, x cuBLASLt, x
#     eager, x compile (bench/cuda_gemm16_table.py).
#
#   KEVOLVE_BIN_DIR=DIR bench/cuda_gemm16.sh     (DIR: kevolve, kevolve-worker, kevolve-cuda-worker)
#   knobs: GEMM16_PHASES="grid eval" GEMM16_POINTS=FILE (default bench/cuda_gemm16_points.txt)
#          GEMM16_REPS=30 GEMM16_EVAL_SHAPES=all GEMM16_TORCH=on GEMM16_BUDGET=0.25
#          GEMM16_TEMPLATES="gemm_bias_relu_tma gemm_bias_relu_wgmma gemm_bias_relu_mma16" (the defaults evaluated)
# Logs and JSON under $OUT (default /tmp/kevolve-gemm16); the table comes last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/kevolve-gemm16}
BIN=${KEVOLVE_BIN_DIR:?set KEVOLVE_BIN_DIR to the directory of kevolve and its workers}
PHASES=${GEMM16_PHASES:-grid eval}
REPS=${GEMM16_REPS:-30}
WORK=$(mktemp -d /tmp/kevolve-gemm16.XXXXXX)
mkdir -p "$OUT" "$WORK/k"
NVCC=${KEVOLVE_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
export KEVOLVE_CACHE_DIR=${KEVOLVE_CACHE_DIR:-$WORK/cache} KEVOLVE_WORKER=$BIN/kevolve-worker
export KEVOLVE_CUDA_ARCH=${KEVOLVE_CUDA_ARCH:-sm_90a}
# A data root whose gemm_bias_relu times the bench's shapes (holdouts kept).
env -u LD_LIBRARY_PATH python3 "$ROOT/bench/cuda_shapes.py" "$ROOT" "$WORK/home" "$ROOT/bench/cuda_gemm16_shapes.yaml" || exit 1
export KEVOLVE_HOME=$WORK/home
OP=$WORK/home/config/operators/gemm_bias_relu.yaml
SHAPES=$(python3 -c "
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(','.join('%dx%dx%d' % (s['M'], s['K'], s['N']) for s in d['shapes']))" "$OP")
ODD=67x129x31,1001x257x130,333x72x200
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
cc=90a
flags=(-std=c++17 -O3 -gencode "arch=compute_$cc,code=[sm_$cc,compute_$cc]" -Xcompiler -fPIC -shared -cudart shared -I"$ROOT/src/abi" -Xlinker --as-needed -lcuda)

if [[ " $PHASES " == *" grid "* ]]; then
  # Render every point (the bf16 render serves fp16 too: the kernel dispatches on dtype).
  n=0
  while read -r tmpl params; do
    [[ -z "$tmpl" || "$tmpl" == \#* ]] && continue
    name=$(python3 -c "import json,sys; p=json.loads(sys.argv[2]); print(sys.argv[1].replace('gemm_bias_relu_','') + '_' + ('_'.join(f'{k}{v}' for k, v in sorted(p.items())) or 'defaults'))" "$tmpl" "$params")
    "$BIN/kevolve" kb render gemm_bias_relu --backend cuda --variant bf16 --template "cuda/$tmpl" --params "$params" \
      >"$WORK/k/$name.cu" 2>"$WORK/k/$name.err" || { echo "render $name failed: $(head -3 "$WORK/k/$name.err")"; rm -f "$WORK/k/$name.cu"; }
    n=$((n + 1))
  done <"${GEMM16_POINTS:-$ROOT/bench/cuda_gemm16_points.txt}"
  cp "$ROOT/config/operators/gemm_bias_relu/baseline.cu" "$WORK/k/0_cublaslt.cu"
  ls "$WORK"/k/*.cu | xargs -P "$(nproc)" -I{} sh -c 'f={}; l=""; case $f in *0_cublaslt.cu) l="-lcublas -lcublasLt";; esac;
    "$0" "$@" "$f" -o "${f%.cu}.so" $l >"${f%.cu}.log" 2>&1 || echo "compile failed: $f"' "$NVCC" "${flags[@]}"
  "$NVCC" -std=c++17 -O2 -arch=sm_90 -I"$ROOT/src/abi" "$ROOT/bench/gemm16_time.cu" -o "$WORK/gemm16_time" -ldl || exit 1
  libs=("$WORK/k/0_cublaslt.so" $(ls "$WORK"/k/*.so | grep -v 0_cublaslt))
  echo "grid: ${#libs[@]} libraries (the first is the baseline), shapes $SHAPES, odd $ODD"
  for dt in bf16 fp16; do
    "$WORK/gemm16_time" "$dt" "$ODD" 3 "${libs[@]}" >"$OUT/odd_$dt.txt" 2>&1
    echo "$dt odd sizes: $(grep -c ' ok ' "$OUT/odd_$dt.txt") ok, $(grep -cE 'WRONG|ERR' "$OUT/odd_$dt.txt") wrong/failed"
    grep -E 'WRONG|ERR' "$OUT/odd_$dt.txt" | head -5
    "$WORK/gemm16_time" "$dt" "$SHAPES" "$REPS" "${libs[@]}" >"$OUT/grid_$dt.txt" 2>&1
    echo "$dt grid: $(grep -c ' ok ' "$OUT/grid_$dt.txt") ok, $(grep -cE 'WRONG|ERR' "$OUT/grid_$dt.txt") wrong/failed"
    grep -E 'WRONG|ERR' "$OUT/grid_$dt.txt" | head -5
  done
fi

if [[ " $PHASES " == *" eval "* ]]; then
  for dt in bf16 fp16; do
    for t in ${GEMM16_TEMPLATES:-gemm_bias_relu_tma gemm_bias_relu_wgmma gemm_bias_relu_mma16}; do
      k=$WORK/${t}_defaults.cu
      "$BIN/kevolve" kb render gemm_bias_relu --backend cuda --variant "$dt" --template "cuda/$t" >"$k" || continue
      "$BIN/kevolve" eval --backend cuda --op "$OP" --variant "$dt" --kernel "$k" --json --ncu off \
        --torch "${GEMM16_TORCH:-on}" --budget "${GEMM16_BUDGET:-0.25}" --shapes ${GEMM16_EVAL_SHAPES:-all} \
        >"$OUT/eval_${dt}_${t#gemm_bias_relu_}.json" 2>"$OUT/eval_${dt}_${t#gemm_bias_relu_}.err"
      echo "eval $dt $t: exit $? $(python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(v['status'], v['reason'][:300])" "$OUT/eval_${dt}_${t#gemm_bias_relu_}.json" 2>/dev/null || tail -3 "$OUT/eval_${dt}_${t#gemm_bias_relu_}.err")"
    done
  done
fi
python3 "$ROOT/bench/cuda_gemm16_table.py" "$OUT" | tee "$OUT/table.md"
