#!/usr/bin/python3
"""Benchmark the CPU example kernels against the operators' baselines and PyTorch.

For every operator in config/operators/*.yaml that has an example kernel in
knowledge/examples/cpu/, this script

  1. runs `kevolve eval --op NAME --backend cpu --kernel EXAMPLE --json`
     (example vs. the operator's own baseline, verified and timed by kevolve);
  2. times the same operator in PyTorch (Debian's python3-torch 1.13, CPU) at the
     same timed shape points with the default (first) dtype variant, with inputs
     built from the YAML's shapes and generators, outputs preallocated and
     passed with out= where torch supports it, a warm-up pass, then the median
     of many calls that rotate over several input sets (>= 256 MiB in total,
     3..32 sets, like the evaluator);
  3. checks the PyTorch implementation against an independent numpy/python
     implementation of the YAML semantics on every holdout shape (both
     generator cycles) and on set 0 of every timed shape;
  4. prints a table and a summary and writes the results as JSON.

Run it with Debian's interpreter (the pyenv python3 first on PATH has no torch):

    /usr/bin/python3 bench/cpu_examples.py [--ops softmax,layernorm] [--threads 2]
                                           [--budget 0.4] [--json-out PATH]

See bench/README.md for what each PyTorch implementation is and why.
"""

import argparse
import ctypes
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS_DIR = os.path.join(ROOT, "config", "operators")
EXAMPLES_DIR = os.path.join(ROOT, "knowledge", "examples", "cpu")

ROTATION_BYTES = 256 * (1 << 20)  # same as the evaluator (src/eval/evaluator.h)
MIN_SETS, MAX_SETS = 3, 32         # the evaluator's clamp(trials=3, max_sets=32)
MIN_RUNS = 10


# --------------------------------------------------------------------------
# Options (parsed before torch is imported: some change the environment that
# OpenBLAS and ATen read when they load).
# --------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", default="", help="comma-separated subset of operators (default: all with an example)")
    p.add_argument("--threads", type=int, default=2,
                   help="threads for PyTorch (torch.set_num_threads) and for the kernels (kevolve --threads); default 2")
    p.add_argument("--budget", type=float, default=0.4,
                   help="timing seconds per shape and side (kevolve --budget; also PyTorch's per-shape budget); default 0.4")
    p.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "cpu_examples.json"),
                   help="where to write the JSON results (default bench/results/cpu_examples.json)")
    p.add_argument("--kernel-dir", default=EXAMPLES_DIR,
                   help="directory of <operator>.cpp kernels to compare (default: the shipped examples; "
                        "bench/search_sweep.sh passes the best kernels of a sweep)")
    p.add_argument("--kevolve", default=os.path.join(ROOT, "build", "kevolve"), help="kevolve binary (default build/kevolve)")
    p.add_argument("--seed", type=int, default=1, help="seed of the PyTorch inputs (kevolve uses its own --seed 1)")
    p.add_argument("--no-malloc-tune", action="store_true",
                   help="leave glibc malloc at its defaults (every large torch temporary is then a fresh mmap "
                        "whose first-touch page faults dominate on this VM)")
    p.add_argument("--unset-openblas-env", action="store_true",
                   help="unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for this process and kevolve (both torch.addmm "
                        "and the gemm baseline use OpenBLAS); default: leave them as the machine sets them")
    p.add_argument("--aten-cpu-capability", default="",
                   help="set ATEN_CPU_CAPABILITY (default, avx2, avx512) before importing torch; default: torch's choice")
    p.add_argument("--no-check-timed", action="store_true", help="skip the numpy check at the timed shapes")
    p.add_argument("--torch-only", action="store_true", help="skip kevolve eval (PyTorch timings and checks only)")
    return p.parse_args()


ARGS = parse_args()

OPENBLAS_ENV_BEFORE = {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS",
                                                      "OMP_NUM_THREADS")}
if ARGS.unset_openblas_env:
    os.environ.pop("OPENBLAS_CORETYPE", None)
    os.environ.pop("OPENBLAS_L2_SIZE", None)
if ARGS.aten_cpu_capability:
    os.environ["ATEN_CPU_CAPABILITY"] = ARGS.aten_cpu_capability

MALLOC_TUNED = False
if not ARGS.no_malloc_tune:
    # Keep freed memory in the process so that torch's per-call temporaries and
    # outputs (ops without out=) reuse already-touched pages, as jemalloc or any
    # caching allocator would in steady state. Without this, glibc mmaps and
    # munmaps every block >= 32 MiB and each call pays 7-13 us per 4 KiB page
    # (STACK.md section 12). M_MMAP_MAX = -4, M_TRIM_THRESHOLD = -1.
    _libc = ctypes.CDLL("libc.so.6")
    MALLOC_TUNED = bool(_libc.mallopt(-4, 0)) and bool(_libc.mallopt(-1, 2**31 - 1))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import yaml  # noqa: E402


# --------------------------------------------------------------------------
# YAML helpers: expressions, dtypes, shapes, generators
# --------------------------------------------------------------------------

DTYPES = {
    "fp32": (torch.float32, 4), "fp64": (torch.float64, 8), "fp16": (torch.float16, 2),
    "bf16": (torch.bfloat16, 2), "int32": (torch.int32, 4), "int64": (torch.int64, 8),
}


def is_float_dtype(name):
    return name in ("fp32", "fp64", "fp16", "bf16")


def evaluate(expr, syms, types=None):
    """Evaluates a YAML expression (+ - * / ^ ( ), min, max, ceil, floor, sizeof)."""
    if isinstance(expr, (int, float)):
        return expr
    s = str(expr).replace("^", "**")

    def sizeof(m):
        t = m.group(1)
        if types and t in types:
            t = types[t]
        return str(DTYPES[t][1])

    s = re.sub(r"sizeof\(\s*(\w+)\s*\)", sizeof, s)
    env = {"min": min, "max": max, "ceil": math.ceil, "floor": math.floor}
    env.update(syms)
    return eval(s, {"__builtins__": {}}, env)  # trusted input: the project's own YAML


