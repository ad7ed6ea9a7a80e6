#!/usr/bin/env bash
# The PyTorch-in acceptance run on a GPU node (the lent H200): a sweep of
# every starter operator on cuda at the shapes of bench/cuda_shapes.yaml whose
# fitness is × PyTorch (the faster of eager and torch.compile, each measured
# once per shape), and two evaluations of one kernel: the first measures
# PyTorch, the second reads it from the disk cache.
#   KEVOLVE_BIN_DIR=DIR bench/cuda_pytorch_in.sh      (binaries from bench/cuda_carry.sh)
# Output in $OUT (default /tmp/kevolve-pytorch-in): log.txt, summary.csv, evals.txt.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/kevolve-pytorch-in}
WORK=${KEVOLVE_SWEEP_WORK:-/tmp/kevolve-pytorch-in-work}
BIN=${KEVOLVE_BIN_DIR:-$ROOT/build}
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/log.txt") 2>&1
export KEVOLVE_CACHE_DIR=$WORK/cache KEVOLVE_WORKER=$BIN/kevolve-worker KEVOLVE_BIN=$BIN/kevolve PYTHONUNBUFFERED=1
export KEVOLVE_PYTHON=${KEVOLVE_PYTHON:-$(command -v python3)}
"$KEVOLVE_PYTHON" -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
env -u LD_LIBRARY_PATH python3 "$ROOT/bench/cuda_shapes.py" "$ROOT" "$WORK/home" || exit 1
# 1. PyTorch once per shape: the same kernel evaluated twice, two processes.
for i in 1 2; do
  start=$(date +%s.%N)
  KEVOLVE_HOME=$WORK/home "$BIN/kevolve" eval --backend cuda --op softmax --kernel "$ROOT/knowledge/examples/cuda/softmax.cu" \
    --json > "$WORK/eval$i.json"
  end=$(date +%s.%N)
  python3 - "$WORK/eval$i.json" "$i" "$start" "$end" <<'PY' | tee -a "$OUT/evals.txt"
import json, sys
v = json.load(open(sys.argv[1]))
torch_s = v["overhead_phases"].get("PyTorch baselines (once per shape)", 0.0)
print(f"eval {sys.argv[2]}: wall {float(sys.argv[4]) - float(sys.argv[3]):.1f} s, PyTorch {torch_s:.2f} s, "
      f"fitness {v['fitness']:.3f} {v['fitness_over']}")
for s in v["shapes"]:
    if not s["holdout"]:
        print(f"  {s['shape']}: candidate {s['candidate']['median_s']*1e6:.1f} us, eager {s['torch_eager']['median_s']*1e6:.1f} us, "
              f"compile {s['torch_compile']['median_s']*1e6:.1f} us, baseline {s['baseline']['median_s']*1e6:.1f} us")
PY
done
# 2. The sweep, × PyTorch.
rm -f "$WORK/sweep.h5"
KEVOLVE_HOME=$WORK/home timeout "${SWEEP_SECONDS:-420}" "$BIN/kevolve" run "$ROOT/bench/cuda_sweep.yaml" \
  --store "$WORK/sweep.h5" 2>&1 | tail -32
cp "$WORK"/sweep.summary.csv "$OUT/summary.csv" 2>/dev/null
grep -c "" "$WORK"/cache/torch/times/* 2>/dev/null | wc -l | sed 's/^/PyTorch time files in the cache: /'
