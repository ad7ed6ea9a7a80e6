#!/usr/bin/env python3
"""The CUDA templates' kernels next to PyTorch and the copy bandwidth, per
dtype variant, at the shapes of bench/cuda_shapes.yaml, in one process on one
GPU (bench/cuda_16bit.sh runs it).

Each kernel (a shared library from bench/cuda_16bit_render.py, called through
the kevolve ABI by ctypes on PyTorch's stream) is verified against the
operator's `torch` expression evaluated in float64 (fp32 casts widened to
fp64), at the timed shape and every held-out shape of the operator's YAML,
every element within the YAML's tolerance, outputs poisoned with NaN first.
Timing, the same for kernels, PyTorch eager and torch.compile: input sets
rotated over more than 4x the L2, a 2 ms sleep kernel queued first so the
host runs ahead, then 20 back-to-back calls between two CUDA events; the
median of 7 such rounds, per call. Copy bandwidth: torch copy_ of 1 GiB
(bytes read + written), timed the same way.

usage: cuda_16bit.py KERNEL_DIR OUT_JSON [--ops op,...] [--no-compile]
       cuda_16bit.py --table OUT_JSON      (the table of a finished run)
Kernels labelled 'before' (bench/cuda_16bit.sh renders an older checkout's
template defaults so) are the table's before column; the best is over the rest.
"""
import ctypes
import json
import math
import os
import re
import statistics
import sys
import time

import torch
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src", "eval"))
import torch_entry  # noqa: E402  the evaluator's: the YAML expression as a function

DT = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
KV = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.int32: 3, torch.int64: 4, torch.float64: 5}
L2_ROTATE = 300 << 20


class kv_tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.c_int64 * 8), ("strides", ctypes.c_int64 * 8)]


class kv_param(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("i", ctypes.c_int64), ("f", ctypes.c_double)]


class kv_args(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_int32), ("num_inputs", ctypes.c_int32), ("num_outputs", ctypes.c_int32),
                ("num_params", ctypes.c_int32), ("inputs", kv_tensor * 16), ("outputs", kv_tensor * 16),
                ("params", kv_param * 16), ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_int64),
                ("num_threads", ctypes.c_int32), ("reserved", ctypes.c_int32)]


def fill(t, x):
    t.data, t.dtype, t.rank = x.data_ptr(), KV[x.dtype], x.dim()
    for d in range(x.dim()):
        t.dims[d], t.strides[d] = x.shape[d], x.stride(d)


def shapes_yaml():
    """bench/cuda_shapes.yaml: one flow map per line."""
    out = {}
    op = None
    for line in open(os.path.join(ROOT, "bench", "cuda_shapes.yaml")):
        if re.match(r"^\w+:", line):
            op = line.split(":")[0]
        m = re.match(r"^\s+- \{(.*)\}", line)
        if m and op:
            d = dict(kv.split(": ") for kv in m.group(1).split(", "))
            out.setdefault(op, []).append({k: (v if k == "name" else int(v)) for k, v in d.items()})
    return out


def offsets(b, total):
    cuts = torch.sort(torch.randint(0, total + 1, (b - 1,), device="cuda")).values
    return torch.cat([torch.zeros(1, dtype=torch.int64, device="cuda"), cuts, torch.full((1,), total, device="cuda")])


def make_args(op, s, dt):
    """Inputs like the YAML's first generators, in the YAML's input order."""
    r = lambda *shape: torch.randn(*shape, device="cuda")
    if op == "softmax":
        a = [r(s["B"], s["N"]) * 2]
    elif op == "layernorm":
        a = [r(s["B"], s["N"]), 1 + 0.2 * r(s["N"]), 0.2 * r(s["N"])]
    elif op == "rmsnorm":
        a = [r(s["B"], s["N"]), 1 + 0.2 * r(s["N"])]
    elif op == "bias_gelu":
        a = [r(s["B"], s["N"]), 0.5 * r(s["N"])]
    elif op == "swiglu":
        a = [r(s["B"], s["N"]) * 2, r(s["B"], s["N"])]
    elif op == "embedding_bag_sum":
        return [r(s["E"], s["D"]).to(dt), torch.randint(0, s["E"], (s["NNZ"],), device="cuda"), offsets(s["B"], s["NNZ"])]
    elif op == "dot_interaction":
        a = [r(s["B"], s["F"], s["D"])]
    else:
        raise SystemExit(f"cuda_16bit.py: no inputs for operator '{op}'")
    return [t.to(dt) for t in a]


