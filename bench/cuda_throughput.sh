#!/usr/bin/env bash
# Evaluations per GPU-minute (issue 21), before and after, on one GPU: the
# sweep of bench/cuda_throughput.yaml run for a fixed wall time by the
# binaries of $KEVOLVE_BIN_DIR (after) and, when $OLD_DIR is given (a carried
# older checkout: bin/, config/, knowledge/, ...), by that one (before), with
# the PyTorch times the first run measured already on disk for the second
# (which favours the older run). Then the time split of one `kevolve eval`.
#
#   KEVOLVE_BIN_DIR=DIR OLD_DIR=DIR bench/cuda_throughput.sh [NEW_SECONDS] [OLD_SECONDS]
#   KEVOLVE_LOG_LEVEL=debug ...   also each evaluation's time split ($OUT/new-split.txt), averaged
#   RESUME=STORE ...              the new run continues STORE (a store an earlier window left,
#                                 carried back) with --resume; the count is this window's evaluations
#
# Results in $OUT (default /tmp/kevolve-cuda-throughput): the summaries
# (new.csv, old.csv), the eval JSON, log.txt.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/kevolve-cuda-throughput}
WORK=${WORK:-/tmp/kevolve-cuda-throughput-work}
BIN=${KEVOLVE_BIN_DIR:-$ROOT/build}
NEW_SECONDS=${1:-240}
OLD_SECONDS=${2:-150}
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/log.txt") 2>&1

# run LABEL BIN_DIR DATA_ROOT CONFIG SECONDS
run() {
  local label=$1 bin=$2 root=$3 config=$4 seconds=$5
  env -u LD_LIBRARY_PATH python3 "$root/bench/cuda_shapes.py" "$root" "$WORK/home-$label" >/dev/null || return 1
  rm -f "$WORK/$label.h5"
  local store=(--store "$WORK/$label.h5") before=0
  if [ "$label" = new ] && [ -n "${RESUME:-}" ]; then
    cp "$RESUME" "$WORK/$label.h5" && store=(--resume "$WORK/$label.h5")
    before=$(KEVOLVE_HOME=$WORK/home-$label "$bin/kevolve" report "$WORK/$label.h5" --csv 2>/dev/null |
      python3 -c "import csv, sys; print(sum(int(r['evaluations']) for r in csv.DictReader(sys.stdin)))")
  fi
  local t0=$SECONDS
  KEVOLVE_CACHE_DIR=$WORK/cache-$label KEVOLVE_WORKER=$bin/kevolve-worker KEVOLVE_HOME=$WORK/home-$label \
    timeout -s INT -k 60 "$seconds" "$bin/kevolve" $LOGLEVEL run "$config" "${store[@]}" >"$WORK/$label.log" 2>&1
  local wall=$((SECONDS - t0))
  KEVOLVE_HOME=$WORK/home-$label "$bin/kevolve" report "$WORK/$label.h5" --csv >"$OUT/$label.csv" 2>/dev/null
  KEVOLVE_HOME=$WORK/home-$label "$bin/kevolve" report "$WORK/$label.h5" >"$OUT/$label.txt" 2>/dev/null
  python3 - "$OUT/$label.csv" "$label" "$wall" "$before" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ev = sum(int(r["evaluations"]) for r in rows) - int(sys.argv[4])
busy = sum(float(r.get("seconds") or r.get("time_s") or 0) for r in rows)
wall = float(sys.argv[3])
print(f"{sys.argv[2]}: {ev} evaluations in {wall:.0f} s of wall time: {60 * ev / wall:.1f} per GPU-minute"
      + (f"; {busy:.0f} s of evaluation in the tasks' clocks: {60 * ev / busy:.1f} per evaluating minute"
         if busy and sys.argv[4] == "0" else ""))
PY
  cp "$WORK/$label.h5" "$OUT/$label.h5"  # RESUME=$OUT/new.h5 continues it in a later window
  grep -v "evaluation split" "$WORK/$label.log" | tail -5
  # Where the evaluations' time went (the debug log's split of each one).
  grep "evaluation split" "$WORK/$label.log" >"$OUT/$label-split.txt" && python3 - "$OUT/$label-split.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
total, phases, status = 0.0, {}, {}
for line in lines:
    m = re.search(r": (\w+) in ([0-9.]+) s \(compile [0-9.]+ s[^)]*\)(.*)$", line)
    if not m:
        continue
    status[m.group(1)] = status.get(m.group(1), 0) + 1
    total += float(m.group(2))
    for part in m.group(3).split("; ")[1:]:
        name, _, sec = part.rpartition(" ")
        phases[name] = phases.get(name, 0.0) + float(sec)
n = sum(status.values())
if n:
    print(f"{n} evaluations ({', '.join(f'{k} {v}' for k, v in sorted(status.items()))}): {total / n:.3f} s each on average, of which")
    for name, sec in sorted(phases.items(), key=lambda x: -x[1]):
        print(f"    {name:50s} {sec / n:7.3f} s")
PY
}
LOGLEVEL=${KEVOLVE_LOG_LEVEL:+--log-level $KEVOLVE_LOG_LEVEL}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
KEVOLVE_CACHE_DIR=$WORK/cache-new "$BIN/kevolve" doctor >/dev/null 2>&1
run new "$BIN" "$ROOT" "$ROOT/bench/cuda_throughput.yaml" "$NEW_SECONDS"
if [ -n "${OLD_DIR:-}" ]; then
  mkdir -p "$WORK/cache-old" && cp -r "$WORK/cache-new/torch" "$WORK/cache-new/hardware" "$WORK/cache-old/" 2>/dev/null
  run old "$OLD_DIR/bin" "$OLD_DIR" "$ROOT/bench/cuda_throughput.yaml" "$OLD_SECONDS"
