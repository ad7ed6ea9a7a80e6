#!/usr/bin/env python3
"""The evaluator's PyTorch timing (src/eval/torch_baseline.py, gpu_times)
beside two independent ones, for one expression on one GPU: CUDA events
around back-to-back calls after a warm-up (no sleep kernel), and Triton's
do_bench (L2 flushed per call) where Triton is installed; the evaluator's
also as it calls it (inputs rotated over 256 MiB of copies). Prints
microseconds per call, median, for eager and torch.compile.

  bench/torch_timing_probe.py [EXPR] [SHAPE] [DATA]
  e.g. "torch.softmax(x, dim=-1)" 8192,1024 randn   (DATA: uniform60, softmax's
  second generator, the default; or randn)
"""
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "eval"))
import torch_baseline  # noqa: E402
import torch_entry  # noqa: E402


def plain_events(fn, reps=200):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) * 1e3 / reps


def main():
    expr = sys.argv[1] if len(sys.argv) > 1 else "torch.softmax(x.float(), dim=-1).to(x.dtype)"
    shape = [int(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "8192,1024").split(",")]
    data = sys.argv[3] if len(sys.argv) > 3 else "uniform60"
    if data == "randn":
        x = torch.randn(*shape, device="cuda")
    else:  # softmax's generator uniform(-60, 60)
        x = (torch.rand(*shape, device="cuda") - 0.5) * 120
    eager = torch_entry.expression_function(expr, ["x"])
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {expr} on {shape}, {data} data")
    with torch.no_grad():
        for mode, fn in (("eager", eager), ("compile", torch.compile(eager, dynamic=False))):
            call = lambda: fn(x)  # noqa: E731
            call()
            ns, uncovered = torch_baseline.gpu_times([call] * 2000)
            row = f"{mode:8s} evaluator {statistics.median(ns) / 1e3:8.1f} us ({uncovered} calls with dispatch)"
            # as the evaluator calls it: inputs rotated over 256 MiB of copies
            m = {"max_sets": 32, "rotation_bytes": 256 << 20, "device": "cuda", "budget_seconds": 0.4, "min_runs": 100}
            ns, uncovered = torch_baseline.measure(m, lambda a: fn(a), [x])
            row += f"  rotated {statistics.median(ns) / 1e3:8.1f} us ({uncovered})"
            row += f"  events back-to-back {plain_events(call):8.1f} us"
            try:
                from triton.testing import do_bench

                row += f"  do_bench {do_bench(call) * 1e3:8.1f} us"
            except ImportError:
                pass
            print(row, flush=True)


if __name__ == "__main__":
    main()
