#!/usr/bin/env python3
"""Runs an operator's PyTorch version (its YAML's `torch`) for kevolve's evaluator.

usage: torch_baseline.py DIR MODE      (MODE: serve | probe)

MODE probe prints "torch <version> cuda <0|1>" and writes nothing.

MODE serve answers requests, one JSON object per line on stdin, one answer
per line on stdout (src/eval/torch_process.cpp); tensors are raw files
(row-major). The evaluator keeps such processes for its references (one per
task) and for timing (one per interpreter and device, for every task, so
torch and inductor start once).

  {"op": "run", "torch": entry (src/eval/torch_entry.py), "device",
   "dtype": "fp64"|"fp32"|"native", "inputs": [{"name", "dtype", "shape", "file"}],
   "outputs": [{"name", "dtype", "shape"}], "params": {...}, "repeat": n, "threads"}
computes the outputs from the inputs (float inputs as given: the evaluator
widens them exactly to fp64 for the reference, to fp32 for the stand-in), and
answers {"ok": true, "outputs": [files], "deterministic": bool} with each
output in DIR/out_<i>.bin (floats in "dtype"; "native": the outputs' own
dtypes, checked), or {"ok": false, "reason"}; repeat > 1 runs it again on the
same inputs and says whether every run gave the same bits.

  {"op": "time", "torch", "device", "compile", "threads", "rotation_bytes",
   "max_sets", "budget_seconds", "min_runs", "inputs" (absolute files),
   "outputs", "params"}
times eager, then torch.compile, and writes DIR/<mode>.json: {"ok": true, "ns":
[per-call times], "outputs": [files], "dispatch_in_time": calls whose time may
include the host's dispatch} with the outputs of one call in
DIR/<mode>_<i>.bin, for the evaluator to check against the operator's
reference; or {"ok": false, "reason": ...}. It never judges the values
itself. Timing follows the evaluator's: a warm-up pass over every input set,
then calls rotating over copies of the inputs larger than rotation_bytes
(more than the L2), each timed alone (on a GPU by CUDA events, with the
host's dispatch kept out of the time: see gpu_times; on the CPU by a
monotonic clock).
"""
import json
import math
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_entry  # noqa: E402

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "fp64": torch.float64,
          "int32": torch.int32, "int64": torch.int64}


def load_input(d, t, device):
    with open(os.path.join(d, t["file"]), "rb") as f:
        data = bytearray(f.read())
    x = torch.frombuffer(data, dtype=DTYPES[t["dtype"]]) if data else torch.empty(0, dtype=DTYPES[t["dtype"]])
    return x.reshape(t["shape"]).to(device)


def as_outputs(result, specs, float_dtype=None):
    """The result as one tensor per output, of the outputs' shapes and dtypes
    (float outputs in `float_dtype` when given: the reference's)."""
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(outs) != len(specs):
        raise ValueError(f"returned {len(outs)} tensors, the operator has {len(specs)} outputs")
    for o, s in zip(outs, specs):
        if not isinstance(o, torch.Tensor):
            raise ValueError(f"output '{s['name']}' is a {type(o).__name__}, not a tensor")
        if list(o.shape) != list(s["shape"]):
            raise ValueError(f"output '{s['name']}' has shape {list(o.shape)}, the operator's is {s['shape']}")
        want = DTYPES[s["dtype"]]
        if float_dtype is not None and want.is_floating_point:
            if not o.dtype.is_floating_point:
                raise ValueError(f"output '{s['name']}' is {o.dtype}, the operator's is {s['dtype']}")
            continue
        if o.dtype != want:
            raise ValueError(f"output '{s['name']}' is {o.dtype}, the operator's is {s['dtype']}")
    return outs


