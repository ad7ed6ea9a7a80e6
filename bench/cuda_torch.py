#!/usr/bin/env python3
"""PyTorch eager and torch.compile on the GPU, timed the way kevolve's cuda
worker times kernels (CUDA events per call, inputs rotated over more than
twice the L2, median and 10-90 percentiles), next to kevolve's verdicts.

usage: cuda_torch.py OPERATORS_DIR COPY_GBS EVAL_JSON...   (one verdict per operator;
shapes come from OPERATORS_DIR/<op>.yaml, the copy bandwidth from kevolve doctor)
Prints one table row per timed shape; writes nothing.
"""
import json
import sys

import torch
import yaml

L2_ROTATION_BYTES = 256 << 20


def make_inputs(op, shape):
    if op == "softmax":
        b, n = shape["B"], shape["N"]
        return [torch.randn(b, n, device="cuda") * 2], 2 * b * n * 4
    if op == "gemm_bias_relu":
        m, k, n = shape["M"], shape["K"], shape["N"]
        a = torch.rand(m, k, device="cuda") * 2 - 1
        bm = torch.randn(k, n, device="cuda") * 0.05
        bias = torch.randn(n, device="cuda") * 0.5
        return [a, bm, bias], (m * k + k * n + n + m * n) * 4
    raise SystemExit(f"cuda_torch.py: no torch expression for operator '{op}'")


def expression(op):
    if op == "softmax":
        return lambda x: torch.softmax(x, dim=-1)
    return lambda a, b, bias: torch.relu(a @ b + bias)


def time_fn(fn, sets, runs=60):
    for s in sets[:3]:
        fn(*s)
    torch.cuda.synchronize()
    times = []
    for i in range(runs):
        s = sets[i % len(sets)]
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn(*s)
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3)
    times.sort()
    return times[len(times) // 2], times[len(times) // 10], times[(9 * len(times)) // 10]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 operators: fp32 arithmetic, as cuBLAS's default
    torch.backends.cudnn.allow_tf32 = False
    ops_dir, copy_gbs = sys.argv[1], float(sys.argv[2])
    rows = []
    for path in sys.argv[3:]:
        v = json.load(open(path))
        op = v["operator"]
        shapes = {s["name"]: s for s in yaml.safe_load(open(f"{ops_dir}/{op}.yaml"))["shapes"]}
        for s in v["shapes"]:
            if s["holdout"]:
                continue
            torch.manual_seed(0)
            first, set_bytes = make_inputs(op, shapes[s["shape"]])
            sets = [first] + [make_inputs(op, shapes[s["shape"]])[0] for _ in range(max(1, L2_ROTATION_BYTES // set_bytes))]
            eager = time_fn(expression(op), sets)
            compiled = time_fn(torch.compile(expression(op)), sets)
            floor = s["bytes"] / (copy_gbs * 1e9)
            if op == "gemm_bias_relu":
                floor = max(floor, s["flops"] / (v["hardware"]["peak_gflops"] * 1e9))
            rows.append((op, s["shape"], s["candidate"]["median_s"], s["baseline"]["median_s"], eager[0], compiled[0], floor,
                         s["status"]))
    print(f"{'operator':16} {'shape':18} {'kevolve us':>10} {'cuda base':>10} {'eager us':>9} {'compile':>9} "
          f"{'floor us':>9} {'x eager':>8} {'x compile':>9} {'% floor':>8}  status")
    for op, shape, k, b, e, c, f, st in rows:
        print(f"{op:16} {shape:18} {k*1e6:10.1f} {b*1e6:10.1f} {e*1e6:9.1f} {c*1e6:9.1f} {f*1e6:9.1f} {e/k:8.2f} "
              f"{c/k:9.2f} {100*f/k:7.0f}%  {st}")


if __name__ == "__main__":
    main()
