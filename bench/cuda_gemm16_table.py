#!/usr/bin/env python3
"""The table of bench/cuda_gemm16.sh from its $OUT: per (dtype, shape) the
fastest correct grid point (bench/gemm16_time.cu: grid_<dtype>.txt) against
cuBLASLt timed in the same process, and the evaluator's verdicts of the
templates' defaults (eval_<dtype>_<template>.json: the candidate, the cuda
baseline and PyTorch eager / torch.compile, timed by the evaluator).

usage: cuda_gemm16_table.py OUT
"""
import glob
import json
import os
import sys


def grid(out, dt):
    rows = {}
    path = os.path.join(out, f"grid_{dt}.txt")
    if not os.path.exists(path):
        return rows
    for line in open(path):
        f = line.split()
        if len(f) < 6 or f[0] != dt or f[5] != "ok":
            continue
        rows.setdefault(f[1], {})[f[2]] = float(f[3])
    return rows


def verdicts(out, dt):
    res = {}
    for path in sorted(glob.glob(os.path.join(out, f"eval_{dt}_*.json"))):
        tmpl = path.rsplit("_", 1)[-1][:-5]
        try:
            v = json.load(open(path))
        except (OSError, ValueError):
            continue
        for s in v.get("shapes", []):
            if s.get("holdout") or s.get("status") != "ok":
                continue
            t = {k: s.get(k, {}).get("median_s", 0) * 1e6 for k in ("candidate", "baseline", "torch_eager", "torch_compile")}
            res.setdefault(s["shape"], {})[tmpl] = t
        res.setdefault("_status", {})[tmpl] = v.get("status", "?")
    return res


def main():
    out = sys.argv[1]
    for dt in ("bf16", "fp16"):
        g, ev = grid(out, dt), verdicts(out, dt)
        if not g and not ev:
            continue
        print(f"\n### {dt}\n")
        print("| shape (MxKxN) | best template point | us | TFLOP/s | cuBLASLt us | cuBLASLt TFLOP/s | x cuBLASLt |")
        print("|---|---|---|---|---|---|---|")
        names = {}
        for name, s in ev.items():
            if name != "_status":
                names[name] = s
        for shape, libs in g.items():
            m, k, n = (int(x) for x in shape.split("x"))
            flops = 2.0 * m * n * k
            base = libs.get("0_cublaslt")
            cands = {l: t for l, t in libs.items() if l != "0_cublaslt"}
            if not cands:
                continue
            best = min(cands, key=cands.get)
            us = cands[best]
            row = [shape, best, f"{us:.1f}", f"{flops / us / 1e6:.0f}", f"{base:.1f}" if base else "-",
                   f"{flops / base / 1e6:.0f}" if base else "-", f"{base / us:.2f}" if base else "-"]
            print("| " + " | ".join(row) + " |")
        if names:
            print(f"\nevaluator verdicts ({dt}): " + ", ".join(f"{t}: {s}" for t, s in ev.get("_status", {}).items()))
            print("\n| shape | template | candidate us | baseline us | x baseline | eager us | compile us | x eager | x compile |")
            print("|---|---|---|---|---|---|---|---|---|")
            for sname, per in names.items():
                for tmpl, t in per.items():
                    c = t["candidate"]
                    f = lambda x: f"{x:.1f}" if x > 0 else "-"
                    r = lambda x: f"{x / c:.2f}" if x > 0 and c > 0 else "-"
                    print(f"| {sname} | {tmpl} | {f(c)} | {f(t['baseline'])} | {r(t['baseline'])} | {f(t['torch_eager'])} | "
                          f"{f(t['torch_compile'])} | {r(t['torch_eager'])} | {r(t['torch_compile'])} |")


if __name__ == "__main__":
    main()
