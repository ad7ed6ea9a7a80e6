#!/usr/bin/env python3
"""What PyTorch's fresh outputs cost on the CPU (the closing note of the
PyTorch-in issue): at 4096 x 4096 fp32 an output is 64 MB, above glibc's
largest mmap threshold (32 MB), so every call maps fresh pages and faults
them in. Prints GB/s (3 tensors of traffic per call) of swiglu eager and
torch.compile, and of a multiply with a fresh output against one with out=.

usage: .venv/bin/python bench/torch_cpu_alloc.py [THREADS]   (default 2)
"""
import sys
import time

import torch
import torch.nn.functional as F


def gbs(fn, *args, reps=10):
    for _ in range(3):
        fn(*args)
    t = time.perf_counter()
    for _ in range(reps):
        fn(*args)
    dt = (time.perf_counter() - t) / reps
    return dt * 1e3, 3 * 4 * 4096 * 4096 / dt / 1e9


def main():
    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
    g, u, y = torch.randn(4096, 4096), torch.randn(4096, 4096), torch.empty(4096, 4096)
    swiglu = lambda g, u: F.silu(g) * u  # noqa: E731
    rows = [("swiglu eager (fresh outputs)", swiglu), ("swiglu torch.compile (fresh outputs)", torch.compile(swiglu, dynamic=False)),
            ("mul, fresh output", torch.mul), ("mul, out=", lambda g, u: torch.mul(g, u, out=y))]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, 4096 x 4096 fp32")
    for name, fn in rows:
        ms, rate = gbs(fn, g, u)
        print(f"{name:40s} {ms:8.2f} ms {rate:6.1f} GB/s")


if __name__ == "__main__":
    main()