def bench(call, nsets, reps=20, rounds=7):
    for k in range(3):
        call(k % nsets)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(rounds):
        torch.cuda._sleep(4_000_000)  # about 2 ms at 1.98 GHz: the host queues the calls ahead of the GPU
        a.record()
        for k in range(reps):
            call(k % nsets)
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e-3 / reps)
    return statistics.median(ts), min(ts), max(ts)


def close(out, ref, tol):
    o, r = out.double(), ref.double()
    bad = ~((o - r).abs() <= tol["atol"] + tol["rtol"] * r.abs()) | ~torch.isfinite(o)
    n = int(bad.sum())
    if n == 0:
        return ""
    i = int(bad.flatten().nonzero()[0])
    return f"{n} of {o.numel()} elements off (first at {i}: {o.flatten()[i].item():.6g} vs {r.flatten()[i].item():.6g})"


class kernel:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.fn = self.lib.kevolve_kernel
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.fn.restype = ctypes.c_int

    def args(self, inputs, outputs, params):
        a = kv_args()
        a.abi_version, a.num_inputs, a.num_outputs, a.num_params = 1, len(inputs), len(outputs), len(params)
        for i, x in enumerate(inputs):
            fill(a.inputs[i], x)
        for i, y in enumerate(outputs):
            fill(a.outputs[i], y)
        for i, (n, v) in enumerate(params):
            a.params[i].name, a.params[i].i, a.params[i].f = n.encode(), int(v), float(v)
        return a

    def __call__(self, a):
        return self.fn(ctypes.addressof(a), torch.cuda.current_stream().cuda_stream)


