#!/usr/bin/env python3
"""PyTorch eager and torch.compile on the GPU next to kevolve's verdicts
(CUDA events per call in the worker, inputs rotated over more than twice the
L2). Where the evaluator measured them itself (a verdict's torch_eager and
torch_compile, a store's torch_*_median_s), those times are used; otherwise
the operator's `torch` expression from its YAML is timed here with
triton.testing.do_bench (median, L2 flushed before each call).

usage: cuda_torch.py OPERATORS_DIR COPY_GBS [--times FILE] EVAL_JSON...
  One verdict per kernel (kevolve eval --json); shapes come from
  OPERATORS_DIR/<op>.yaml, the copy bandwidth from kevolve doctor. --times
  FILE: reuse the PyTorch times stored there and add new ones to it.
usage: cuda_torch.py OPERATORS_DIR COPY_GBS --times FILE --only-torch OP...
  Times PyTorch alone (every timed shape of each OP) into FILE.
usage: cuda_torch.py OPERATORS_DIR COPY_GBS [--times FILE [--stored-only]] --store STORE FP32_GFLOPS [--store ...]
  The best correct kernel of every task of a sweep's store (its own
  measurements: every held-out shape verified, every timed shape timed
  against the cuda baseline in the same evaluation).
Prints one table row per timed shape and the geometric means.
"""
import json
import math
import os
import sys

import yaml

# torch and triton are imported when something must be timed: tables from
# stored times need neither.
torch = triton = runner = None


def load_torch():
    global torch, triton, runner
    if torch is None:
        import torch as t
        import triton as tr
        import triton.testing  # noqa: F401 - makes tr.testing available
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "eval"))
        import torch_entry as rn  # the evaluator's: the YAML expression as a function
        torch, triton, runner = t, tr, rn
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 operators: fp32 arithmetic, as cuBLAS's default
        torch.backends.cudnn.allow_tf32 = False

def offsets(b, total, dev):
    cuts = torch.sort(torch.randint(0, total + 1, (b - 1,), device=dev)).values
    return torch.cat([torch.zeros(1, dtype=torch.int64, device=dev), cuts, torch.full((1,), total, device=dev)])


def make_args(op, s):
    """Inputs like the YAML's first generators, in the YAML's input order."""
    dev = "cuda"
    if op == "softmax":
        return [torch.randn(s["B"], s["N"], device=dev) * 2]
    if op == "layernorm":
        n = s["N"]
        return [torch.randn(s["B"], n, device=dev), 1 + 0.2 * torch.randn(n, device=dev), 0.2 * torch.randn(n, device=dev)]
    if op == "rmsnorm":
        return [torch.randn(s["B"], s["N"], device=dev), 1 + 0.2 * torch.randn(s["N"], device=dev)]
    if op == "bias_gelu":
        return [torch.randn(s["B"], s["N"], device=dev), 0.5 * torch.randn(s["N"], device=dev)]
    if op == "embedding_bag_sum":
        return [torch.randn(s["E"], s["D"], device=dev), torch.randint(0, s["E"], (s["NNZ"],), device=dev),
                offsets(s["B"], s["NNZ"], dev)]
    if op == "bucketize":
        return [torch.rand(s["N"], device=dev) * 2.5 - 1.25, torch.sort(torch.rand(s["NB"], device=dev) * 2 - 1).values]
    if op == "feature_hash":
        return [torch.randint(0, 1 << 40, (s["N"],), device=dev)]
    if op in ("jagged_to_padded_dense", "sequence_truncate"):
        return [torch.randn(s["TOTAL"], s["D"], device=dev), offsets(s["B"], s["TOTAL"], dev)]
    if op == "dot_interaction":
        return [torch.randn(s["B"], s["F"], s["D"], device=dev)]
    if op == "conv1d":
        return [torch.randn(s["B"], s["Cin"], s["L"], device=dev), 0.05 * torch.randn(s["Cout"], s["Cin"], s["Kw"], device=dev),
                0.5 * torch.randn(s["Cout"], device=dev)]
    if op == "gemm_bias_relu":
        return [torch.rand(s["M"], s["K"], device=dev) * 2 - 1, 0.05 * torch.randn(s["K"], s["N"], device=dev),
                0.5 * torch.randn(s["N"], device=dev)]
    raise SystemExit(f"cuda_torch.py: no inputs for operator '{op}'")


