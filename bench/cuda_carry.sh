#!/usr/bin/env bash
# Packs what bench/cuda_check.sh needs on a GPU machine that lacks the Debian
# libraries (the lent device machine): the binaries of ./build, the shared
# libraries they need that a stock Linux image may not have, and the data
# (operators, ABI header, the PyTorch runner, examples, test kernels). The CUDA runtime comes
# along; cuBLAS is taken from the GPU machine's CUDA toolkit.
#   bench/cuda_carry.sh DEST   then on the GPU machine:   DEST/run.sh  (or DEST/run_sweep.sh [PHASE...])
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${1:?usage: cuda_carry.sh DEST}
rm -rf "$DEST" && mkdir -p "$DEST/bin" "$DEST/lib" "$DEST/src" "$DEST/tests"
B=$ROOT/build
cp "$B/kevolve" "$B/kevolve-worker" "$B/kevolve-cuda-worker" "$B/kevolve-cuda-probe" "$B/tests/kevolve_trust_tests" "$DEST/bin/"
# The CUDA template tests (bench/cuda_sweep.sh tests), when built.
[ -x "$B/tests/kevolve_synth_eval_tests" ] && cp "$B/tests/kevolve_synth_eval_tests" "$DEST/bin/"
strip "$DEST"/bin/*
# Libraries a stock image has (libc, compilers' own dependencies) stay behind:
# putting Debian's copies first on LD_LIBRARY_PATH could break g++ and nvcc there.
for b in "$DEST"/bin/*; do ldd "$b" | awk '/=>/ {print $3}'; done | sort -u |
  grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux|libdl|librt|libpthread|libresolv|libz|libzstd|libgmp|libssl|libcrypto|libffi|libgomp|libcublas|libcublasLt)\.so' |
  while read -r lib; do cp -L "$lib" "$DEST/lib/"; done
cp -r "$ROOT/config" "$ROOT/knowledge" "$ROOT/data" "$ROOT/bench" "$DEST/"
cp -r "$ROOT/src/abi" "$DEST/src/"
# The PyTorch baselines' runner (the evaluator runs it with the GPU node's python3).
mkdir -p "$DEST/src/eval" && cp "$ROOT/src/eval/torch_baseline.py" "$ROOT/src/eval/torch_entry.py" "$DEST/src/eval/"
# oneDNN (the CPU baseline conv1d checks large shapes against) when installed
# here: headers and library, compressed (the library alone is 38 MB).
if [ -f /usr/include/dnnl.hpp ]; then
  d=$(mktemp -d) && mkdir -p "$d/dnnl/include" "$d/dnnl/lib"
  cp /usr/include/dnnl*.h* "$d/dnnl/include/" && cp -r /usr/include/oneapi "$d/dnnl/include/"
  lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libdnnl.so)
  cp "$lib" "$d/dnnl/lib/libdnnl.so.2" && ln -s libdnnl.so.2 "$d/dnnl/lib/libdnnl.so"
  ldd "$lib" | awk '/libOpenCL/ {print $3}' | xargs -r -I{} cp -L {} "$d/dnnl/lib/"
  tar -C "$d" -cf - dnnl | xz -6 -T2 >"$DEST/dnnl.tar.xz" && rm -rf "$d"
fi
cp -r "$ROOT/tests/data" "$DEST/tests/"
cat >"$DEST/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine: bench/cuda_check.sh with the carried binaries.
HERE=$(cd "$(dirname "$0")" && pwd)
cuda=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do [ -d "$d" ] && cuda="$cuda:$d"; done
export LD_LIBRARY_PATH="$HERE/lib$cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -f "$HERE/dnnl.tar.xz" ]; then  # oneDNN for the conv1d CPU baseline: g++ and the worker find it here
  mkdir -p /tmp/kevolve-dnnl && tar -C /tmp/kevolve-dnnl -xJf "$HERE/dnnl.tar.xz"
  export CPATH=/tmp/kevolve-dnnl/dnnl/include LIBRARY_PATH=/tmp/kevolve-dnnl/dnnl/lib
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/tmp/kevolve-dnnl/dnnl/lib"
fi
for b in "$HERE"/bin/*; do ldd "$b" | grep 'not found' | sed "s#^#$(basename "$b"): #"; done
KEVOLVE_BIN_DIR=$HERE/bin exec bash "$HERE/bench/cuda_check.sh"
RUN
# run_sweep.sh [PHASE...]: bench/cuda_sweep.sh with the carried binaries.
sed -e 's#exec bash "$HERE/bench/cuda_check.sh"#exec bash "$HERE/bench/cuda_sweep.sh" "$@"#' \
  -e 's#^\# On the GPU machine: bench/cuda_check.sh#\# On the GPU machine: bench/cuda_sweep.sh#' "$DEST/run.sh" >"$DEST/run_sweep.sh"
chmod +x "$DEST/run.sh" "$DEST/run_sweep.sh"
du -sh "$DEST"