fi
# The 16-bit GEMM's default template through the evaluator, against cuBLASLt and PyTorch (GEMM=0: not).
for v in $([ "${GEMM:-1}" = 0 ] || echo bf16 fp16); do
  KEVOLVE_HOME=$WORK/home-new "$BIN/kevolve" kb render gemm_bias_relu --backend cuda --variant $v >"$WORK/gemm_$v.cu" &&
    KEVOLVE_CACHE_DIR=$WORK/cache-new KEVOLVE_HOME=$WORK/home-new timeout 150 "$BIN/kevolve" eval --op gemm_bias_relu \
      --variant $v --backend cuda --kernel "$WORK/gemm_$v.cu" --ncu off --budget 0.2 >"$OUT/gemm_$v.txt" 2>&1
  echo "gemm_bias_relu $v (default template):"; grep -E "status|mlp_|fitness|x |×" "$OUT/gemm_$v.txt" | head -12
done
# The time split of one evaluation (the second of two: the compile cached).
for i in 1 2; do
  KEVOLVE_CACHE_DIR=$WORK/cache-new KEVOLVE_HOME=$WORK/home-new "$BIN/kevolve" eval --op softmax --backend cuda \
    --kernel "$ROOT/knowledge/examples/cuda/softmax.cu" --json >"$OUT/eval$i.json" 2>"$OUT/eval$i.err"
done
python3 - "$OUT/eval1.json" "$OUT/eval2.json" <<'PY'
import json, sys
for f in sys.argv[1:]:
    v = json.load(open(f))
    print(f"{f}: {v['status']} in {v['seconds']:.2f} s (compile {v['compile']['seconds']:.2f} s{' cached' if v['compile'].get('cached') else ''}, overhead {v['overhead_seconds']:.2f} s)")
    for k, s in sorted(v.get("overhead_phases", {}).items(), key=lambda x: -x[1]):
        print(f"    {k:45s} {s:7.3f} s")
    for k, s in sorted(v.get("kernel_phases", {}).items(), key=lambda x: -x[1]):
        print(f"    {k:45s} {s:7.3f} s (requests that ran kernels)")
PY