def write_outputs(d, mode, outs, float_dtype=None):
    files = []
    for i, o in enumerate(outs):
        o = o.detach().contiguous().cpu()
        if float_dtype is not None and o.dtype.is_floating_point:
            o = o.to(float_dtype)
        if o.dtype == torch.bfloat16:
            o = o.view(torch.int16)
        name = f"{mode}_{i}.bin"
        with open(os.path.join(d, name), "wb") as f:
            f.write(o.numpy().tobytes())
        files.append(name)
    return files


def cpu_times(calls):
    """Each call timed alone by a monotonic clock; (times, 0)."""
    out = []
    for fn in calls:
        t0 = time.perf_counter_ns()
        fn()
        out.append(time.perf_counter_ns() - t0)
    return out, 0


def gpu_times(calls, batch=32):
    """Each call's GPU time alone (CUDA events around it), without the host's
    dispatch: per batch of calls a sleep kernel holds the stream while Python and
    PyTorch enqueue the batch, so the calls then run back to back on the GPU as
    a candidate's kernels do in the worker. Where the events alone would count
    the GPU waiting for the host (a 20 us kernel behind 50 us of eager dispatch
    timed 70 us), this counts the kernels. A batch whose enqueueing outlasted
    its sleep is timed again with a longer sleep. Returns (times, the number
    of calls whose batch still outlasted its sleep after 8 tries: their times
    may include dispatch)."""
    sleep = getattr(torch.cuda, "_sleep", None)
    ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731

    def enqueue(chunk):
        marks = []
        for fn in chunk:
            a, b = ev(), ev()
            a.record()
            fn()
            b.record()
            marks.append((a, b))
        return marks

    elapsed_ns = lambda marks: [int(a.elapsed_time(b) * 1e6) for a, b in marks]  # noqa: E731
    if sleep is None:  # no sleep kernel: plain events (dispatch may count in any call)
        marks = enqueue(calls)
        torch.cuda.synchronize()
        return elapsed_ns(marks), len(calls)
    # Nanoseconds per sleep cycle on this GPU, after one sleep to load the
    # kernel (lazy module loading would otherwise be timed with it).
    sleep(1000)
    torch.cuda.synchronize()
    a, b = ev(), ev()
    a.record()
    sleep(1_000_000)
    b.record()
    torch.cuda.synchronize()
    ns_per_cycle = max(a.elapsed_time(b) * 1e6 / 1_000_000, 0.05)
    host_ns = 50_000 * batch  # first guess at enqueueing a batch
    boost = 1.0  # doubles whenever a sleep proved too short
    out = []
    i = retries = uncovered = 0
    while i < len(calls):
        chunk = calls[i:i + batch]
        s0, s1 = ev(), ev()
        t0 = time.perf_counter_ns()
        s0.record()
        sleep(int(2 * boost * host_ns / ns_per_cycle))
        s1.record()
        marks = enqueue(chunk)
        host = time.perf_counter_ns() - t0
        torch.cuda.synchronize()
        slept = s0.elapsed_time(s1) * 1e6
        host_ns = max(host_ns // 2, host)
        if host > slept and retries < 8:  # the GPU may have waited for the host: time this batch again
            retries += 1
            boost = min(boost * 2, 1024.0)
            continue
        uncovered += len(chunk) if host > slept else 0
        out += elapsed_ns(marks)
        i += batch
        retries = 0
    return out, uncovered


def measure(m, fn, args):
    """Per-call nanoseconds over input sets larger than rotation_bytes, and how
    many of them may include the host's dispatch."""
    set_bytes = sum(a.numel() * a.element_size() for a in args) or 1
    count = max(1, min(int(m["max_sets"]), math.ceil(m["rotation_bytes"] / set_bytes)))
    sets = [args] + [[a.clone() for a in args] for _ in range(count - 1)]
    times = gpu_times if m["device"] == "cuda" else cpu_times
    warm, _ = times([lambda s=s: fn(*s) for s in sets])
    est = max(sorted(warm)[len(warm) // 2] * 1e-9, 1e-7)
    reps = int(min(max(m["budget_seconds"] / est, m["min_runs"]), 100000))
    return times([lambda s=sets[i % count]: fn(*s) for i in range(reps)])


def no_tf32():
    """The operators' arithmetic: fp32 products not rounded to TF32, and
    fp16/bf16 matmuls accumulated in fp32 (no reduced-precision split-K)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for flag in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        if hasattr(torch.backends.cuda.matmul, flag):
            setattr(torch.backends.cuda.matmul, flag, False)


def reason(e):
    return traceback.format_exception_only(type(e), e)[-1].strip()[:2000]


def serve_one(d, req):
    """One request of MODE serve: the outputs at the inputs given."""
    device = req.get("device", "cpu")
    float_dtype = {"fp64": torch.float64, "fp32": torch.float32}.get(req.get("dtype", "fp64"))
    args = [load_input(d, t, device) for t in req["inputs"]]
    fn = torch_entry.make_callable(req["torch"], [t["name"] for t in req["inputs"]], req["params"], device, float_dtype)
    runs = []
    with torch.no_grad():
        for _ in range(max(1, int(req.get("repeat", 1)))):
            outs = as_outputs(fn(*args), req["outputs"], float_dtype)
            runs.append([o.detach().contiguous().cpu() for o in outs])
    same = all(len(r) == len(runs[0]) and all(torch.equal(a, b) or (a.is_floating_point() and torch.equal(a.isnan(), b.isnan()) and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))) for a, b in zip(r, runs[0])) for r in runs[1:])
    files = write_outputs(d, "out", runs[0], float_dtype)
    return {"ok": True, "outputs": files, "deterministic": same}


def time_one(d, req):
    """One request {"op": "time", ...}: eager, then compile, with the
    results in DIR/eager.json and DIR/compile.json."""
    for mode in ("eager", "compile"):
        path = os.path.join(d, mode + ".json")
        if os.path.exists(path):
            os.remove(path)
    for mode in ("eager", "compile"):
        if mode == "compile" and not req.get("compile", True):
            continue
        run_mode(d, req, mode)
    if req.get("device") == "cuda":
        torch.cuda.empty_cache()  # the GPU's memory is the candidates'
    return {"ok": True}


def serve(d):
    no_tf32()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            torch.set_num_threads(max(1, int(req.get("threads", 1))))
            answer = time_one(d, req) if req.get("op") == "time" else serve_one(d, req)
        except Exception as e:  # the evaluator reports it
            answer = {"ok": False, "reason": reason(e)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


def run_mode(d, m, mode):
    """One of eager, compile: DIR/<mode>.json."""
    result = {"ok": False}
    try:
        args = [load_input(d, t, m["device"]) for t in m["inputs"]]
        fn = torch_entry.make_callable(m["torch"], [t["name"] for t in m["inputs"]], m["params"], m["device"])
        if mode == "compile":
            if not hasattr(torch, "compile"):
                raise RuntimeError(f"PyTorch {torch.__version__} has no torch.compile")
            fn = torch.compile(fn, dynamic=False)
        with torch.no_grad():
            outs = as_outputs(fn(*args), m["outputs"])
            files = write_outputs(d, mode, outs)
            ns, uncovered = measure(m, fn, args)
        result = {"ok": True, "ns": ns, "outputs": files, "torch": torch.__version__, "dispatch_in_time": uncovered}
    except Exception as e:  # the evaluator reports it; it is not an evaluation error
        result = {"ok": False, "reason": reason(e)}
    with open(os.path.join(d, mode + ".json"), "w") as f:
        json.dump(result, f)


def main():
    d, mode = sys.argv[1], sys.argv[2]
    if mode == "probe":
        print("torch", torch.__version__, "cuda", int(torch.cuda.is_available()))
        return 0
    if mode == "serve":
        return serve(d)
    print(f"unknown mode '{mode}' (serve | probe)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
