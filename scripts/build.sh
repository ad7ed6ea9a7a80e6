#!/usr/bin/env bash
# Configures and builds kevolve (Release) into ./build. Idempotent.
#   scripts/build.sh [CMAKE_ARGS...]   every target (tests too unless -DKEVOLVE_BUILD_TESTS=OFF)
#   KEVOLVE_TARGETS="kevolve kevolve-worker" scripts/build.sh ...   only those targets
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
targets=()
for t in ${KEVOLVE_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j"$jobs" "${targets[@]}"
