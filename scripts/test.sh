#!/usr/bin/env bash
# Installs every dependency, builds kevolve and runs the whole test suite.
# This is the README's test command and what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh -DKEVOLVE_BUILD_TESTS=ON
cd build
# Tests share the machine's cores; one test at a time keeps timings honest.
ctest --output-on-failure --timeout 900