def make_inputs(ops_dir, op, s):
    """(args, fn): the operator's `torch` expression from its YAML, as the
    evaluator builds it (src/eval/torch_entry.py), with the params
    bound (their value expressions over the shape's symbols)."""
    spec = yaml.safe_load(open(f"{ops_dir}/{op}.yaml"))
    params = spec.get("params") or []
    values = [eval(str(p["value"]).replace("^", "**"), {}, dict(s)) for p in params]
    values = [float(v) if p["type"] == "float" else int(v) for p, v in zip(params, values)]
    f = runner.expression_function(spec["torch"], [t["name"] for t in spec["inputs"]] + [p["name"] for p in params])
    return make_args(op, s), lambda *a: f(*a, *values)


def time_fn(fn, args):
    """triton.testing.do_bench's median: CUDA events around each call with the
    L2 flushed (a 256 MB memset) before it."""
    return triton.testing.do_bench(lambda: fn(*args), warmup=25, rep=100, return_mode="median") * 1e-3


def time_torch(ops_dir, op, shape):
    load_torch()
    torch.manual_seed(0)
    args, fn = make_inputs(ops_dir, op, shape)
    eager = time_fn(fn, args)
    try:
        compiled = time_fn(torch.compile(fn), args)
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        print(f"torch.compile failed for {op} {shape['name']}: {str(e)[:200]}", file=sys.stderr)
        compiled = float("nan")
    del args
    torch.cuda.empty_cache()
    return eager, compiled


def store_rows(store, peak_gflops, ops_dir, copy_gbs, torch_times):
    import h5py
    rows = []
    with h5py.File(store, "r") as f:
        for name in sorted(f["tasks"], key=int):
            g = f["tasks"][name]
            op = g.attrs["operator"]
            op = op.decode() if isinstance(op, bytes) else str(op)
            nodes, meas = g["nodes"][...], g["measurements"][...]
            blob = bytes(g["text"][...])
            txt = lambda r, k: blob[int(r[k + "_offset"]):int(r[k + "_offset"]) + int(r[k + "_length"])].decode()
            ok = nodes[(nodes["state"] == 1) & (nodes["status"] == 0) & (nodes["id"] > 0)]
            if len(ok) == 0:
                print(f"{op}: no correct kernel ({len(nodes) - 1} evaluated)", file=sys.stderr)
                continue
            best = ok[ok["fitness"].argmax()]
            mine = meas[meas["node"] == best["id"]]
            held = [m for m in mine if m["holdout"]]
            held_ok = len(held) > 0 and all(txt(m, "status") == "ok" for m in held)
            origin = txt(best, "origin").removeprefix("builtin:cuda/")
            shapes = {s["name"]: s for s in yaml.safe_load(open(f"{ops_dir}/{op}.yaml"))["shapes"]}
            for m in mine:
                if m["holdout"]:
                    continue
                sh = txt(m, "shape")
                stored = [float(m[k]) if k in m.dtype.names else 0.0 for k in ("torch_eager_median_s", "torch_compile_median_s")]
                eager, compiled = stored if all(stored) else torch_times(op, shapes[sh])
                k = float(m["candidate_median_s"])
                mem = float(m["achieved_gbs"]) * k / copy_gbs
                comp = float(m["achieved_gflops"]) * k / peak_gflops
                rows.append((f"{op} ({origin} #{int(best['id'])})", sh, k, float(m["baseline_median_s"]), eager, compiled,
                             max(mem, comp), "mem" if mem >= comp else "flop",
                             txt(m, "status") if held_ok else f"HOLDOUT-{len(held)}", "ok"))
    return rows


