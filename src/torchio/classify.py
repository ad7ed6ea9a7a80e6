"""The operator class (and template keys) of a traced forward.

From the aten ops the forward ran on the meta device (probe.OpRecorder):
a convolution makes `conv` (with the keys of classify_conv.py where its
chain is one cpu/conv covers); one matmul `matmul` (with the keys of
classify_matmul.py where its chain is one cpu/matmul covers; several, as
attention, `custom`); a pooling op `pooling`; a cumulative op `scan` (with the keys of cpu/scan
where _scan recognises it); a segment_reduce by offsets `jagged`; pointwise ops
only `elementwise` (with `template.expr`, the chain as a scalar C
expression, where every op of it has a translation below); pointwise ops
and reductions/normalizations only `row_reduction` (`template.reduction:
softmax` when the whole forward is a softmax over the last axis of a 2-D
input; `reduction: group_norm` or `batch_norm` (batch statistics) for one
such norm; the keys of cpu/axis_normalize for a softmax along another axis or
an L1/L2 normalization); anything else `custom`.
"""
import torch

MATMUL = {"mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "linear", "addmv", "mv", "dot"}
CONV = {"convolution", "_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "mkldnn_convolution"}
POOL = {"avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
        "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
        "adaptive_avg_pool3d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "adaptive_max_pool2d",
        "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d"}
SCAN = {"cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"}
REDUCE = {"sum", "mean", "amax", "amin", "max", "min", "prod", "var", "std", "var_mean", "norm",
          "linalg_vector_norm", "_softmax", "_log_softmax", "_safe_softmax", "native_layer_norm",
          "native_group_norm", "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
          "smooth_l1_loss", "mse_loss", "l1_loss", "huber_loss", "nll_loss_forward", "logsumexp", "argmax", "argmin"}


# One-argument pointwise ops and the C functions they are (the cpu prelude
# knowledge/templates/cpu/_vec.inc has each for vectors; CUDA and HIP have
# them for floats).
UNARY = {"sigmoid": "sigmoidf", "tanh": "tanhf", "exp": "expf", "sqrt": "sqrtf", "abs": "fabsf",
         "log": "logf", "log1p": "log1pf", "expm1": "expm1f", "erf": "erff", "sin": "sinf", "cos": "cosf",
         "floor": "floorf", "ceil": "ceilf", "trunc": "truncf", "round": "rintf"}
# One-argument pointwise ops as C expressions of their argument {x}.
FORMS = {"relu": "fmaxf({x}, 0.0f)", "neg": "(-({x}))", "rsqrt": "(1.0f/sqrtf({x}))", "reciprocal": "(1.0f/({x}))",
         "exp2": "expf(({x})*0.6931471805599453f)", "erfc": "(1.0f-erff({x}))",
         "log2": "(logf({x})*1.4426950408889634f)", "log10": "(logf({x})*0.4342944819032518f)",
         "silu": "(({x})*sigmoidf({x}))", "hardswish": "(({x})*fminf(fmaxf(({x})+3.0f, 0.0f), 6.0f)/6.0f)",
         "hardsigmoid": "(fminf(fmaxf(({x})+3.0f, 0.0f), 6.0f)/6.0f)"}
# Pointwise ops PyTorch does not tag `pointwise`.
UNTAGGED_POINTWISE = {"hardswish", "rsub", "leaky_relu"}


def _f(x):
    return repr(float(x)) + "f"


def _kw(args, kwargs, i, name, default):
    if name in kwargs:
        return kwargs[name]
    return args[i] if len(args) > i else default


def _translate(name, a, args, kwargs):
    """C expression of one pointwise op; a: the C texts of its args (None
    for a non-tensor arg, which is read from args)."""
    x = a[0]
    if x is None and name not in ("pow",):
        return None
    if name == "round" and (len(args) > 1 or "decimals" in kwargs):
        return None
    if name in UNARY:
        return f"{UNARY[name]}({x})"
    if name in FORMS:
        return FORMS[name].format(x=x)
    if name == "gelu":
        if _kw(args, kwargs, 1, "approximate", "none") == "tanh":
            return f"(0.5f*({x})*(1.0f+tanhf(0.7978845608028654f*(({x})+0.044715f*({x})*({x})*({x})))))"
        return f"(0.5f*({x})*(1.0f+erff(({x})*0.70710678118654752f)))"
    if name in ("elu", "selu", "celu"):
        if name == "selu":
            alpha, scale, iscale = 1.6732632423543772, 1.0507009873554805, 1.0
        elif name == "celu":
            alpha = _kw(args, kwargs, 1, "alpha", 1.0)
            scale, iscale = 1.0, 1.0 / alpha
        else:
            alpha, scale, iscale = (_kw(args, kwargs, i, n, 1.0) for i, n in ((1, "alpha"), (2, "scale"), (3, "input_scale")))
        return f"({_f(scale)}*(fmaxf({x}, 0.0f)+fminf({_f(alpha)}*(expf({_f(iscale)}*({x}))-1.0f), 0.0f)))"
    if name == "leaky_relu":
        slope = _kw(args, kwargs, 1, "negative_slope", 0.01)
        return f"(fmaxf({x}, 0.0f)+{_f(slope)}*fminf({x}, 0.0f))"
    if name in ("softplus", "mish"):
        beta = _kw(args, kwargs, 1, "beta", 1.0) if name == "softplus" else 1.0
        bx = f"({_f(beta)}*({x}))"
        # max(bx, 0) + log1p(exp(-|bx|)): no overflow at any x; above the
        # threshold (20) it differs from x by less than 2e-9.
        sp = f"((fmaxf({bx}, 0.0f)+log1pf(expf(-fabsf({bx}))))/{_f(beta)})"
        return sp if name == "softplus" else f"(({x})*tanhf({sp}))"
    if name in ("clamp", "hardtanh", "clamp_min", "clamp_max"):
        if name == "hardtanh":
            lo, hi = _kw(args, kwargs, 1, "min_val", -1.0), _kw(args, kwargs, 2, "max_val", 1.0)
        elif name == "clamp_min":
            lo, hi = _kw(args, kwargs, 1, "min", None), None
        elif name == "clamp_max":
            lo, hi = None, _kw(args, kwargs, 1, "max", None)
        else:
            lo, hi = _kw(args, kwargs, 1, "min", None), _kw(args, kwargs, 2, "max", None)
        if isinstance(lo, torch.Tensor) or isinstance(hi, torch.Tensor):
            return None
        e = x if lo is None else f"fmaxf({x}, {_f(lo)})"
        return e if hi is None else f"fminf({e}, {_f(hi)})"
    if name == "pow" and len(args) >= 2:
        if a[1] is not None:
            return f"powf({x}, {a[1]})"
        e = args[1]
        if isinstance(a[0], str) and isinstance(e, (int, float)):
            if e == 1:
                return x
            if e in (2, 3, 4):
                return "(" + "*".join([f"({x})"] * int(e)) + ")"
            if e == 0.5:
                return f"sqrtf({x})"
            if e == -1:
                return f"(1.0f/({x}))"
            return f"powf({x}, {_f(e)})"
        if a[0] is None and isinstance(args[0], (int, float)) and a[1] is not None:
            return f"powf({_f(args[0])}, {a[1]})"
        return None
    if name in ("maximum", "minimum", "fmax", "fmin") and len(args) >= 2 and a[1] is not None:
        return f"{'fmaxf' if name in ('maximum', 'fmax') else 'fminf'}({x}, {a[1]})"
    if name == "rsub" and len(args) >= 2:
        y = a[1] if a[1] is not None else (_f(args[1]) if isinstance(args[1], (int, float)) else None)
        if y is None:
            return None
        alpha = kwargs.get("alpha", 1)
        return f"({y} - {_f(alpha)}*({x}))"
    if name in ("add", "sub", "mul", "div") and len(args) >= 2:
        y = a[1] if a[1] is not None else (_f(args[1]) if isinstance(args[1], (int, float)) else None)
        if y is None or kwargs.get("rounding_mode") is not None:
            return None
        alpha = kwargs.get("alpha", 1)
        if alpha != 1:
            y = f"{_f(alpha)}*({y})"
        return f"({x} {dict(add='+', sub='-', mul='*', div='/')[name]} {y})"
    return None


def _broadcasts(shape, out_shape):
    """shape broadcasts to out_shape (NumPy rules, dims aligned from the right)."""
    if len(shape) > len(out_shape):
        return False
    return all(a == b or a == 1 for a, b in zip(reversed(tuple(shape)), reversed(out_shape)))


def _expression(calls, input_names, inputs, outputs):
    """The forward as one C expression over the inputs, or None."""
    known = {id(t): n for n, t in zip(input_names, inputs)}
    out_shape = tuple(outputs[0].shape)
    for func, args, kwargs, out in calls:
        name = func._overloadpacket.__name__
        tensors = [x for x in args if isinstance(x, torch.Tensor)]
        if any(id(t) not in known for t in tensors) or not isinstance(out, torch.Tensor):
            return None
        if any(not _broadcasts(t.shape, out_shape) for t in tensors):
            return None
        texts = [known.get(id(x)) if isinstance(x, torch.Tensor) else None for x in args]
        if func.is_view:
            if tuple(out.shape) != tuple(tensors[0].shape):
                return None
            known[id(out)] = texts[0]
            continue
        e = _translate(name, texts, args, kwargs)
        if e is None:
            return None
        known[id(out)] = e
    return known.get(id(outputs[0]))


def graph(base):
    """{ops, main} of a probe at the base point: the forward's aten ops in
    order (each once, views left out) and the op that decides its class (the
    convolution, matmul, pooling or scan; for `custom`, the first op no class
    covers), for the YAML's `graph` key."""
    calls = [c for c in base["calls"] if not c[0].is_view]
    names = [c[0]._overloadpacket.__name__ for c in calls]
    pointwise = [torch.Tag.pointwise in c[0].tags or n in UNTAGGED_POINTWISE for c, n in zip(calls, names)]
    ops = list(dict.fromkeys("aten::" + n for n in names))
    main = None
    for group in (CONV, MATMUL, POOL, SCAN):
        main = main or next((n for n in names if n in group), None)
    if sum(n in MATMUL for n in names) > 1:
        main = [n for n in names if n in MATMUL][1]
    if main is None:
        main = next((n for n, p in zip(names, pointwise) if not p and n not in REDUCE
                     and n not in ("empty", "empty_like", "copy_", "clone")), None)
    if main is None:
        main = next((n for n in names if n in REDUCE), None)
    out = {"ops": ops}
    if main is not None:
        out["main"] = "aten::" + main
    return out


AXIS_REDUCTIONS = {"sum", "mean", "amax", "amin", "prod"}


def _axis_reduction(calls, names, base):
    """{reduction, axis_first, axis_last} where the forward is one sum, mean,
    amax, amin or prod of its one input over a run of adjacent axes (all of
    them without `dim`), in the input's own dtype; else None."""
    if len(calls) != 1 or names[0] not in AXIS_REDUCTIONS or len(base["inputs"]) != 1 or base["state"]:
        return None
    shape, _ = base["inputs"][0]
    if shape == "scalar" or len(shape) == 0:
        return None
    _, args, kwargs, _ = calls[0]
    if kwargs.get("dtype") is not None or (len(args) > 3 and args[3] is not None):
        return None
    rank = len(shape)
    dims = args[1] if len(args) > 1 else kwargs.get("dim")
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        dims = list(range(rank))
    dims = _adjacent_axes(dims, rank)
    if dims is None:
        return None
    return {"reduction": names[0], "axis_first": dims[0], "axis_last": dims[-1]}


def _adjacent_axes(dims, rank):
    """The axes `dims` (an int or a list, negative ones counted from the
    end) sorted, where they are a non-empty run of adjacent axes; else None."""
    dims = sorted({int(d) % rank for d in ([dims] if isinstance(dims, int) else dims)})
    return dims if dims and dims == list(range(dims[0], dims[-1] + 1)) else None


def _normalize(calls, names, base, input_names):
    """{stat, axis_first, axis_last, pre, post} (template cpu/axis_normalize)
    where the forward is a softmax or log_softmax along one axis, or its one
    input divided by its L1 or L2 norm over a run of adjacent axes
    (x / x.norm(p, dim, keepdim=True), F.normalize); no module state; else
    None."""
    if len(base["inputs"]) != 1 or base["state"] or len(base["outputs_raw"]) != 1:
        return None
    shape, _ = base["inputs"][0]
    if shape == "scalar" or len(shape) == 0:
        return None
    rank, x, out = len(shape), base["inputs_raw"][0], base["outputs_raw"][0]
    if names in (["_softmax"], ["_log_softmax"]):
        _, args, _, res = calls[0]
        if args[0] is not x or res is not out or (len(args) > 2 and args[2]):
            return None
        d = int(args[1]) % rank
        return {"stat": "logsumexp", "axis_first": d, "axis_last": d,
                "post": "expf(x - s)" if names[0] == "_softmax" else "x - s"}
    if names not in (["linalg_vector_norm", "div"], ["linalg_vector_norm", "clamp_min", "div"]):
        return None
    _, args, kwargs, norm = calls[0]
    order, dims = _kw(args, kwargs, 1, "ord", 2), _kw(args, kwargs, 2, "dim", None)
    if args[0] is not x or not _kw(args, kwargs, 3, "keepdim", False) or dims is None or kwargs.get("dtype") is not None:
        return None
    if float(order) not in (1.0, 2.0):
        return None
    dims = _adjacent_axes(dims, rank)
    if dims is None:
        return None
    denominator = "sqrtf(s)" if float(order) == 2.0 else "s"
    divisor = norm
    if names[1] == "clamp_min":
        _, cargs, _, clamped = calls[1]
        if cargs[0] is not norm or isinstance(cargs[1], torch.Tensor):
            return None
        denominator, divisor = f"fmaxf({denominator}, {_f(cargs[1])})", clamped
    _, dargs, _, res = calls[-1]
    if dargs[0] is not x or res is not out or not isinstance(dargs[1], torch.Tensor):
        return None
    if dargs[1] is not divisor and getattr(dargs[1], "_base", None) is not divisor:
        return None  # F.normalize divides by an expanded view of the clamped norm
    return {"stat": "sum", "axis_first": dims[0], "axis_last": dims[-1],
            "pre": "x * x" if float(order) == 2.0 else "fabsf(x)", "post": f"x / {denominator}"}


def _names_by_id(base, input_names):
    state = [t for _, t in base["state_raw"] if t.dtype.is_floating_point or t.dtype.is_complex]
    return {id(t): n for n, t in zip(input_names, list(base["inputs_raw"]) + state) if isinstance(t, torch.Tensor)}


def _group_norm(calls, names, base, input_names):
    """{reduction: group_norm, x, groups, eps, gamma, beta} where the forward
    is one group norm of an input (nn.GroupNorm, F.group_norm); else None."""
    if names != ["native_group_norm"] or len(base["outputs_raw"]) != 1:
        return None
    _, args, _, out = calls[0]
    x, w, b, _, _, _, group, eps = args[:8]
    if base["outputs_raw"][0] is not out[0]:
        return None
    return _norm_keys("group_norm", x, w, b, base, input_names, groups=int(group), eps=float(eps))


def _norm_keys(reduction, x, w, b, base, input_names, **extra):
    """{reduction, x, **extra, gamma, beta} of a norm of input x with the
    optional affine inputs w and b, by their input names; None where one of
    them is no input."""
    by_id = _names_by_id(base, input_names)
    if id(x) not in by_id or any(t is not None and id(t) not in by_id for t in (w, b)):
        return None
    keys = {"reduction": reduction, "x": by_id[id(x)], **extra}
    keys.update({k: by_id[id(t)] for k, t in (("gamma", w), ("beta", b)) if t is not None})
    return keys


TRAINING_BATCH_NORM = {"native_batch_norm", "_native_batch_norm_legit"}


def _batch_norm(calls, names, base, input_names):
    """{reduction: batch_norm, x, eps, gamma, beta} where the forward is one
    batch norm with batch statistics (nn.BatchNorm1d/2d/3d in training mode,
    F.batch_norm(training=True)) of an input [N, C, *]: per channel, the mean
    and biased variance over N and the spatial axes; the running statistics
    it also updates are no part of its output; else None."""
    if len(names) != 1 or names[0] not in TRAINING_BATCH_NORM or len(base["outputs_raw"]) != 1:
        return None
    func, args, kwargs, out = calls[0]
    bound = dict(zip((a.name for a in func._schema.arguments), args))
    bound.update(kwargs)
    x = bound.get("input")
    if not bound.get("training") or not isinstance(x, torch.Tensor) or x.dim() < 2 or base["outputs_raw"][0] is not out[0]:
        return None
    return _norm_keys("batch_norm", x, bound.get("weight"), bound.get("bias"), base, input_names,
                      eps=float(bound["eps"]))


# Losses as the elementwise expression their mean or sum reduces ({p}: the
# prediction, {t}: the target, {d}: their difference, {b}: beta or delta).
LOSSES = {"mse_loss": "({d})*({d})", "l1_loss": "fabsf({d})",
          "smooth_l1_loss": "(fabsf({d}) < {b} ? 0.5f*({d})*({d})/{b} : fabsf({d}) - 0.5f*{b})",
          "huber_loss": "(fabsf({d}) < {b} ? 0.5f*({d})*({d}) : {b}*(fabsf({d}) - 0.5f*{b}))"}


def _loss(calls, names, base, input_names):
    """{reduce: mean | sum, expr} where the forward is one MSE, L1, smooth L1
    or Huber loss of two inputs of one shape with a mean or sum reduction."""
    if len(names) > 1 and names[-1] in ("sum", "mean"):
        return _reduced_expression(calls, names, base, input_names)
    if len(names) != 1 or names[0] not in LOSSES:
        return None
    _, args, kwargs, _ = calls[0]
    p, t = args[0], args[1]
    by_id = _names_by_id(base, input_names)
    if id(p) not in by_id or id(t) not in by_id or p.shape != t.shape:
        return None
    reduction = _kw(args, kwargs, 2, "reduction", 1)
    if reduction not in (1, 2):
        return None
    beta = _kw(args, kwargs, 3, "beta" if names[0] == "smooth_l1_loss" else "delta", 1.0)
    if names[0] == "smooth_l1_loss" and float(beta) == 0.0:
        return None
    d = f"({by_id[id(p)]} - {by_id[id(t)]})"
    return {"reduce": "mean" if reduction == 1 else "sum", "expr": LOSSES[names[0]].format(d=d, b=_f(beta))}


def _pooling(base, input_names):
    """{kind, kernel, stride, padding, ...} where the forward is one max or
    average pool of its input (through views that add leading axes of 1, as
    PyTorch runs a 1-D pool as 2-D); else None."""
    x = base["inputs_raw"][0] if base["inputs_raw"] else None
    src, pool = {id(x): x}, None
    for func, args, kwargs, out in base["calls"]:
        name = func._overloadpacket.__name__
        if func.is_view:
            if id(args[0]) in src and pool is None:
                src[id(out)] = out
            elif pool is None or id(args[0]) not in src:
                return None
            src[id(out)] = out
            continue
        if pool is not None or id(args[0]) not in src:
            return None
        pool = (name, args, kwargs, out)
        for o in [out] if isinstance(out, torch.Tensor) else list(out):  # values (and indices)
            src[id(o)] = o
    if base["outputs_raw"] and not base["outputs_raw"][0].dtype.is_floating_point:
        return None  # the indices
    if pool is None or len(base["inputs_raw"]) != 1 or base["state"] or len(base["outputs_raw"]) != 1:
        return None
    name, args, kwargs, _ = pool
    dims = len(args[1]) if isinstance(args[1], (list, tuple)) else None
    if name not in ("avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
                    "max_pool2d_with_indices", "max_pool3d_with_indices") or dims is None:
        return None

    def axes(v, fill):
        v = [v] * dims if isinstance(v, int) else list(v) or [fill] * dims
        return ",".join(str(int(a)) for a in (v * dims if len(v) == 1 else v))
    kernel = axes(args[1], 1)
    keys = {"kind": "max" if name.startswith("max") else "avg", "kernel": kernel,
            "stride": axes(_kw(args, kwargs, 2, "stride", []), 0) if _kw(args, kwargs, 2, "stride", []) else kernel,
            "padding": axes(_kw(args, kwargs, 3, "padding", 0), 0)}
    if keys["kind"] == "max":
        keys["dilation"] = axes(_kw(args, kwargs, 4, "dilation", 1), 1)
        keys["ceil_mode"] = int(bool(_kw(args, kwargs, 5, "ceil_mode", False)))
    else:
        keys["ceil_mode"] = int(bool(_kw(args, kwargs, 4, "ceil_mode", False)))
        keys["count_include_pad"] = int(bool(_kw(args, kwargs, 5, "count_include_pad", True)))
        divisor = _kw(args, kwargs, 6, "divisor_override", None)
        if divisor:
            keys["divisor"] = int(divisor)
    return keys


def _reduced_expression(calls, names, base, input_names):
    """{reduce, expr} where the forward is pointwise ops ending in a sum or
    mean over every element (a loss written out, as F.l1_loss runs)."""
    _, args, kwargs, out = calls[-1]
    x = args[0]
    dims = args[1] if len(args) > 1 else kwargs.get("dim")
    if out.numel() != 1 or kwargs.get("dtype") is not None or (dims is not None and len(dims) not in (0, x.dim())):
        return None
    if not all(torch.Tag.pointwise in c[0].tags or n in UNTAGGED_POINTWISE for c, n in zip(calls[:-1], names[:-1])):
        return None
    state = [t for _, t in base["state_raw"] if t.dtype.is_floating_point or t.dtype.is_complex]
    if any(isinstance(t, torch.Tensor) and tuple(t.shape) != tuple(x.shape) for t in list(base["inputs_raw"]) + state):
        return None  # cpu/reduce_all reads every input in place
    head = [c for c in base["calls"] if c is not calls[-1]]
    expr = _expression(head, input_names, list(base["inputs_raw"]) + state, [x])
    return {"reduce": names[-1], "expr": expr} if expr else None


def _scan(base, input_names):
    """{op, axis, reverse, expr, post} where the forward is one cumsum or
    cumprod (through flips of its axis before and after: reversed) of a
    pointwise prologue of inputs of the output's shape, then pointwise ops
    over the scan and those inputs; else None."""
    calls = base["calls"]
    at = [i for i, c in enumerate(calls) if c[0]._overloadpacket.__name__ in ("cumsum", "cumprod")]
    if len(at) != 1 or len(base["outputs_raw"]) != 1:
        return None
    i = at[0]
    func, args, kwargs, out = calls[i]
    x = args[0]
    if x.dim() == 0 or kwargs.get("dtype") is not None or (len(args) > 2 and args[2] is not None):
        return None
    dim = int(_kw(args, kwargs, 1, "dim", 0)) % x.dim()
    pre, post, reverse = list(calls[:i]), list(calls[i + 1:]), 0

    def flip_of(c, t):
        return (c[0]._overloadpacket.__name__ == "flip" and c[1][0] is t
                and sorted(int(d) % t.dim() for d in c[1][1]) == [dim])
    if pre and post and pre[-1][3] is x and flip_of(pre[-1], pre[-1][1][0]) and flip_of(post[0], out):
        reverse, x, out = 1, pre[-1][1][0], post[0][3]
        pre, post = pre[:-1], post[1:]
    shape = tuple(base["outputs_raw"][0].shape)
    inputs = list(base["inputs_raw"]) + [t for _, t in base["state_raw"] if t.dtype.is_floating_point]
    if tuple(x.shape) != shape or any(not isinstance(t, torch.Tensor) or tuple(t.shape) != shape for t in inputs):
        return None
    expr = _expression(pre, input_names, inputs, [x])
    if expr is None:
        return None
    names = list(input_names)[:len(inputs)]
    post_expr = _expression(post, names + ["acc"], inputs + [out], base["outputs_raw"])
    if post_expr is None:
        return None
    keys = {"op": "sum" if func._overloadpacket.__name__ == "cumsum" else "prod", "axis": dim, "reverse": reverse}
    if expr != input_names[0]:
        keys["expr"] = expr
    if post_expr != "acc":
        keys["post"] = post_expr
    return keys


def _segment(calls, names, base, input_names):
    """{reduce, values, offsets[, initial]} where the forward is one
    torch.segment_reduce of an input along axis 0 by an offsets input;
    else None."""
    if names != ["segment_reduce"] or len(base["outputs_raw"]) != 1:
        return None
    _, args, kwargs, out = calls[0]
    data, reduce = args[0], _kw(args, kwargs, 1, "reduce", None)
    offsets, axis = _kw(args, kwargs, 4, "offsets", None), int(_kw(args, kwargs, 5, "axis", 0))
    if _kw(args, kwargs, 2, "lengths", None) is not None or _kw(args, kwargs, 3, "indices", None) is not None:
        return None
    by_id = {id(t): n for n, t in zip(input_names, base["inputs_raw"]) if isinstance(t, torch.Tensor)}
    if offsets is None or axis != 0 or id(data) not in by_id or id(offsets) not in by_id or offsets.dim() != 1:
        return None
    if reduce not in ("sum", "mean", "max", "min", "prod") or base["outputs_raw"][0] is not out:
        return None
    keys = {"reduce": reduce, "values": by_id[id(data)], "offsets": by_id[id(offsets)]}
    initial = _kw(args, kwargs, 7, "initial", None)
    if initial is not None:
        keys["initial"] = float(initial)
    return keys


def classify(base, input_names):
    """(class, template map) of a probe at the base point; input_names:
    the operator's inputs (forward's, then the module state's)."""
    calls = [c for c in base["calls"] if not c[0].is_view]
    names = [c[0]._overloadpacket.__name__ for c in calls]
    pointwise = [torch.Tag.pointwise in c[0].tags or n in UNTAGGED_POINTWISE for c, n in zip(calls, names)]
    matmuls = sum(n in MATMUL for n in names)
    if any(n in CONV for n in names):
        from classify_conv import conv_keys
        return "conv", conv_keys(base, input_names)
    if matmuls == 1:
        from classify_matmul import matmul_keys
        return "matmul", matmul_keys(base, input_names)
    if matmuls > 1:
        return "custom", {}
    if any(n in POOL for n in names):
        return "pooling", _pooling(base, input_names) or {}
    if any(n in SCAN for n in names):
        return "scan", _scan(base, input_names) or {}
    if names == ["segment_reduce"]:
        return "jagged", _segment(calls, names, base, input_names) or {}
    rest = [n for n, p in zip(names, pointwise) if not p and n not in ("empty", "empty_like", "copy_", "clone")]
    if not rest:
        expr = None
        if len(base["outputs"]) == 1:
            inputs = list(base["inputs_raw"]) + [t for _, t in base["state_raw"]
                                                 if t.dtype.is_floating_point or t.dtype.is_complex]
            expr = _expression(base["calls"], input_names, inputs, base["outputs_raw"])
        return "elementwise", ({"expr": expr} if expr else {})
    if all(n in REDUCE for n in rest):
        if names == ["_softmax"] and len(base["inputs"]) == 1 and len(base["inputs"][0][0]) == 2 \
                and calls[0][1][1] in (-1, 1) and not base["state"]:
            return "row_reduction", {"reduction": "softmax"}
        return "row_reduction", (_axis_reduction(calls, names, base) or _group_norm(calls, names, base, input_names)
                                 or _batch_norm(calls, names, base, input_names) or _loss(calls, names, base, input_names)
                                 or _normalize(calls, names, base, input_names) or {})
    return "custom", {}