def table(res):
    copy = res["copy_gbs_1024mb"]
    print(f"{res['gpu']}, torch {res['torch']}; copy {copy:.1f} GB/s (1 GiB), {res['copy_gbs_100mb']:.1f} GB/s (100 MiB); "
          "floor = bytes / copy bandwidth; us = median per call")
    print(f"{'operator':18} {'variant':5} {'MB':>6} {'floor':>6} {'before':>7} {'best':>7} {'%floor':>6} {'eager':>7} "
          f"{'compile':>7} {'xeager':>6} {'xcomp':>6}  best point")
    for c in res["cases"]:
        ok = [r for r in c["kernels"] if "median_s" in r]
        before = [r for r in ok if r.get("label") == "before"]
        mine = [r for r in ok if r.get("label") != "before"]
        best = min(mine, key=lambda r: r["median_s"]) if mine else None
        bad = len([r for r in c["kernels"] if "error" in r])
        us = lambda t: f"{t*1e6:7.1f}" if t == t and t else "    nan"
        b = best["median_s"] if best else float("nan")
        cs = c.get("compile_s", float("nan"))
        print(f"{c['op']:18} {c['variant']:5} {c['bytes']/1e6:6.1f} {c['floor_s']*1e6:6.1f} "
              f"{us(before[0]['median_s']) if before else '      -'} {us(b)} {100*c['floor_s']/b:5.0f}% {us(c['eager_s'])} "
              f"{us(cs)} {c['eager_s']/b:6.2f} {cs/b:6.2f}  "
              + (f"{best['template']} {json.dumps(best['params'], separators=(',', ':'))}" if best else "none")
              + (f" ({bad} failed)" if bad else "")
              + (f"; byte floor {c['bytes_floor']/(copy*1e9)*1e6:.1f} us: {100*c['bytes_floor']/(copy*1e9)/b:.0f}%"
                 if "bytes_floor" in c else ""))


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--table"]:
        table(json.load(open(argv[1])))
        return
    kdir, out_json = argv[0], argv[1]
    only = argv[argv.index("--ops") + 1].split(",") if "--ops" in argv else None
    do_compile = "--no-compile" not in argv
    torch.backends.cuda.matmul.allow_tf32 = False
    manifest = json.load(open(os.path.join(kdir, "manifest.json")))
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": []}
    t0 = time.time()
    # Copy bandwidth: 1 GiB device-to-device, and one of 100 MB (the 16-bit tensors' size).
    for mb in (1024, 100):
        src = [torch.empty(mb << 20, dtype=torch.uint8, device="cuda").random_() for _ in range(max(1, 300 // mb))]
        dst = [torch.empty_like(s) for s in src]
        t, _, _ = bench(lambda k: dst[k].copy_(src[k]), len(src))
        res[f"copy_gbs_{mb}mb"] = 2 * (mb << 20) / t / 1e9
        del src, dst
    copy = res["copy_gbs_1024mb"]
    print(f"copy: {copy:.1f} GB/s (1 GiB), {res['copy_gbs_100mb']:.1f} GB/s (100 MiB)", flush=True)
    shapes = shapes_yaml()
    ops = sorted({m["op"] for m in manifest})
    for op in ops:
        if only and op not in only:
            continue
        spec = yaml.safe_load(open(os.path.join(ROOT, "config", "operators", op + ".yaml")))
        names = [t["name"] for t in spec["inputs"]] + [p["name"] for p in spec.get("params") or []]
        fn = torch_entry.expression_function(spec["torch"], names)
        fn64 = torch_entry.expression_function(spec["torch"].replace(".float()", ".double()"), names)
        for variant in spec["variants"]:
            ks = [m for m in manifest if m["op"] == op and m["variant"] == variant and "compile_error" not in m]
            if not ks:
                continue
            dt = DT[variant]
            tol = spec["tolerance"][variant]
            for s in shapes[op]:
                env = dict(s)
                pvals = [(p["name"], eval(str(p["value"]).replace("^", "**"), {}, env)) for p in spec.get("params") or []]
                torch.manual_seed(0)
                first = make_args(op, s, dt)
                in_bytes = sum(t.numel() * t.element_size() for t in first)
                nsets = max(2, min(8, math.ceil(L2_ROTATE / in_bytes)))
                sets = [first] + [make_args(op, s, dt) for _ in range(nsets - 1)]
                ref = fn64(*[t.double() if t.is_floating_point() else t for t in first], *[v for _, v in pvals])
                outs = [torch.empty(ref.shape, dtype=dt, device="cuda") for _ in range(nsets)]
                nbytes = eval(spec["bytes"].replace("sizeof(T)", str(outs[0].element_size())), {"ceil": math.ceil}, env)
                floor = nbytes / (copy * 1e9)
                case = {"op": op, "variant": variant, "shape": s["name"], "bytes": nbytes, "floor_s": floor,
                        "kernels": []}
                if "bytes_floor" in spec:
                    case["bytes_floor"] = eval(spec["bytes_floor"].replace("sizeof(T)", str(outs[0].element_size())),
                                               {"ceil": math.ceil}, env)
                pv = [v for _, v in pvals]
                case["eager_s"] = bench(lambda k: fn(*sets[k], *pv), nsets)[0]
                held = []  # held-out shapes: inputs, params, reference
                for h in spec.get("holdout_shapes") or []:
                    he = dict(h)
                    hp = [(p["name"], eval(str(p["value"]).replace("^", "**"), {}, he)) for p in spec.get("params") or []]
                    ha = make_args(op, h, dt)
                    hr = fn64(*[t.double() if t.is_floating_point() else t for t in ha], *[v for _, v in hp])
                    held.append((h["name"], ha, hp, hr))
                for m in ks:
                    k = kernel(os.path.join(kdir, m["file"]))
                    row = {"template": m["template"], "params": m["params"], "file": m["file"],
                           "label": m.get("label", "")}
                    err = ""
                    for hn, ha, hp, hr in held:
                        y = torch.full(hr.shape, float("nan"), dtype=dt, device="cuda")
                        a = k.args(ha, [y], hp)
                        rc = k(a)
                        torch.cuda.synchronize()
                        e = f"returned {rc}" if rc else close(y, hr, tol)
                        if e:
                            err = f"{hn}: {e}"
                            break
                    argsets = [k.args(sets[i], [outs[i]], pvals) for i in range(nsets)]
                    if not err:
                        for o in outs:
                            o.fill_(float("nan"))
                        rc = k(argsets[0])
                        torch.cuda.synchronize()
                        err = f"returned {rc}" if rc else close(outs[0], ref, tol)
                    if err:
                        row["error"] = err
                    else:
                        t, lo, hi = bench(lambda i: k(argsets[i]), nsets)
                        row.update(median_s=t, min_s=lo, max_s=hi)
                        # verified again after timing (the last set written holds its own inputs' result)
                        e = close(outs[0], ref, tol)
                        if e:
                            row["error"] = "after timing: " + e
                    case["kernels"].append(row)
                    print(f"  {op} {variant} {m['file']} {json.dumps(m['params'])}: "
                          + (row.get("error") or f"{row['median_s']*1e6:.1f} us"), flush=True)
                res["cases"].append(case)
                case["_redo"] = (op, variant, s["name"])
                ok = [r for r in case["kernels"] if "median_s" in r]
                best = min(ok, key=lambda r: r["median_s"]) if ok else None
                print(f"{op} {variant} {s['name']}: floor {floor*1e6:.1f} us, eager {case['eager_s']*1e6:.1f}, "
                      f"compile {case.get('compile_s', float('nan'))*1e6:.1f}, best "
                      + (f"{best['median_s']*1e6:.1f} us {best['file']} {json.dumps(best['params'])}" if best else "none")
                      + f" [{time.time()-t0:.0f} s]", flush=True)
                json.dump(res, open(out_json, "w"), default=str, indent=1)
                del sets, outs, held, first, ref
                torch.cuda.empty_cache()
    # torch.compile last (its compilations take most of a run): the same inputs, regenerated.
    for case in res["cases"] if do_compile else []:
        op, variant, name = case.pop("_redo")
        spec = yaml.safe_load(open(os.path.join(ROOT, "config", "operators", op + ".yaml")))
        names = [t["name"] for t in spec["inputs"]] + [p["name"] for p in spec.get("params") or []]
        fn = torch_entry.expression_function(spec["torch"], names)
        s = next(x for x in shapes[op] if x["name"] == name)
        pv = [eval(str(p["value"]).replace("^", "**"), {}, dict(s)) for p in spec.get("params") or []]
        torch.manual_seed(0)
        first = make_args(op, s, DT[variant])
        in_bytes = sum(t.numel() * t.element_size() for t in first)
        nsets = max(2, min(8, math.ceil(L2_ROTATE / in_bytes)))
        sets = [first] + [make_args(op, s, DT[variant]) for _ in range(nsets - 1)]
        try:
            torch._dynamo.reset()
            cfn = torch.compile(fn, dynamic=False)
            case["compile_s"] = bench(lambda k: cfn(*sets[k], *pv), nsets)[0]
        except Exception as e:  # noqa: BLE001 - reported
            case["compile_error"] = str(e)[:300]
        print(f"{op} {variant} {name}: compile {case.get('compile_s', float('nan'))*1e6:.1f} us [{time.time()-t0:.0f} s]",
              flush=True)
        json.dump(res, open(out_json, "w"), indent=1)
        del sets, first
        torch.cuda.empty_cache()
    for case in res["cases"]:
        case.pop("_redo", None)
    json.dump(res, open(out_json, "w"), indent=1)
    table(res)


if __name__ == "__main__":
    main()