def as_int(v):
    r = int(round(v))
    if abs(r - v) > 1e-9:
        raise ValueError("expression is not an integer: %r" % v)
    return r


class OpSpec:
    def __init__(self, path):
        with open(path) as f:
            self.y = yaml.safe_load(f)
        self.name = self.y["name"]
        self.variant_name, self.types = next(iter(self.y["variants"].items()))
        self.shapes = self.y.get("shapes", [])
        self.holdout_shapes = self.y.get("holdout_shapes", [])

    def dtype_of(self, t):
        d = t["dtype"]
        return self.types.get(d, d)

    def symbols(self, shape):
        syms = {k: v for k, v in shape.items() if k != "name"}
        for k, e in (self.y.get("derived") or {}).items():
            syms[k] = evaluate(e, syms, self.types)
        return syms

    def params(self, syms):
        out = {}
        for p in self.y.get("params") or []:
            v = evaluate(p["value"], syms, self.types)
            out[p["name"]] = as_int(v) if p["type"] == "int" else float(v)
        return out

    def dims(self, t, syms):
        return [as_int(evaluate(e, syms, self.types)) for e in t["shape"]]

    def tolerance(self, dtype):
        tol = (self.y.get("tolerance") or {}).get(dtype)
        if tol is None or not is_float_dtype(dtype):
            return 0.0, 0.0
        return float(tol["atol"]), float(tol["rtol"])

    def set_bytes(self, syms):
        n = 0
        for t in self.y["inputs"] + self.y["outputs"]:
            n += int(np.prod(self.dims(t, syms))) * DTYPES[self.dtype_of(t)][1]
        return n


def gen_offsets(rng, rows, total, max_len):
    """The evaluator's `offsets` distribution: start even, then move lengths between random rows."""
    if rows * max_len < total:
        raise ValueError("offsets: total %d cannot fit in %d rows of at most %d" % (total, rows, max_len))
    ln = [total // rows] * rows
    for i in range(total % rows):
        ln[i] += 1
    a_s = rng.integers(0, rows, 4 * rows).tolist()
    b_s = rng.integers(0, rows, 4 * rows).tolist()
    r_s = rng.random(4 * rows).tolist()
    for a, b, r in zip(a_s, b_s, r_s):
        room = min(ln[a], max_len - ln[b])
        if a == b or room <= 0:
            continue
        amount = min(int(r * (room + 1)), room)
        ln[a] -= amount
        ln[b] += amount
    off = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.asarray(ln, dtype=np.int64), out=off[1:])
    return off


def gen_zipf(rng, count, n, s):
    """The evaluator's `zipf`: continuous power law on [1, n+1), hot ids scattered over [0, n)."""
    u = rng.random(count)
    if abs(s - 1.0) < 1e-9:
        x = np.power(float(n) + 1.0, u)
    else:
        x = np.power((np.power(float(n) + 1.0, 1.0 - s) - 1.0) * u + 1.0, 1.0 / (1.0 - s))
    rank = np.minimum(x.astype(np.int64) - 1, n - 1)
    mul = 2654435761 % n or 1
    while math.gcd(mul, n) != 1:
        mul += 1
    return (rank * mul + 7919) % n


def make_inputs(spec, syms, set_index, seed):
    """One input set: generator k of each input's list is used for set k (cycling), like the trials."""
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    inputs = {}
    for t in spec.y["inputs"]:
        dt_name = spec.dtype_of(t)
        dt = DTYPES[dt_name][0]
        dims = spec.dims(t, syms)
        n = int(np.prod(dims))
        gens = spec.y["generators"][t["name"]]
        d = gens[set_index % len(gens)]
        kind = d["dist"]
        arg = lambda key: evaluate(d[key], syms, spec.types)  # noqa: E731
        if kind == "uniform":
            x = torch.empty(dims, dtype=torch.float64 if not is_float_dtype(dt_name) else dt)
            x.uniform_(arg("low"), arg("high"), generator=g)
            x = x.to(dt)
        elif kind == "normal":
            x = torch.empty(dims, dtype=dt if is_float_dtype(dt_name) else torch.float64)
            x.normal_(arg("mean"), arg("std"), generator=g)
            x = x.to(dt)
        elif kind == "sorted_uniform":
            x = torch.empty(n, dtype=torch.float64).uniform_(arg("low"), arg("high"), generator=g)
            x = torch.sort(x).values.to(dt)
            x = torch.cummax(x.to(torch.float64), 0).values.to(dt).reshape(dims)  # keep sorted after rounding
        elif kind == "randint":
            lo, hi = int(arg("low")), int(arg("high"))
            x = torch.randint(lo, hi, dims, generator=g, dtype=torch.int64).to(dt)
        elif kind == "zipf":
            x = torch.from_numpy(gen_zipf(rng, n, int(arg("n")), float(arg("s")))).to(dt).reshape(dims)
        elif kind == "offsets":
            rows = n - 1
            off = gen_offsets(rng, rows, as_int(arg("total")), as_int(arg("max_len")))
            x = torch.from_numpy(off).to(dt)
        else:
            raise ValueError("unknown distribution " + kind)
        inputs[t["name"]] = x.contiguous()
    return inputs


def make_outputs(spec, syms):
    outs = {}
    for t in spec.y["outputs"]:
        outs[t["name"]] = torch.zeros(spec.dims(t, syms), dtype=DTYPES[spec.dtype_of(t)][0])  # zeros: pages touched
    return outs


# --------------------------------------------------------------------------
# PyTorch implementations. Each takes (inputs, outputs, params, scratch) and
# returns the list of output tensors in YAML order. `scratch` holds per-shape
# preallocated temporaries (shared by all input sets, like a caching allocator
# or a module's registered buffers).
# --------------------------------------------------------------------------

def t_gemm_bias_relu(I, O, P, S):
    C = torch.addmm(I["bias"], I["A"], I["B"], out=O["C"])
    C.relu_()
    return [C]


