#!/usr/bin/env bash
# Installs every dependency, builds kevolve and runs the main job: a sweep
# over every starter operator on this machine's CPU with the builtin
# (offline) synthesizer (config/quickstart.yaml). The store, and the summary
# as Markdown and CSV, land in ./runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --run
# Only what the sweep runs: kevolve and the workers of its backends (cpu,
# mtia_emu); the tests and benchmarks are built by scripts/test.sh.
KEVOLVE_TARGETS="kevolve kevolve-worker kevolve-mtia-worker" ./scripts/build.sh -DKEVOLVE_BUILD_TESTS=OFF
./build/kevolve doctor
mkdir -p runs
store="runs/quickstart-$(date -u +%Y%m%d-%H%M%S).h5"
./build/kevolve run config/quickstart.yaml --store "$store"
echo "see also: ./build/kevolve report $store"