def main():
    args = sys.argv[1:]
    ops_dir, copy_gbs = args[0], float(args[1])
    rest = args[2:]
    times_file = None
    if rest[:1] == ["--times"]:
        times_file, rest = rest[1], rest[2:]
    times = json.load(open(times_file)) if times_file and os.path.exists(times_file) else {}
    time_missing = True
    if rest[:1] == ["--stored-only"]:  # PyTorch times only from FILE; missing ones print as nan
        time_missing, rest = False, rest[1:]

    def torch_times(op, shape):
        key = f"{op}/{shape['name']}"
        if key not in times and not time_missing:
            return float("nan"), float("nan")
        if key not in times:
            times[key] = time_torch(ops_dir, op, shape)
            print(f"torch {key}: eager {times[key][0]*1e6:.1f} us, compile {times[key][1]*1e6:.1f} us", file=sys.stderr,
                  flush=True)
            if times_file:
                json.dump(times, open(times_file, "w"), indent=1)
        return times[key]

    if rest[:1] == ["--only-torch"]:
        for op in rest[1:]:
            for s in yaml.safe_load(open(f"{ops_dir}/{op}.yaml"))["shapes"]:
                torch_times(op, s)
        return
    rows = []
    while rest[:1] == ["--store"]:  # several stores: a later one's tasks replace an earlier one's
        new = store_rows(rest[1], float(rest[2]), ops_dir, copy_gbs, torch_times)
        done = {r[0].split(" ")[0] for r in new}
        rows = [r for r in rows if r[0].split(" ")[0] not in done] + new
        rest = rest[3:]
    for path in rest:
        kernel = path.rsplit("/", 1)[-1].removeprefix("eval_").removesuffix(".json")
        v = json.load(open(path))
        op = v["operator"]
        shapes = {s["name"]: s for s in yaml.safe_load(open(f"{ops_dir}/{op}.yaml"))["shapes"]}
        held = [s for s in v["shapes"] if s["holdout"]]
        held_ok = all(s["status"] == "ok" for s in held)
        for s in v["shapes"]:
            if s["holdout"]:
                continue
            # The evaluator's own PyTorch times (same inputs, timed like the kernel) when it measured them.
            mine = [s.get(k, {}).get("median_s") for k in ("torch_eager", "torch_compile")]
            eager, compiled = mine if all(mine) else torch_times(op, shapes[s["shape"]])
            mem = s["bytes"] / (copy_gbs * 1e9)
            comp = s["flops"] / (v["hardware"]["peak_gflops"] * 1e9)
            rows.append((kernel, s["shape"], s["candidate"]["median_s"], s["baseline"]["median_s"], eager, compiled,
                         max(mem, comp), "mem" if mem >= comp else "flop", s["status"] if held_ok else "HOLDOUT-FAIL",
                         v["status"]))
    print(f"{'kernel':44} {'shape':22} {'kevolve us':>10} {'cuda base':>10} {'eager us':>9} {'compile':>9} "
          f"{'floor us':>9} {'x eager':>8} {'x compile':>9} {'x base':>7} {'% floor':>8}  status")
    for kern, shape, k, b, e, c, f, kind, st, vst in rows:
        print(f"{kern:44} {shape:22} {k*1e6:10.1f} {b*1e6:10.1f} {e*1e6:9.1f} {c*1e6:9.1f} {f*1e6:9.1f} {e/k:8.2f} "
              f"{c/k:9.2f} {b/k:7.2f} {100*f/k:6.0f}%{kind[0]}  {st}/{vst}")

    def geo(xs):
        xs = [x for x in xs if x > 0 and math.isfinite(x)]
        return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
    if rows:
        print(f"geomean over {len(rows)} shapes: x eager {geo([r[4]/r[2] for r in rows]):.2f}, "
              f"x compile {geo([r[5]/r[2] for r in rows]):.2f}, x cuda baseline {geo([r[3]/r[2] for r in rows]):.2f}")


if __name__ == "__main__":
    main()