def t_conv1d(I, O, P, S):
    return [F.conv1d(I["x"], I["w"], I["bias"], stride=1, padding=P["padding"])]


def t_softmax(I, O, P, S):
    return [torch.softmax(I["x"], -1, out=O["y"])]


def t_layernorm(I, O, P, S):
    x = I["x"]
    return [F.layer_norm(x, (x.shape[-1],), I["gamma"], I["beta"], P["eps"])]


def t_rmsnorm(I, O, P, S):
    x = I["x"]
    return [torch.mul(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + P["eps"]), I["gamma"], out=O["y"])]


def t_bias_gelu(I, O, P, S):
    y = torch.add(I["x"], I["bias"], out=O["y"])       # x + bias, into the preallocated y
    return [torch._C._nn.gelu(y, approximate="none", out=y)]  # = F.gelu(.) (erf), in place


def t_embedding_bag_sum(I, O, P, S):
    return [F.embedding_bag(I["indices"], I["table"], I["offsets"][:-1], mode="sum")]


def t_bucketize(I, O, P, S):
    return [torch.bucketize(I["x"], I["boundaries"], out_int32=True, right=False, out=O["out"])]


_U31 = (1 << 31) - 1
_I63 = (1 << 63) - 1


def _s64(u):
    return u - (1 << 64) if u >= (1 << 63) else u


_C1 = _s64(0xff51afd7ed558ccd)
_C2 = _s64(0xc4ceb9fe1a85ec53)


def t_feature_hash(I, O, P, S):
    # torch has no hash op and no uint64: fmix64 on int64 tensors, where >> is
    # arithmetic (so a logical >> 33 is (k >> 33) & (2^31-1)) and * wraps mod 2^64.
    # The unsigned modulo: u % T = (2 * ((u >>> 1) % T) + (u & 1)) % T.
    ids, out = I["ids"], O["out"]
    n = ids.numel()
    if "k" not in S or S["k"].numel() != n:
        S["k"], S["t"] = torch.empty_like(ids), torch.empty_like(ids)
    k, t = S["k"], S["t"]
    T, salt = P["table_size"], P["salt"]
    torch.bitwise_xor(ids, salt, out=k)
    for c in (_C1, _C2):
        torch.bitwise_right_shift(k, 33, out=t)
        t.bitwise_and_(_U31)
        k.bitwise_xor_(t)
        k.mul_(c)
    torch.bitwise_right_shift(k, 33, out=t)
    t.bitwise_and_(_U31)
    k.bitwise_xor_(t)
    torch.bitwise_right_shift(k, 1, out=t)
    t.bitwise_and_(_I63)
    torch.remainder(t, T, out=t)
    t.mul_(2)
    k.bitwise_and_(1)
    t.add_(k)
    return [torch.remainder(t, T, out=out)]


def _jagged_index(I, L, S):
    offs = I["offsets"]
    if "arL" not in S or S["arL"].numel() != L:
        S["arL"] = torch.arange(L, dtype=torch.int64)
    ar = S["arL"]
    starts = offs[:-1]
    lens = offs[1:] - starts
    mask = ar.unsqueeze(0) < lens.unsqueeze(1)               # [B, L]
    idx = torch.where(mask, starts.unsqueeze(1) + ar.unsqueeze(0), 0)
    return idx, mask


def t_jagged_gather_mask(I, O, P, S):
    """index_select every (b, l) row (invalid ones read row 0) into out, then masked_fill_ the padding."""
    out = O["out"]
    B, L, D = out.shape
    idx, mask = _jagged_index(I, L, S)
    torch.index_select(I["values"], 0, idx.view(-1), out=out.view(B * L, D))
    out.masked_fill_(~mask.unsqueeze(-1), 0.0)
    return [out]


def t_jagged_zero_index_copy(I, O, P, S):
    """zero_ the output, then index_copy_ only the valid rows (gathered into a temporary)."""
    out = O["out"]
    B, L, D = out.shape
    idx, mask = _jagged_index(I, L, S)
    dst = mask.view(-1).nonzero().squeeze(1)
    src = idx.view(-1).index_select(0, dst)
    flat = out.view(B * L, D)
    flat.zero_()
    flat.index_copy_(0, dst, I["values"].index_select(0, src))
    return [out]


def t_jagged_row_loop(I, O, P, S):
    """A python loop over sequences: copy_ the first min(len, L) rows, zero_ the rest."""
    out, values = O["out"], I["values"]
    L = out.shape[1]
    offs = I["offsets"].tolist()
    for b in range(len(offs) - 1):
        o = offs[b]
        n = min(offs[b + 1] - o, L)
        if n:
            out[b, :n].copy_(values[o:o + n])
        if n < L:
            out[b, n:].zero_()
    return [out]


def t_seqtrunc_gather(I, O, P, S):
    """cumsum for out_offsets, repeat_interleave to build the source row of every kept row,
    index_select(out=) into the packed rows, zero_ the tail."""
    offs, values = I["offsets"], I["values"]
    oo, ov = O["out_offsets"], O["out_values"]
    K = P["keep_last"]
    n = (offs[1:] - offs[:-1]).clamp_(max=K)
    oo[0] = 0
    torch.cumsum(n, 0, out=oo[1:])
    total = int(oo[-1])
    delta = offs[1:] - n - oo[:-1]               # source row - destination row, per sequence
    if "ar" not in S or S["ar"].numel() < total:
        S["ar"] = torch.arange(ov.shape[0], dtype=torch.int64)
    src = torch.repeat_interleave(delta, n, output_size=total) + S["ar"][:total]
    torch.index_select(values, 0, src, out=ov[:total])
    ov[total:].zero_()
    return [oo, ov]


