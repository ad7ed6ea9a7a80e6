#!/usr/bin/env bash
# Acceptance benchmark of the mtia_emu backend: a search from the baseline
# with the builtin synthesizer on every starter operator that has mtia_emu
# templates, then per timed shape each best kernel's fraction of the emulated
# roofline (the SRAM or DRAM bandwidth the shape's tensors live in, or the
# DPE peak), its fraction of the attainable ceiling (the evaluator's: the
# roofline plus what no kernel avoids; bench/mtia_emu_report.py), what bounds
# that ceiling, the bar (80% of attainable) met or missed, and its speedup
# over the mtia_baseline, all measured in the same run. The profile is
# $KEVOLVE_MTIA_PROFILE (default mtia2i). gemm_bias_relu runs its bf16
# variant (the DPE multiplies 16-bit floats): the sweep reads a copy of its
# YAML without the fp32 variant.
# Usage: bench/mtia_emu_search.sh [OUT_DIR] [MAX_EVALUATIONS] [OPERATORS]
# (OPERATORS: comma-separated, default the five dense ones; `gather` is
# embedding_bag_sum,jagged_to_padded_dense,sequence_truncate (scalar peeks,
# indexed gathers, segmented sums); `integer` is bucketize,feature_hash (the
# SE / vector core's integer, compare and local-gather intrinsics); `fp32dpe`
# is dot_interaction,conv1d (fp32 as split-bf16 products on the DPE, their
# first variant); `all` runs all twelve). VARIANTS=all searches every dtype
# variant of each operator (e.g. dot_interaction's bf16 besides its fp32);
# SEED_FROM=STORE starts every task from that store's best kernel (the
# second generation's carry-over: bench/mtia_emu_generations.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/runs/mtia_emu_bench}
evals=${2:-16}
ops=${3:-bias_gelu,softmax,layernorm,rmsnorm,gemm_bias_relu}
[ "$ops" = gather ] && ops=embedding_bag_sum,jagged_to_padded_dense,sequence_truncate
[ "$ops" = integer ] && ops=bucketize,feature_hash
[ "$ops" = fp32dpe ] && ops=dot_interaction,conv1d
[ "$ops" = all ] && ops=bias_gelu,softmax,layernorm,rmsnorm,gemm_bias_relu,bucketize,feature_hash,embedding_bag_sum,jagged_to_padded_dense,sequence_truncate,dot_interaction,conv1d
kevolve=${KEVOLVE_BIN:-$root/build/kevolve}
mkdir -p "$out"
rm -f "$out/sweep.h5" "$out"/sweep.summary.*
sed -e "s#: gemm_bias_relu/#: $root/config/operators/gemm_bias_relu/#" -e '/^  fp32: {T: fp32}$/d' \
  "$root/config/operators/gemm_bias_relu.yaml" > "$out/gemm_bias_relu.yaml"
ops=${ops//gemm_bias_relu/$out/gemm_bias_relu.yaml}
cat > "$out/sweep.yaml" <<YAML
sweep:
  operators: [${ops//,/, }]
  backends: [mtia_emu]
  variants: ${VARIANTS:-default}
  synthesizer: builtin
  seed: 1
search:
  policy: uct
  memory: adaptive
  max_in_flight: 1
  stop:
    max_evaluations: $evals
    max_seconds: 900
    stagnation: 10
evaluator:
  threads: 1
  budget: 0.1
  timeout_ms: 60000
  trials: 3
checkpoint:
  every_seconds: 60
YAML
# SEED_FROM=STORE: start each task from that store's best kernel (kevolve run --seed-from)
"$kevolve" run "$out/sweep.yaml" --store "$out/sweep.h5" ${SEED_FROM:+--seed-from "$SEED_FROM"} > "$out/run.log" 2>&1 || { tail -30 "$out/run.log"; exit 1; }
python=${PYTHON:-$root/.venv/bin/python}
[ -x "$python" ] || python=python3
"$python" "$root/bench/mtia_emu_report.py" "$out/sweep.h5" "$root/config/hardware/${KEVOLVE_MTIA_PROFILE:-mtia2i}.yaml"
