#!/usr/bin/env bash
# A kernel carried to the next chip generation (issue 24): the best kernels
# an mtia2i search found, on the mtia300 profile.
#   (i)  each task's best mtia2i kernel, unchanged, on mtia300: the first
#        node of a search seeded with it (--seed-from) is that kernel;
#   (ii) that seeded search against one from the templates' defaults, both
#        on mtia300 with the same budget: evaluations each needs to reach
#        90% of the best fitness either finds, and the final figures.
# Usage: bench/mtia_emu_generations.sh MTIA2I_STORE [OUT_DIR] [MAX_EVALUATIONS] [OPERATORS]
# MTIA2I_STORE: a store of bench/mtia_emu_search.sh on mtia2i (same
# OPERATORS and variants); OPERATORS and VARIANTS as that script's.
# REUSE=1 keeps OUT_DIR/defaults/sweep.h5 or OUT_DIR/seeded/sweep.h5 where
# they exist (a run interrupted between the two).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source_store=${1:?usage: bench/mtia_emu_generations.sh MTIA2I_STORE [OUT_DIR] [MAX_EVALUATIONS] [OPERATORS]}
out=${2:-$root/runs/mtia_emu_generations}
evals=${3:-16}
ops=${4:-all}
[ -f "$source_store" ] || { echo "$source_store: no such store (run bench/mtia_emu_search.sh on mtia2i first)" >&2; exit 2; }
source_store=$(cd "$(dirname "$source_store")" && pwd)/$(basename "$source_store")
mkdir -p "$out"
for run in defaults seeded; do
  if [ "${REUSE:-0}" = 1 ] && [ -f "$out/$run/sweep.h5" ]; then continue; fi
  seed=""
  [ "$run" = seeded ] && seed=$source_store
  KEVOLVE_MTIA_PROFILE=mtia300 SEED_FROM=$seed "$root/bench/mtia_emu_search.sh" "$out/$run" "$evals" "$ops" \
    > "$out/$run.txt"
done
python=${PYTHON:-$root/.venv/bin/python}
[ -x "$python" ] || python=python3
"$python" "$root/bench/mtia_emu_generations.py" "$source_store" "$out/seeded/sweep.h5" "$out/defaults/sweep.h5"
