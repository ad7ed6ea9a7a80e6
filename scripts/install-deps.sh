#!/usr/bin/env bash
# Installs every Debian 12 package kevolve needs to build, test, run and benchmark,
# then the project virtualenv with its pinned PyTorch (scripts/install-python.sh).
# Idempotent. Run as root (or through sudo).
#   scripts/install-deps.sh          everything (tests, HTML report test, hip, Slurm)
#   scripts/install-deps.sh --run    only what building kevolve and running a sweep
#                                    on cpu and mtia_emu need (scripts/quickstart.sh)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

run_packages=(
  # toolchain
  build-essential cmake pkg-config ccache git
  # runtime stack fixed by the architecture
  libcaf-dev libopenmpi-dev openmpi-bin
  libhdf5-dev hdf5-tools
  libyaml-cpp-dev libboost-program-options-dev libcurl4-openssl-dev
  # small well-kept libraries instead of hand-written code
  nlohmann-json3-dev libspdlog-dev libfmt-dev libxxhash-dev libexpected-dev libmuparser-dev libseccomp-dev
  # CPU baselines: OpenBLAS (GEMM) and oneDNN (conv1d)
  libopenblas-dev libdnnl-dev
  # the project virtualenv (PyTorch, Triton, h5py from PyPI: scripts/install-python.sh)
  python3 python3-venv
)
packages=("${run_packages[@]}"
  # the HTML report's test renders it headless
  chromium
  # the hip backend: hipcc (clang-15, ROCm 5.2) compiles for AMD GPUs offline; the HIP runtime for AMD nodes
  hipcc libamdhip64-dev rocm-device-libs
  # batch scripts in slurm/ and their test on a single-node cluster (no slurmdbd needed)
  slurm-wlm munge
  # tests
  googletest libgtest-dev libgmock-dev
)
if [ "${1:-}" = "--run" ]; then packages=("${run_packages[@]}"); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
else
  echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
"$(dirname "$0")/install-python.sh"
