#!/usr/bin/env bash
# Installs every dependency, builds kevolve and runs the main job on this
# machine's CPU: every shipped example kernel (knowledge/examples/cpu/)
# evaluated against its operator's baseline, with a verdict table each.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
./build/kevolve doctor
status=0
for kernel in knowledge/examples/cpu/*.cpp; do
  op=$(basename "$kernel" .cpp)
  echo
  echo "=== $op ==="
  ./build/kevolve eval --op "$op" --backend cpu --kernel "$kernel" || status=1
done
exit $status
