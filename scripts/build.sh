#!/usr/bin/env bash
# Configures and builds kevolve (Release) into ./build. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$jobs"