def t_seqtrunc_row_loop(I, O, P, S):
    """A python loop over sequences: copy_ the last min(len, K) rows; cumsum for out_offsets."""
    offs_t, values = I["offsets"], I["values"]
    oo, ov = O["out_offsets"], O["out_values"]
    K = P["keep_last"]
    n = (offs_t[1:] - offs_t[:-1]).clamp_(max=K)
    oo[0] = 0
    torch.cumsum(n, 0, out=oo[1:])
    offs = offs_t.tolist()
    row = 0
    for b in range(len(offs) - 1):
        end = offs[b + 1]
        m = min(end - offs[b], K)
        if m:
            ov[row:row + m].copy_(values[end - m:end])
            row += m
    ov[row:].zero_()
    return [oo, ov]


def t_dot_interaction(I, O, P, S):
    x = I["x"]
    B, Fn, _ = x.shape
    if "Z" not in S or S["Z"].shape != (B, Fn, Fn):
        S["Z"] = torch.empty(B, Fn, Fn, dtype=x.dtype)
        li, lj = torch.tril_indices(Fn, Fn, offset=-1)
        S["idx"] = (li * Fn + lj).contiguous()
    Z = torch.bmm(x, x.transpose(1, 2), out=S["Z"])
    return [torch.index_select(Z.view(B, Fn * Fn), 1, S["idx"], out=O["out"])]


# name -> list of (implementation name, function, description). Where there are
# several, each is pre-timed and the fastest correct one is timed for the table.
TORCH_IMPLS = {
    "gemm_bias_relu": [("addmm+relu_", t_gemm_bias_relu,
                        "torch.addmm(bias, A, B, out=C); C.relu_() (OpenBLAS sgemm through libblas.so.3)")],
    "conv1d": [("F.conv1d", t_conv1d, "F.conv1d(x, w, bias, padding=P) (no out=: output allocated per call)")],
    "softmax": [("softmax(out=)", t_softmax, "torch.softmax(x, -1, out=y)")],
    "layernorm": [("F.layer_norm", t_layernorm, "F.layer_norm(x, (N,), gamma, beta, eps) (no out=)")],
    "rmsnorm": [("rsqrt-mean", t_rmsnorm,
                 "torch.mul(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps), gamma, out=y) (temporaries allocated)")],
    "bias_gelu": [("add+gelu(out=)", t_bias_gelu,
                   "torch.add(x, bias, out=y); torch._C._nn.gelu(y, approximate='none', out=y) (= F.gelu(x + bias), exact erf)")],
    "embedding_bag_sum": [("F.embedding_bag", t_embedding_bag_sum,
                           "F.embedding_bag(indices, table, offsets[:-1], mode='sum') (no out=)")],
    "bucketize": [("bucketize(out=)", t_bucketize,
                   "torch.bucketize(x, boundaries, right=False, out_int32=True, out=out)")],
    "feature_hash": [("int64-fmix64", t_feature_hash,
                      "fmix64 as 17 in-place int64 tensor ops into preallocated buffers (torch has no hash op, no uint64)")],
    "jagged_to_padded_dense": [
        ("gather+masked_fill", t_jagged_gather_mask,
         "idx = where(l < len_b, offsets[b] + l, 0); index_select(values, 0, idx, out=out); out.masked_fill_(pad, 0)"),
        ("zero+index_copy", t_jagged_zero_index_copy,
         "out.zero_(); out.index_copy_(0, valid_dst, values.index_select(0, valid_src))"),
        ("row_copy_loop", t_jagged_row_loop, "python loop over b: out[b,:n].copy_(values[o:o+n]); out[b,n:].zero_()"),
    ],
    "sequence_truncate": [
        ("cumsum+repeat_interleave+index_select", t_seqtrunc_gather,
         "out_offsets = cumsum(min(len, K)); src = repeat_interleave(end-n-out_start, n) + arange; "
         "index_select(values, 0, src, out=out_values[:total]); tail zero_()"),
        ("row_copy_loop", t_seqtrunc_row_loop,
         "cumsum for out_offsets; python loop over b: out_values[r:r+n].copy_(values[end-n:end]); tail zero_()"),
    ],
    "dot_interaction": [("bmm+tril_gather", t_dot_interaction,
                         "torch.bmm(x, x.transpose(1, 2), out=Z); index_select(Z.view(B, F*F), 1, tril_indices(F, F, -1) "
                         "flattened, out=out) (bmm computes all F*F products)")],
}


# --------------------------------------------------------------------------
# Independent numpy/python implementations of the YAML semantics (fp64 math on
# the exact input values), used to check the PyTorch implementations.
# --------------------------------------------------------------------------

_erf = np.frompyfunc(math.erf, 1, 1)


def n_gemm_bias_relu(I, P):
    return [np.maximum(I["A"] @ I["B"] + I["bias"][None, :], 0.0)]


def n_conv1d(I, P):
    x, w, bias, Pd = I["x"], I["w"], I["bias"], P["padding"]
    Bn, Cin, L = x.shape
    Cout, _, Kw = w.shape
    Lout = L + 2 * Pd - Kw + 1
    xp = np.pad(x, ((0, 0), (0, 0), (Pd, Pd)))
    y = np.broadcast_to(bias[None, :, None], (Bn, Cout, Lout)).copy()
    for k in range(Kw):
        y += np.tensordot(w[:, :, k], xp[:, :, k:k + Lout], axes=([1], [1])).transpose(1, 0, 2)
    return [y]


def n_softmax(I, P):
    x = I["x"]
    e = np.exp(x - x.max(-1, keepdims=True))
    return [e / e.sum(-1, keepdims=True)]


def n_layernorm(I, P):
    x = I["x"]
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return [(x - m) / np.sqrt(v + P["eps"]) * I["gamma"] + I["beta"]]


def n_rmsnorm(I, P):
    x = I["x"]
    return [x / np.sqrt((x * x).sum(-1, keepdims=True) / x.shape[-1] + P["eps"]) * I["gamma"]]


def n_bias_gelu(I, P):
    v = I["x"] + I["bias"][None, :]
    return [0.5 * v * (1.0 + _erf(v / math.sqrt(2.0)).astype(np.float64))]


