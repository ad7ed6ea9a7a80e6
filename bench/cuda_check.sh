#!/usr/bin/env bash
# On a GPU node: the cuda backend's GPU tests, then the CUDA examples of
# softmax and gemm_bias_relu through `kevolve eval --backend cuda --json`,
# whose verdicts carry all three baselines per timed shape (the YAML's
# cuda_baseline, cuBLAS for gemm_bias_relu, and PyTorch eager and
# torch.compile of the operator's `torch` expression, measured by the
# evaluator on the same inputs and timed the same way); the check fails when
# a PyTorch baseline is missing; and the Nsight Compute profile line of each
# verified example (evaluator.ncu auto). Needs `python3` (or $KEVOLVE_PYTHON) with
# PyTorch and a GPU.
#
#   bench/cuda_check.sh              # builds ./build first (needs scripts/install-deps.sh)
#   KEVOLVE_BIN_DIR=DIR bench/cuda_check.sh   # uses binaries built elsewhere
#
# Logs go to $OUT (default /tmp/kevolve-cuda-check); the table comes last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/kevolve-cuda-check}
mkdir -p "$OUT"
if [ -z "${KEVOLVE_BIN_DIR:-}" ]; then
  cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build "$ROOT/build" -j"$(nproc)" --target kevolve kevolve_trust_tests >>"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
  KEVOLVE_BIN_DIR=$ROOT/build
fi
BIN=$KEVOLVE_BIN_DIR
export KEVOLVE_HOME=$ROOT KEVOLVE_CACHE_DIR=${KEVOLVE_CACHE_DIR:-$OUT/cache} KEVOLVE_WORKER=$BIN/kevolve-worker
export KEVOLVE_TEST_DATA=$ROOT/tests/data KEVOLVE_BIN=$BIN/kevolve
OPS=${KEVOLVE_OPS_DIR:-$ROOT/config/operators}

command -v ncu >/dev/null && echo "ncu: $(ncu --version | tail -1)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
"$BIN/kevolve" doctor 2>&1 | tee "$OUT/doctor.txt"
copy_gbs=$(awk '/device-to-device/ {print $2}' "$OUT/doctor.txt")

"$BIN/kevolve_trust_tests" --gtest_filter='Cuda*' 2>&1 | tee "$OUT/gpu_tests.txt" | grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED) '
tests_rc=${PIPESTATUS[0]}

# The examples, then any variants kept in bench/cuda_variants/<op>.<variant>.cu.
jsons=()
for kernel in "$ROOT"/knowledge/examples/cuda/{softmax,gemm_bias_relu}.cu "$ROOT"/bench/cuda_variants/*.cu; do
  [ -f "$kernel" ] || continue
  name=$(basename "$kernel" .cu)
  op=${name%%.*}
  "$BIN/kevolve" eval --backend cuda --op "$OPS/$op.yaml" --kernel "$kernel" --json >"$OUT/eval_$name.json" 2>"$OUT/eval_$name.err"
  echo "kevolve eval --backend cuda --op $op --kernel $name.cu: exit $? ($(python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(v['status'], v['reason'][:200])" "$OUT/eval_$name.json" 2>/dev/null || tail -3 "$OUT/eval_$name.err"))"
  [ -s "$OUT/eval_$name.json" ] && jsons+=("$OUT/eval_$name.json")
done
# bf16 through the generic path, verified only for its status here.
"$BIN/kevolve" eval --backend cuda --op "$OPS/softmax.yaml" --variant bf16 --kernel "$ROOT/knowledge/examples/cuda/softmax.cu" \
  --json >"$OUT/eval_softmax_bf16.json" 2>&1
echo "softmax bf16: $(python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(v['status'], [(s['shape'], round(s['candidate']['median_s']*1e6,1)) for s in v['shapes'] if not s['holdout']])" "$OUT/eval_softmax_bf16.json" 2>&1 | tail -1)"
# All three baselines side by side, from the verdicts alone.
python3 - "${jsons[@]}" <<'PY' | tee "$OUT/baselines.txt"
import json, sys
missing = 0
print(f"{'kernel':30} {'shape':22} {'kernel us':>10} {'baseline us':>11} {'eager us':>9} {'compile us':>10}  baseline")
for path in sys.argv[1:]:
    v = json.load(open(path))
    for s in v["shapes"]:
        if s["holdout"] or s["status"] != "ok":
            continue
        t = [s.get(k, {}).get("median_s", 0) * 1e6 for k in ("candidate", "baseline", "torch_eager", "torch_compile")]
        notes = [f"{k}: {s[k]['note']}" for k in ("torch_eager", "torch_compile") if s.get(k, {}).get("note")]
        missing += not (t[2] > 0 and t[3] > 0)
        print(f"{path.rsplit('/', 1)[-1][5:-5]:30} {s['shape']:22} {t[0]:10.1f} {t[1]:11.1f} {t[2]:9.1f} {t[3]:10.1f}  "
              f"{v['baseline'][:40]}" + "".join("\n    " + n for n in notes))
print(f"PyTorch baselines missing at {missing} timed shapes")
sys.exit(1 if missing else 0)
PY
torch_rc=${PIPESTATUS[0]}
# The evaluator's Nsight Compute pass (evaluator.ncu auto): one profiled shape per verified example.
python3 - "${jsons[@]}" <<'PY' | tee "$OUT/ncu.txt"
import json, sys
n = 0
for path in sys.argv[1:]:
    v = json.load(open(path))
    for s in v["shapes"]:
        if s.get("metrics"):
            n += 1
            print(f"{path.rsplit('/', 1)[-1][5:-5]:30} {s['shape']:22} {s['profile']}")
print(f"Nsight Compute profiles in {n} of {len(sys.argv) - 1} verdicts" + ("" if n else " (no ncu, or it could not profile: see eval_*.err)"))
PY
if [ -n "$copy_gbs" ] && [ ${#jsons[@]} -gt 0 ]; then
  # PyTorch loads its own CUDA libraries, not the ones carried for kevolve.
  env -u LD_LIBRARY_PATH PYTHONUNBUFFERED=1 python3 "$ROOT/bench/cuda_torch.py" "$OPS" "$copy_gbs" "${jsons[@]}" 2>"$OUT/torch.err" | tee "$OUT/table.txt"
  tail -3 "$OUT/torch.err"
fi
echo "gpu tests: exit $tests_rc; PyTorch baselines in the verdicts: exit $torch_rc"
[ "$tests_rc" -eq 0 ] || exit "$tests_rc"
exit "$torch_rc"
