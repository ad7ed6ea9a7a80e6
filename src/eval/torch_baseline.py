#!/usr/bin/env python3
"""Times an operator's `torch` expression (its YAML) for kevolve's evaluator.

usage: torch_baseline.py DIR MODE      (MODE: eager | compile | probe)

DIR/manifest.json, written by the evaluator (src/eval/torch_baseline.cpp):
  {"expression", "device": "cuda"|"cpu", "threads", "rotation_bytes",
   "max_sets", "budget_seconds", "min_runs",
   "inputs": [{"name", "dtype", "shape", "file"}], "outputs": [{"name", "dtype", "shape"}],
   "params": {"name": value}}
with each input's raw bytes (row-major, native dtype) in DIR/<file>.

Writes DIR/<MODE>.json: {"ok": true, "ns": [per-call times], "outputs": [files]}
with the outputs of one call on the given inputs in DIR/<MODE>_<i>.bin, for the
evaluator to check against the operator's reference; or {"ok": false,
"reason": ...}. It never judges the values itself. Timing follows the
evaluator's: a warm-up pass over every input set, then calls rotating over
copies of the inputs larger than rotation_bytes (more than the L2), each timed
alone (CUDA events on a GPU, a monotonic clock on the CPU).
MODE probe prints "torch <version> cuda <0|1>" and writes nothing.
"""
import json
import math
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "fp64": torch.float64,
          "int32": torch.int32, "int64": torch.int64}


def make_function(expression, names):
    """The expression as a function of the inputs and params; a function body
    (statements ending in `return`) is accepted as it is."""
    try:
        compile(expression, "<torch>", "eval")
        body = "return (" + expression + ")"
    except SyntaxError:
        body = expression
    src = "def kv_torch(" + ", ".join(names) + "):\n" + "".join("    " + l + "\n" for l in body.splitlines())
    scope = {"torch": torch, "F": F, "math": math}
    exec(compile(src, "<torch expression>", "exec"), scope)
    return scope["kv_torch"]


def load_input(d, t, device):
    with open(os.path.join(d, t["file"]), "rb") as f:
        data = bytearray(f.read())
    x = torch.frombuffer(data, dtype=DTYPES[t["dtype"]]) if data else torch.empty(0, dtype=DTYPES[t["dtype"]])
    return x.reshape(t["shape"]).to(device)


def as_outputs(result, specs):
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(outs) != len(specs):
        raise ValueError(f"returned {len(outs)} tensors, the operator has {len(specs)} outputs")
    for o, s in zip(outs, specs):
        if not isinstance(o, torch.Tensor):
            raise ValueError(f"output '{s['name']}' is a {type(o).__name__}, not a tensor")
        if list(o.shape) != list(s["shape"]):
            raise ValueError(f"output '{s['name']}' has shape {list(o.shape)}, the operator's is {s['shape']}")
        if o.dtype != DTYPES[s["dtype"]]:
            raise ValueError(f"output '{s['name']}' is {o.dtype}, the operator's is {s['dtype']}")
    return outs


def write_outputs(d, mode, outs):
    files = []
    for i, o in enumerate(outs):
        o = o.detach().contiguous().cpu()
        if o.dtype == torch.bfloat16:
            o = o.view(torch.int16)
        name = f"{mode}_{i}.bin"
        with open(os.path.join(d, name), "wb") as f:
            f.write(o.numpy().tobytes())
        files.append(name)
    return files


def timer(device):
    """Times one call of fn(): CUDA events around it on a GPU, a monotonic clock on the CPU."""
    if device == "cuda":
        def run(fn):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            return (start, end)

        def read(marks):
            torch.cuda.synchronize()
            return [int(s.elapsed_time(e) * 1e6) for s, e in marks]
        return run, read

    def run(fn):
        t0 = time.perf_counter_ns()
        fn()
        return time.perf_counter_ns() - t0
    return run, lambda marks: list(marks)


def measure(m, fn, args):
    """Per-call nanoseconds over input sets larger than rotation_bytes."""
    set_bytes = sum(a.numel() * a.element_size() for a in args) or 1
    count = max(1, min(int(m["max_sets"]), math.ceil(m["rotation_bytes"] / set_bytes)))
    sets = [args] + [[a.clone() for a in args] for _ in range(count - 1)]
    run, read = timer(m["device"])
    warm = read([run(lambda s=s: fn(*s)) for s in sets])
    est = max(sorted(warm)[len(warm) // 2] * 1e-9, 1e-7)
    reps = int(min(max(m["budget_seconds"] / est, m["min_runs"]), 100000))
    marks = [run(lambda s=sets[i % count]: fn(*s)) for i in range(reps)]
    return read(marks)


def main():
    d, mode = sys.argv[1], sys.argv[2]
    if mode == "probe":
        print("torch", torch.__version__, "cuda", int(torch.cuda.is_available()))
        return 0
    with open(os.path.join(d, "manifest.json")) as f:
        m = json.load(f)
    torch.set_num_threads(max(1, int(m["threads"])))
    if m["device"] == "cuda":
        # The operators' arithmetic: fp32 products not rounded to TF32, and
        # fp16/bf16 matmuls accumulated in fp32 (no reduced-precision split-K).
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        for flag in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
            if hasattr(torch.backends.cuda.matmul, flag):
                setattr(torch.backends.cuda.matmul, flag, False)
    result = {"ok": False}
    try:
        args = [load_input(d, t, m["device"]) for t in m["inputs"]]
        fn = make_function(m["expression"], [t["name"] for t in m["inputs"]] + list(m["params"]))
        params = list(m["params"].values())
        if mode == "compile":
            if not hasattr(torch, "compile"):
                raise RuntimeError(f"PyTorch {torch.__version__} has no torch.compile")
            fn = torch.compile(fn, dynamic=False)
        with torch.no_grad():
            call = lambda *a: fn(*a, *params)  # noqa: E731
            outs = as_outputs(call(*args), m["outputs"])
            files = write_outputs(d, mode, outs)
            ns = measure(m, call, args)
        result = {"ok": True, "ns": ns, "outputs": files, "torch": torch.__version__}
    except Exception as e:  # the evaluator reports it; it is not an evaluation error
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        result = {"ok": False, "reason": last[:2000]}
    with open(os.path.join(d, mode + ".json"), "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