def n_embedding_bag_sum(I, P):
    table, idx, off = I["table"], I["indices"], I["offsets"]
    out = np.zeros((len(off) - 1, table.shape[1]))
    for b in range(len(off) - 1):
        if off[b + 1] > off[b]:
            out[b] = table[idx[off[b]:off[b + 1]]].sum(0)
    return [out]


def n_bucketize(I, P):
    x, bnd = I["x"], I["boundaries"]
    if x.size * bnd.size <= 5e6:  # the normative count, literally
        return [(bnd[None, :] < x[:, None]).sum(1)]
    return [np.searchsorted(bnd, x, side="left")]  # lower_bound == that count for sorted boundaries


def n_feature_hash(I, P):
    k = I["ids"].astype(np.int64).view(np.uint64) ^ np.uint64(P["salt"])
    with np.errstate(over="ignore"):
        k ^= k >> np.uint64(33)
        k *= np.uint64(0xff51afd7ed558ccd)
        k ^= k >> np.uint64(33)
        k *= np.uint64(0xc4ceb9fe1a85ec53)
        k ^= k >> np.uint64(33)
    return [(k % np.uint64(P["table_size"])).astype(np.int64)]


def n_jagged_to_padded_dense(I, P):
    values, off, L = I["values"], I["offsets"], P["max_len"]
    B = len(off) - 1
    out = np.zeros((B, L, values.shape[1]))
    for b in range(B):
        n = min(off[b + 1] - off[b], L)
        out[b, :n] = values[off[b]:off[b] + n]
    return [out]


def n_sequence_truncate(I, P):
    values, off, K = I["values"], I["offsets"], P["keep_last"]
    B = len(off) - 1
    oo = np.zeros(B + 1, dtype=np.int64)
    ov = np.zeros((B * K, values.shape[1]))
    row = 0
    for b in range(B):
        n = min(off[b + 1] - off[b], K)
        ov[row:row + n] = values[off[b + 1] - n:off[b + 1]]
        row += n
        oo[b + 1] = row
    return [oo, ov]


