#!/usr/bin/env bash
# Creates the project virtualenv .venv/ (Debian's python3) and installs the
# pinned PyPI packages of scripts/python-requirements.txt into it. Idempotent:
# a venv whose stamp matches the requirements is left as it is. kevolve finds
# it by itself (src/common/paths.cpp); KEVOLVE_PYTHON overrides it.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${KEVOLVE_VENV:-$PWD/.venv}"
req=scripts/python-requirements.txt
stamp="$venv/.kevolve-requirements"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
  echo "install-python: $venv is up to date ($(grep -c '==' "$req") pinned packages)"
  exit 0
fi
start=$(date +%s)
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
fi
# No cache: the wheels (about 3 GB with CUDA's) are installed once.
"$venv/bin/python" -m pip install --quiet --no-cache-dir --disable-pip-version-check -r "$req"
"$venv/bin/python" -c "import torch, triton, h5py, numpy, yaml; print('install-python: torch', torch.__version__, 'triton', triton.__version__)"
cp "$req" "$stamp"
echo "install-python: $venv ready in $(( $(date +%s) - start )) s"
