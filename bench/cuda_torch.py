#!/usr/bin/env python3
"""PyTorch eager and torch.compile on the GPU, timed with
triton.testing.do_bench (median, L2 flushed before each call), next to
kevolve's verdicts (CUDA events per call in the worker, inputs rotated over
more than twice the L2).

usage: cuda_torch.py OPERATORS_DIR COPY_GBS EVAL_JSON...   (one verdict per operator;
shapes come from OPERATORS_DIR/<op>.yaml, the copy bandwidth from kevolve doctor)
Prints one table row per timed shape; writes nothing.
"""
import json
import sys

import torch
import triton.testing
import yaml

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


def time_fn(fn, sets):
    """triton.testing.do_bench's median: CUDA events around each call with the
    L2 flushed (a 256 MB memset) before it, which also lets host-side dispatch
    run ahead of the GPU, as it does in a model."""
    args = sets[0]
    return triton.testing.do_bench(lambda: fn(*args), warmup=25, rep=200, return_mode="median") * 1e-3


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 operators: fp32 arithmetic, as cuBLAS's default
    torch.backends.cudnn.allow_tf32 = False
    ops_dir, copy_gbs = sys.argv[1], float(sys.argv[2])
    rows = []
    torch_times = {}  # (op, shape) -> (eager, compiled), timed once
    for path in sys.argv[3:]:
        kernel = path.rsplit("/", 1)[-1].removeprefix("eval_").removesuffix(".json")
        v = json.load(open(path))
        op = v["operator"]
        shapes = {s["name"]: s for s in yaml.safe_load(open(f"{ops_dir}/{op}.yaml"))["shapes"]}
        for s in v["shapes"]:
            if s["holdout"]:
                continue
            if (op, s["shape"]) not in torch_times:
                torch.manual_seed(0)
                sets = [make_inputs(op, shapes[s["shape"]])[0]]
                torch_times[(op, s["shape"])] = (time_fn(expression(op), sets), time_fn(torch.compile(expression(op)), sets))
                del sets
            eager, compiled = torch_times[(op, s["shape"])]
            floor = s["bytes"] / (copy_gbs * 1e9)
            if op == "gemm_bias_relu":
                floor = max(floor, s["flops"] / (v["hardware"]["peak_gflops"] * 1e9))
            rows.append((kernel, s["shape"], s["candidate"]["median_s"], s["baseline"]["median_s"], eager, compiled, floor,
                         s["status"]))
    print(f"{'kernel':24} {'shape':18} {'kevolve us':>10} {'cuda base':>10} {'eager us':>9} {'compile':>9} "
          f"{'floor us':>9} {'x eager':>8} {'x compile':>9} {'% floor':>8}  status")
    for op, shape, k, b, e, c, f, st in rows:
        print(f"{op:24} {shape:18} {k*1e6:10.1f} {b*1e6:10.1f} {e*1e6:9.1f} {c*1e6:9.1f} {f*1e6:9.1f} {e/k:8.2f} "
              f"{c/k:9.2f} {100*f/k:7.0f}%  {st}")


if __name__ == "__main__":
    main()