def n_dot_interaction(I, P):
    x = I["x"]
    B, Fn, _ = x.shape
    out = np.zeros((B, Fn * (Fn - 1) // 2))
    for i in range(1, Fn):
        for j in range(i):
            out[:, i * (i - 1) // 2 + j] = (x[:, i, :] * x[:, j, :]).sum(-1)
    return [out]


NUMPY_REFS = {
    "gemm_bias_relu": n_gemm_bias_relu, "conv1d": n_conv1d, "softmax": n_softmax, "layernorm": n_layernorm,
    "rmsnorm": n_rmsnorm, "bias_gelu": n_bias_gelu, "embedding_bag_sum": n_embedding_bag_sum,
    "bucketize": n_bucketize, "feature_hash": n_feature_hash, "jagged_to_padded_dense": n_jagged_to_padded_dense,
    "sequence_truncate": n_sequence_truncate, "dot_interaction": n_dot_interaction,
}

# At timed shapes the python-erf reference would take minutes: check these
# row-wise ops on their first rows only (input name -> rows, output name -> rows).
TIMED_CHECK_ROWS = {"bias_gelu": ({"x": 256}, {"y": 256})}


def to_np(t):
    if t.is_floating_point():
        return t.detach().to(torch.float64).numpy()
    return t.detach().numpy()


def compare(spec, got, ref):
    """Per output: (ok, text) with the YAML's tolerance (integers exact)."""
    problems = []
    for t, g, r in zip(spec.y["outputs"], got, ref):
        dt = spec.dtype_of(t)
        g = to_np(g)
        r = np.asarray(r)
        if tuple(g.shape) != tuple(r.shape):
            problems.append("%s: shape %s, expected %s" % (t["name"], tuple(g.shape), tuple(r.shape)))
            continue
        if is_float_dtype(dt):
            atol, rtol = spec.tolerance(dt)
            r = r.astype(np.float64)
            err = np.abs(g - r)
            bad = ~(err <= atol + rtol * np.abs(r))
            if bad.any():
                i = np.unravel_index(int(np.argmax(bad)), bad.shape)
                problems.append("%s: %d of %d elements off (first at %s: %r vs %r; max abs err %.3g)" % (
                    t["name"], int(bad.sum()), bad.size, tuple(int(v) for v in i), float(g[i]), float(r[i]),
                    float(np.nanmax(err))))
        else:
            bad = g.astype(np.int64) != r.astype(np.int64)
            if bad.any():
                i = np.unravel_index(int(np.argmax(bad)), bad.shape)
                problems.append("%s: %d of %d elements differ (first at %s: %d vs %d)" % (
                    t["name"], int(bad.sum()), bad.size, tuple(int(v) for v in i), int(g[i]), int(r[i])))
    return (not problems), "; ".join(problems)


def check_impl(spec, fn, shape, set_index, seed, rows=None):
    syms = spec.symbols(shape)
    P = spec.params(syms)
    I = make_inputs(spec, syms, set_index, seed)
    O = make_outputs(spec, syms)
    got = [g.clone() for g in fn(I, O, P, {})]
    Inp = {k: to_np(v) for k, v in I.items()}
    if rows:
        in_rows, out_rows = rows
        Inp = {k: (v[:in_rows[k]] if k in in_rows else v) for k, v in Inp.items()}
        got = [g[:out_rows[t["name"]]] if t["name"] in out_rows else g for t, g in zip(spec.y["outputs"], got)]
    ref = NUMPY_REFS[spec.name](Inp, P)
    return compare(spec, got, ref)


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------

def summarize(ns):
    s = sorted(ns)
    q = lambda f: s[min(len(s) - 1, int(f * (len(s) - 1) + 0.5))] * 1e-9  # noqa: E731
    return {"median_s": statistics.median(s) * 1e-9, "p10_s": q(0.1), "p90_s": q(0.9), "runs": len(s)}


def time_calls(call, nsets, budget, min_runs=MIN_RUNS, warm=True):
    if warm:
        for s in range(nsets):  # warm-up: one pass over every set
            call(s)
    ns = []
    start = time.perf_counter()
    i = 0
    while (time.perf_counter() - start < budget or len(ns) < min_runs) and len(ns) < 100000:
        s = i % nsets
        t0 = time.perf_counter_ns()
        call(s)
        ns.append(time.perf_counter_ns() - t0)
        i += 1
    return summarize(ns)


def time_torch_shape(spec, shape, budget, seed, impls, log):
    syms = spec.symbols(shape)
    P = spec.params(syms)
    set_bytes = spec.set_bytes(syms)
    nsets = min(max(MIN_SETS, math.ceil(ROTATION_BYTES / max(set_bytes, 1))), MAX_SETS)
    t0 = time.perf_counter()
    sets = []
    for s in range(nsets):
        sets.append((make_inputs(spec, syms, s, seed + 1000 * s), make_outputs(spec, syms)))
    gen_s = time.perf_counter() - t0
    S = {}
    chosen = impls[0]
    pre = {}
    if len(impls) > 1:  # pre-time every candidate implementation, keep the fastest
        for name, fn, _ in impls:
            st = time_calls(lambda s: fn(sets[s][0], sets[s][1], P, S), nsets, min(budget, 0.3), min_runs=5)
            pre[name] = st["median_s"]
        chosen = min(impls, key=lambda im: pre[im[0]])
    name, fn, _ = chosen
    st = time_calls(lambda s: fn(sets[s][0], sets[s][1], P, S), nsets, budget)
    st.update({"impl": name, "sets": nsets, "set_bytes": set_bytes, "pretimed": pre, "input_gen_s": gen_s})
    return st


# --------------------------------------------------------------------------
# kevolve
# --------------------------------------------------------------------------

def run_kevolve(op, kernel, budget, threads):
    cmd = [ARGS.kevolve, "eval", "--op", op, "--backend", "cpu", "--kernel", kernel, "--json", "--budget", str(budget)]
    if threads:
        cmd += ["--threads", str(threads)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"rc": None, "error": "kevolve eval timed out after 1800 s", "cmd": " ".join(cmd)}, None
    res = {"rc": p.returncode, "cmd": " ".join(cmd), "wall_s": time.perf_counter() - t0}
    data = None
    try:
        data = json.loads(p.stdout)
    except ValueError:
        res["error"] = ("no JSON on stdout (rc %d): " % p.returncode) + (p.stderr.strip() or p.stdout.strip())[-2000:]
    if data is not None and data.get("status") != "ok":
        res["error"] = "status %s: %s" % (data.get("status"), data.get("reason", ""))
    if p.stderr.strip():
        res["stderr_tail"] = p.stderr.strip()[-2000:]
    return res, data


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def fmt_t(s):
    if s is None:
        return "-"
    if s >= 1:
        return "%.3f s" % s
    if s >= 1e-3:
        return "%.3f ms" % (s * 1e3)
    return "%.1f us" % (s * 1e6)


def fmt_x(v):
    return "-" if v is None else "%.2fx" % v


def fmt_pct(v):
    return "-" if v is None else "%.1f%%" % (v * 100)


def geomean(vals):
    vals = [v for v in vals if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def torch_threads_from_parallel_info():
    m = re.search(r"at::get_num_threads\(\)\s*:\s*(\d+)", torch.__config__.parallel_info())
    return int(m.group(1)) if m else None


def openblas_threads():
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        return int(lib.openblas_get_num_threads()), lib
    except (OSError, AttributeError):
        return None, None


def main():
    if not ARGS.torch_only and not os.access(ARGS.kevolve, os.X_OK):
        sys.exit("no kevolve binary at %s: build it first (cd %s && ./scripts/build.sh)" % (ARGS.kevolve, ROOT))
    threads = ARGS.threads
    torch.set_num_threads(threads)
    ob_threads, oblib = openblas_threads()
    if oblib is not None and ob_threads != threads:
        oblib.openblas_set_num_threads(threads)  # torch.set_num_threads does not reach Debian's OpenBLAS
        ob_threads, _ = openblas_threads()

    names = sorted(f[:-5] for f in os.listdir(OPS_DIR) if f.endswith(".yaml"))
    names = [n for n in names if os.path.exists(os.path.join(ARGS.kernel_dir, n + ".cpp"))]
    if ARGS.ops:
        want = [s.strip() for s in ARGS.ops.split(",") if s.strip()]
        unknown = [w for w in want if w not in names]
        if unknown:
            sys.exit("no operator with an example kernel: %s (have: %s)" % (", ".join(unknown), ", ".join(names)))
        names = [n for n in names if n in want]

    cap = re.search(r"CPU capability usage:\s*(\S+)", torch.__config__.show())
    env = {
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE"),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "openblas_env_unset_by_benchmark": ARGS.unset_openblas_env,
        "openblas_env_before": OPENBLAS_ENV_BEFORE,
        "torch_version": torch.__version__,
        "torch_threads": torch_threads_from_parallel_info(),
        "torch_cpu_capability": cap.group(1) if cap else None,
        "ATEN_CPU_CAPABILITY": os.environ.get("ATEN_CPU_CAPABILITY"),
        "openblas_threads_in_torch_process": ob_threads,
        "malloc_tuned": MALLOC_TUNED,
        "kevolve_threads": threads,
        "budget_s": ARGS.budget,
        "kevolve_binary_mtime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(ARGS.kevolve)))
        if os.path.exists(ARGS.kevolve) else None,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print("kevolve CPU examples vs baseline vs PyTorch")
    print("  OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s%s (used by the OpenBLAS baseline of gemm_bias_relu and by "
          "torch.addmm)" % (env["OPENBLAS_CORETYPE"], env["OPENBLAS_L2_SIZE"],
                            " (unset by --unset-openblas-env; were %s/%s)" % (
                                OPENBLAS_ENV_BEFORE["OPENBLAS_CORETYPE"], OPENBLAS_ENV_BEFORE["OPENBLAS_L2_SIZE"])
                            if ARGS.unset_openblas_env else ""))
    print("  torch %s: at::get_num_threads() = %s (parallel_info), CPU capability %s, OpenBLAS threads %s, "
          "malloc tuned (no mmap/trim) = %s" % (torch.__version__, env["torch_threads"], env["torch_cpu_capability"],
                                                ob_threads, MALLOC_TUNED))
    print("  kevolve --threads %d --budget %g; operators: %s" % (threads, ARGS.budget, ", ".join(names)))
    sys.stdout.flush()

    results = []
    for name in names:
        spec = OpSpec(os.path.join(OPS_DIR, name + ".yaml"))
        kernel = os.path.join(ARGS.kernel_dir, name + ".cpp")
        impls = TORCH_IMPLS.get(name)
        print("\n== %s (variant %s) ==" % (name, spec.variant_name))
        sys.stdout.flush()
        load = {"before_kevolve": os.getloadavg()[0]}
        if ARGS.torch_only:
            ke, data = {"rc": None, "error": "skipped (--torch-only)"}, None
        else:
            ke, data = run_kevolve(name, os.path.relpath(kernel, ROOT), ARGS.budget, threads)
        if ke.get("error"):
            print("  kevolve eval: %s" % ke["error"])
        elif ke.get("wall_s"):
            print("  kevolve eval: status %s, fitness %.3g (%.1f s)" % (data.get("status"), data.get("fitness") or 0,
                                                                    ke["wall_s"]))
        opres = {"operator": name, "variant": spec.variant_name,
                 "baseline_name": spec.y.get("baseline", {}).get("name"),
                 "baseline_libraries": spec.y.get("baseline", {}).get("libraries", []),
                 "kevolve": dict(ke, status=data.get("status") if data else None,
                                 fitness=data.get("fitness") if data else None,
                                 hardware=data.get("hardware") if data else None),
                 "torch_impls": [{"name": n, "description": d} for n, _, d in (impls or [])],
                 "checks": [], "shapes": [], "loadavg_1min": load}
        if data:
            opres["kevolve"]["holdout"] = [{"shape": s["shape"], "status": s["status"], "reason": s.get("reason", "")}
                                           for s in data.get("shapes", []) if s.get("holdout")]
            for h in opres["kevolve"]["holdout"]:
                if h["status"] != "ok":
                    print("  kevolve holdout %s: %s %s" % (h["shape"], h["status"], h["reason"]))
        if not impls:
            print("  no PyTorch implementation for %s" % name)
            results.append(opres)
            continue

        # correctness of the PyTorch implementation(s) vs numpy, at every holdout shape
        ok_impls = []
        for iname, fn, _ in impls:
            all_ok = True
            for shape in spec.holdout_shapes:
                for s in (0, 1):
                    try:
                        ok, why = check_impl(spec, fn, shape, s, ARGS.seed + 7 + s)
                    except Exception as e:  # noqa: BLE001
                        ok, why = False, "%s: %s" % (type(e).__name__, e)
                    opres["checks"].append({"impl": iname, "shape": shape["name"], "holdout": True, "set": s,
                                            "ok": ok, "detail": why})
                    if not ok:
                        all_ok = False
                        print("  WARNING: torch %s wrong at holdout %s (set %d): %s" % (iname, shape["name"], s, why))
            if all_ok:
                ok_impls.append((iname, fn, _))
        if not ok_impls:
            print("  WARNING: every PyTorch implementation failed a check; timing the first anyway")
            ok_impls = impls[:1]

        load["before_torch"] = os.getloadavg()[0]
        kshapes = {s["shape"]: s for s in (data or {}).get("shapes", []) if not s.get("holdout")}
        hw = (data or {}).get("hardware") or {}
        for shape in spec.shapes:
            sname = shape["name"]
            row = {"shape": sname}
            ks = kshapes.get(sname)
            # check at the timed shape (set 0) for the implementation(s) about to be timed
            if not ARGS.no_check_timed:
                for iname, fn, _ in ok_impls:
                    try:
                        ok, why = check_impl(spec, fn, shape, 0, ARGS.seed, rows=TIMED_CHECK_ROWS.get(name))
                    except Exception as e:  # noqa: BLE001
                        ok, why = False, "%s: %s" % (type(e).__name__, e)
                    opres["checks"].append({"impl": iname, "shape": sname, "holdout": False, "set": 0,
                                            "ok": ok, "detail": why})
                    if not ok:
                        print("  WARNING: torch %s wrong at timed shape %s: %s" % (iname, sname, why))
            tt = time_torch_shape(spec, shape, ARGS.budget, ARGS.seed, ok_impls, print)
            row["torch"] = tt
            check_ok = all(c["ok"] for c in opres["checks"]
                           if c["impl"] == tt["impl"] and (c["holdout"] or c["shape"] == sname))
            row["torch_check_ok"] = check_ok
            if ks:
                row["kevolve_status"] = ks.get("status")
                row["kevolve_reason"] = ks.get("reason", "")
                row["bytes"], row["flops"] = ks.get("bytes"), ks.get("flops")
            if (ks and ks.get("status") == "ok" and (ks.get("candidate") or {}).get("median_s", 0) > 0
                    and (ks.get("baseline") or {}).get("median_s", 0) > 0):
                ex, base = ks["candidate"]["median_s"], ks["baseline"]["median_s"]
                row.update({"example": ks["candidate"], "baseline": ks["baseline"],
                            "speedup_vs_baseline": base / ex, "speedup_vs_torch": tt["median_s"] / ex,
                            "example_roofline_fraction": ks.get("roofline_fraction")})
                if hw.get("peak_bandwidth_gbs") and hw.get("peak_gflops"):
                    floor = max(ks["bytes"] / (hw["peak_bandwidth_gbs"] * 1e9), ks["flops"] / (hw["peak_gflops"] * 1e9))
                    row["torch_roofline_fraction"] = floor / tt["median_s"]
            elif ks:
                print("  kevolve shape %s: %s %s" % (sname, ks.get("status"), ks.get("reason", "")))
            opres["shapes"].append(row)
            print("  %-28s example %-10s baseline %-10s torch %-10s (%s)%s" % (
                sname, fmt_t(row.get("example", {}).get("median_s")), fmt_t(row.get("baseline", {}).get("median_s")),
                fmt_t(tt["median_s"]), tt["impl"], "" if check_ok else "  CHECK FAILED"))
            sys.stdout.flush()
        load["after_torch"] = os.getloadavg()[0]
        print("  (1-min load average: %.2f before kevolve, %.2f before torch, %.2f after; 2 cores)" % (
            load["before_kevolve"], load["before_torch"], load["after_torch"]))
        results.append(opres)

    # ---------------- table and summary ----------------
    hdr = ("operator", "shape", "example", "baseline", "pytorch", "ex/base", "ex/torch", "ex %roof", "torch %roof",
           "torch impl", "check")
    rows = []
    for op in results:
        for r in op["shapes"]:
            rows.append((op["operator"], r["shape"], fmt_t(r.get("example", {}).get("median_s")),
                         fmt_t(r.get("baseline", {}).get("median_s")), fmt_t(r["torch"]["median_s"]),
                         fmt_x(r.get("speedup_vs_baseline")), fmt_x(r.get("speedup_vs_torch")),
                         fmt_pct(r.get("example_roofline_fraction")), fmt_pct(r.get("torch_roofline_fraction")),
                         r["torch"]["impl"], ("ok" if r["torch_check_ok"] else "WARN: FAILED") + (
                             "" if r.get("kevolve_status") in (None, "ok") else "; kevolve %s" % r["kevolve_status"])))
        if not op["shapes"]:
            rows.append((op["operator"], "-", "-", "-", "-", "-", "-", "-", "-", "-",
                         "kevolve: " + (op["kevolve"].get("error") or "")))
    w = [max(len(str(x[i])) for x in rows + [hdr]) for i in range(len(hdr))]
    line = lambda r: "  ".join(str(v).ljust(w[i]) if i < 2 or i >= 9 else str(v).rjust(w[i])  # noqa: E731
                               for i, v in enumerate(r))
    print("\n" + line(hdr))
    print("  ".join("-" * x for x in w))
    for r in rows:
        print(line(r))
    print("(medians; ex/torch = pytorch_time / example_time; %roof = compulsory bytes/flops floor on kevolve's "
          "hardware profile / median)")

    all_base = [r.get("speedup_vs_baseline") for op in results for r in op["shapes"]]
    all_torch = [r.get("speedup_vs_torch") for op in results for r in op["shapes"]]
    per_op = []
    for op in results:
        gb = geomean([r.get("speedup_vs_baseline") for r in op["shapes"]])
        gt = geomean([r.get("speedup_vs_torch") for r in op["shapes"]])
        per_op.append({"operator": op["operator"], "geomean_speedup_vs_baseline": gb, "geomean_speedup_vs_torch": gt,
                       "kevolve_status": op["kevolve"].get("status"), "kevolve_error": op["kevolve"].get("error"),
                       "torch_check_ok": all(c["ok"] for c in op["checks"]) if op["checks"] else None})
    beats = [p for p in per_op if p["geomean_speedup_vs_torch"] is not None and p["geomean_speedup_vs_torch"] > 1]
    compared = [p for p in per_op if p["geomean_speedup_vs_torch"] is not None]
    shapes_beat = sum(1 for v in all_torch if v is not None and v > 1)
    shapes_cmp = sum(1 for v in all_torch if v is not None)
    summary = {
        "geomean_speedup_vs_baseline": geomean(all_base),
        "geomean_speedup_vs_torch": geomean(all_torch),
        "operators_beating_torch": len(beats), "operators_compared": len(compared),
        "shapes_beating_torch": shapes_beat, "shapes_compared": shapes_cmp,
        "per_operator": per_op,
        "failed_kevolve": [p["operator"] for p in per_op if p["kevolve_error"]],
        "failed_torch_checks": [p["operator"] for p in per_op if p["torch_check_ok"] is False],
    }
    print("\nper operator (geomean over its timed shapes):")
    for p in per_op:
        print("  %-24s ex/base %-9s ex/torch %-9s%s%s" % (
            p["operator"], fmt_x(p["geomean_speedup_vs_baseline"]), fmt_x(p["geomean_speedup_vs_torch"]),
            "" if p["torch_check_ok"] is not False else "  torch check FAILED",
            ("  kevolve: " + p["kevolve_error"]) if p["kevolve_error"] else ""))
    print("\nsummary: geomean example/baseline %s, geomean example/PyTorch %s over %d shapes" % (
        fmt_x(summary["geomean_speedup_vs_baseline"]), fmt_x(summary["geomean_speedup_vs_torch"]), shapes_cmp))
    print("         the example beats PyTorch on %d of %d operators (geomean over shapes), on %d of %d shapes" % (
        len(beats), len(compared), shapes_beat, shapes_cmp))
    print("         OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s; torch threads %s (parallel_info); CPU capability %s; "
          "malloc tuned %s" % (env["OPENBLAS_CORETYPE"], env["OPENBLAS_L2_SIZE"], env["torch_threads"],
                               env["torch_cpu_capability"], MALLOC_TUNED))
    if summary["failed_kevolve"]:
        print("         kevolve eval not ok for: %s" % ", ".join(summary["failed_kevolve"]))
    if summary["failed_torch_checks"]:
        print("         WARNING: PyTorch check failed for: %s" % ", ".join(summary["failed_torch_checks"]))

    out_path = os.path.abspath(ARGS.json_out)
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump({"environment": env, "options": vars(ARGS), "operators": results, "summary": summary}, f, indent=1)
    print("\nJSON written to %s" % out_path)


if __name__ == "__main__":
    main()
