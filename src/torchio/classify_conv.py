"""The template keys of a `conv` forward: one convolution (1 to 3 spatial
axes, transposed or not, any stride, padding, dilation and groups) of an
input by a weight, then a chain of pointwise ops over its result, inputs of
one value per output channel ([C, 1, ..], its own bias) and constants, batch
norms with running statistics (eval mode), then
at most one row op: the mean over every spatial axis (mean, global average
pooling) or a group norm. The cpu/conv template
(knowledge/templates/cpu/conv.json) serves what this describes:

  x, w                        the input and weight inputs
  transposed                  1 for a transposed convolution
  stride, padding, dilation   one integer per spatial axis, comma-separated
  output_padding              (transposed)
  groups                      the convolution's groups
  expr                        the chain over `acc`, channel inputs by name
  row                         none | mean | group_norm
  gamma, beta, norm_groups, eps   the group norm's

and `workspace_bytes` for the template's packed weights and thread buffers.
"""
import torch

from classify import UNTAGGED_POINTWISE, _names_by_id, _translate
from classify_matmul import BATCH_NORM, _affine, batch_norm_expression, finish_keys

IGNORED = {"empty", "empty_like"}
GLOBAL_POOL = {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "_adaptive_avg_pool2d",
               "_adaptive_avg_pool3d"}


def _per_channel(t, channels, rank):
    """Whether t broadcasts against [N, C, *S] (rank) as one value per channel."""
    s = tuple(t.shape)
    return t.numel() == channels and (s == (channels,) + (1,) * (rank - 2) or s == (1, channels) + (1,) * (rank - 2))


def _axes(v):
    return ",".join(str(int(a)) for a in v)


def conv_keys(base, input_names):
    """The template map of a conv forward (module docstring), or {} where its
    chain is not one the template covers."""
    name_of = _names_by_id(base, input_names)
    known, keys, row_done, out_numel, channels, rank = {}, {}, False, None, None, None
    for func, args, kwargs, out in base["calls"]:
        name = func._overloadpacket.__name__
        if name in IGNORED:
            continue
        ts = [x for x in args if isinstance(x, torch.Tensor)]
        if not keys:
            if name != "convolution":
                return {}
            x, w, bias, stride, padding, dilation, transposed, output_padding, groups = args[:9]
            if id(x) not in name_of or id(w) not in name_of or not 3 <= x.dim() <= 5:
                return {}
            keys = {"x": name_of[id(x)], "w": name_of[id(w)], "transposed": int(bool(transposed)),
                    "stride": _axes(stride), "padding": _axes(padding), "dilation": _axes(dilation)}
            if transposed:
                keys["output_padding"] = _axes(output_padding)
            if groups != 1:
                keys["groups"] = int(groups)
            out_numel, channels, rank = out.numel(), out.shape[1], out.dim()
            acc = "acc"
            if bias is not None:
                if id(bias) not in name_of:
                    return {}
                acc = f"(acc + {name_of[id(bias)]})"
            known[id(out)] = acc
            continue
        if name.endswith("_") and not any(id(t) in known for t in ts):
            continue  # a module's own bookkeeping
        if func.is_view:
            if id(args[0]) not in known or (not row_done and out.numel() != out_numel):
                return {}
            known[id(out)] = known[id(args[0])]
            continue
        if row_done:
            return {}
        for i, t in enumerate(args):  # a group norm's weight and bias are [C], a batch norm's statistics too
            if isinstance(t, torch.Tensor) and id(t) not in known and id(t) in name_of and (
                    _per_channel(t, channels, rank) or (tuple(t.shape) == (channels,) and (
                        (name == "native_group_norm" and i in (1, 2)) or (name in BATCH_NORM and 1 <= i <= 4)))):
                known[id(t)] = name_of[id(t)]
        if any(id(t) not in known for t in ts):
            return {}
        if name in BATCH_NORM:  # with running statistics: pointwise per channel
            e = batch_norm_expression(name, args, known) if args[0].numel() == out_numel else None
            if e is None:
                return {}
            known[id(out[0] if isinstance(out, (tuple, list)) else out)] = e
            continue
        x = args[0]
        if isinstance(x, torch.Tensor) and x.numel() == out_numel and x.dim() == rank:
            row = _row_op(name, args, kwargs, x, known, rank)
            if row is not None:
                keys.update(row)
                keys["expr"] = known[id(x)]
                row_done = True
                known[id(out if isinstance(out, torch.Tensor) else out[0])] = "row"
                continue
        if not (torch.Tag.pointwise in func.tags or name in UNTAGGED_POINTWISE) or not isinstance(out, torch.Tensor):
            return {}
        if out.numel() != out_numel or any(t.numel() not in (out_numel, channels) and t.numel() != 1 for t in ts):
            return {}
        e = _translate(name, [known.get(id(v)) if isinstance(v, torch.Tensor) else None for v in args], args, kwargs)
        if e is None:
            return {}
        known[id(out)] = e
    return finish_keys(keys, known, base, row_done)


def _row_op(name, args, kwargs, x, known, rank):
    if name == "mean":
        dims = args[1] if len(args) > 1 else kwargs.get("dim")
        if kwargs.get("dtype") is not None or dims is None:
            return None
        if sorted(int(d) % rank for d in dims) != list(range(2, rank)):
            return None
        return {"row": "mean"}
    if name in GLOBAL_POOL:
        size = args[1]
        size = [size] if isinstance(size, int) else list(size)
        return {"row": "mean"} if all(int(s) == 1 for s in size) and len(size) == rank - 2 else None
    if name == "native_group_norm":
        _, _, _, n, c, hxw, group, eps = args[:8]
        ab = _affine(args, known)
        if ab is None or hxw * c * n != x.numel():
            return None
        out = {"row": "group_norm", "norm_groups": int(group), "eps": float(eps)}
        out.update({k: v for k, v in zip(("gamma", "beta"), ab) if v})
        return out
    return None


def workspace_bytes(keys, shapes, render):
    """Packed weights ((Cout + 16 x groups) x Cin/groups x taps floats) and
    64 threads' buffers (a 512 x 32 panel, (Cout + 16) x 32 tile floats and
    2 x (Cout + 16) doubles of channel sums), as an expression, or for a
    spatial mean the larger of that and cuda/conv's tile sums; shapes:
    {input name: [sympy dims]}; render: a sympy expression's YAML text."""
    w = shapes[keys["w"]]
    groups = int(keys.get("groups", 1))
    taps = 1
    for d in w[2:]:
        taps = taps * d
    if keys["transposed"]:
        cout, kdim = w[1] * groups, w[0] / groups * taps
    else:
        cout, kdim = w[0], w[1] * taps
    floats = (cout + 16 * groups) * kdim + 64 * (512 * 32 + (cout + 16) * 32 + 4 * (cout + 16) + 16)
    cpu = render(4 * floats + 64)
    if keys.get("row") != "mean":
        return cpu
    # cuda/conv's mean: a sum per (image, channel, tile of 128 output
    # positions); the positions bounded by in + 2 x padding per axis
    # (transposed: in x stride + dilation x kernel + output padding).
    x = shapes[keys["x"]]
    axes = len(x) - 2
    per_axis = {k: [int(v) for v in str(keys.get(k, "")).split(",") if v.strip()] or [dflt] * axes
                for k, dflt in (("stride", 1), ("padding", 0), ("dilation", 1), ("output_padding", 0))}
    positions = 1
    for a in range(axes):
        if keys["transposed"]:
            positions = positions * (x[2 + a] * per_axis["stride"][a] + per_axis["dilation"][a] * w[2 + a]
                                     + per_axis["output_padding"][a])
        else:
            positions = positions * (x[2 + a] + 2 * per_axis["padding"][a])
    return f"max({cpu}, 4*({render(x[0] * cout)})*ceil(({render(positions)})/128) + 256)"
