"""The template keys of a `matmul` forward: one mm, bmm or addmm of two
inputs (either transposed by a view), then a chain of pointwise ops over
its result, 1-D inputs along its columns and constants, then at most one
row op (a sum or mean over the last axis, softmax, log_softmax, group
norm); batch norm with running statistics (eval mode) is pointwise. The cpu/matmul template (knowledge/templates/cpu/matmul.json)
serves what this describes:

  a, b               the operand inputs
  trans_a, trans_b   1 where the operand is stored transposed ([K, M], [N, K])
  expr               the chain as a scalar C expression over `acc` (the
                     product), the 1-D inputs by name and constants
  row                none | sum | mean | softmax | log_softmax | group_norm
  gamma, beta        the norm's affine inputs; groups, eps its constants

and `workspace_bytes` the scratch the template packs its operands into.
"""
import torch

from classify import UNTAGGED_POINTWISE, _f, _names_by_id, _translate

ROW_OPS = {"sum", "mean", "_softmax", "_log_softmax", "native_group_norm", "native_batch_norm",
           "_native_batch_norm_legit", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit_functional"}
IGNORED = {"empty", "empty_like"}


def _swaps_last_two(func, args, rank):
    name = func._overloadpacket.__name__
    if name == "t":
        return rank == 2
    if name == "transpose":
        return sorted(int(d) % rank for d in args[1:3]) == [rank - 2, rank - 1]
    if name == "permute":
        p = [int(d) % rank for d in args[1]]
        return rank >= 2 and p == list(range(rank - 2)) + [rank - 1, rank - 2]
    return False


def _last_axis(dims, rank):
    if isinstance(dims, int):
        dims = [dims]
    return dims is not None and len(dims) == 1 and int(dims[0]) % rank == rank - 1


def matmul_keys(base, input_names):
    """The template map of a matmul forward (module docstring), or {} where
    its chain is not one the template covers."""
    name_of = _names_by_id(base, input_names)
    operand = {i: (n, False) for i, n in name_of.items()}
    known, keys, row_done, n_cols, acc_numel = {}, {}, False, None, None
    for func, args, kwargs, out in base["calls"]:
        name = func._overloadpacket.__name__
        if name in IGNORED:
            continue
        if not keys:  # before the product: views of the inputs only
            if func.is_view and isinstance(args[0], torch.Tensor) and id(args[0]) in operand:
                src, trans = operand[id(args[0])]
                if _swaps_last_two(func, args, args[0].dim()):
                    operand[id(out)] = (src, not trans)
                elif out.shape[-1:] == args[0].shape[-1:] and not trans and out.numel() == args[0].numel():
                    operand[id(out)] = (src, trans)  # leading axes flattened
                else:
                    return {}
                continue
            if name not in ("mm", "bmm", "addmm"):
                return {}
            if name == "addmm" and (kwargs.get("beta", 1) != 1 or kwargs.get("alpha", 1) != 1):
                return {}
            a, b = (args[1], args[2]) if name == "addmm" else (args[0], args[1])
            if id(a) not in operand or id(b) not in operand:
                return {}
            (an, at), (bn, bt) = operand[id(a)], operand[id(b)]
            if an == bn or (at and a.dim() != 2):
                return {}
            keys = {"a": an, "b": bn, "trans_a": int(at), "trans_b": int(bt)}
            n_cols, acc_numel = out.shape[-1], out.numel()
            acc = "acc"
            if name == "addmm":
                bias = args[0]
                if id(bias) not in name_of or bias.dim() != 1 or bias.shape[0] != n_cols:
                    return {}
                acc = f"(acc + {name_of[id(bias)]})"
            known[id(out)] = acc
            continue
        ts = [x for x in args if isinstance(x, torch.Tensor)]
        if name.endswith("_") and not any(id(t) in known for t in ts):
            continue  # a module's own bookkeeping (num_batches_tracked += 1)
        if row_done:
            if func.is_view and id(args[0]) in known and out.numel() == args[0].numel():
                known[id(out)] = known[id(args[0])]
                continue
            return {}
        if func.is_view:
            if id(args[0]) not in known or out.numel() != acc_numel or out.shape[-1:] != (n_cols,):
                return {}
            known[id(out)] = known[id(args[0])]
            continue
        for t in ts:  # a 1-D input along the columns is read per column
            if id(t) not in known and id(t) in name_of and t.dim() == 1 and t.shape[0] == n_cols:
                known[id(t)] = name_of[id(t)]
        if any(id(t) not in known for t in ts):
            return {}
        x = args[0]
        if name in ROW_OPS:
            if not isinstance(x, torch.Tensor) or x.numel() != acc_numel:
                return {}
            row = _row_op(name, args, kwargs, x, known)
            if row is None:
                return {}
            if "expr" in row:  # batch norm with running statistics
                known[id(out if isinstance(out, torch.Tensor) else out[0])] = row.pop("expr")
                continue
            keys.update(row)
            keys["expr"] = known[id(x)]
            row_done = True
            known[id(out if isinstance(out, torch.Tensor) else out[0])] = "row"
            continue
        if not (torch.Tag.pointwise in func.tags or name in UNTAGGED_POINTWISE) or not isinstance(out, torch.Tensor):
            return {}
        if any(t.dim() > 1 and t.numel() != acc_numel for t in ts) or out.numel() != acc_numel:
            return {}
        e = _translate(name, [known.get(id(v)) if isinstance(v, torch.Tensor) else None for v in args], args, kwargs)
        if e is None:
            return {}
        known[id(out)] = e
    return finish_keys(keys, known, base, row_done)


def finish_keys(keys, known, base, row_done):
    """A chain walker's keys once the forward's one output is reached: the
    expression (where no row op took it) and `row: none`; {} otherwise."""
    final = known.get(id(base["outputs_raw"][0])) if len(base["outputs_raw"]) == 1 else None
    if not keys or final is None:
        return {}
    if not row_done:
        keys["expr"], keys["row"] = final, "none"
    if keys["expr"] == "acc":
        del keys["expr"]
    return keys


def _affine(args, known):
    """(gamma, beta) input names of a norm's weight and bias args 1 and 2."""
    names = []
    for v in args[1:3]:
        if v is None:
            names.append(None)
        elif isinstance(v, torch.Tensor) and known.get(id(v), "").isidentifier():
            names.append(known[id(v)])
        else:
            return None
    return names


def _row_op(name, args, kwargs, x, known):
    rank = x.dim()
    if name in ("sum", "mean"):
        if kwargs.get("dtype") is not None or not _last_axis(args[1] if len(args) > 1 else kwargs.get("dim"), rank):
            return None
        return {"row": name}
    if name in ("_softmax", "_log_softmax"):
        if not _last_axis(args[1], rank) or args[2]:
            return None
        return {"row": name[1:]}
    if name == "native_group_norm":
        _, _, _, n, c, hxw, group, eps = args[:8]
        ab = _affine(args, known)
        if hxw != 1 or rank != 2 or ab is None:
            return None
        out = {"row": "group_norm", "groups": int(group), "eps": float(eps)}
        out.update({k: v for k, v in zip(("gamma", "beta"), ab) if v})
        return out
    e = batch_norm_expression(name, args, known) if rank == 2 else None
    return {"expr": e} if e else None


BATCH_NORM = {"native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training"}


def batch_norm_expression(name, args, known):
    """A batch norm with running statistics (eval mode) as the C expression
    of its input's text in `known`, per column or channel; None in training
    mode or where its statistics are not inputs. Args: (input, weight, bias,
    running_mean, running_var, [training,] momentum, eps)."""
    if name not in BATCH_NORM or name == "_native_batch_norm_legit" or (
            name != "_native_batch_norm_legit_no_training" and bool(args[5])):
        return None
    eps = float(args[-1])
    ab = _affine(args, known)
    if ab is None or id(args[0]) not in known:
        return None
    gamma, beta = ab
    mean, var = (known.get(id(v)) for v in args[3:5])
    if not (mean and var and mean.isidentifier() and var.isidentifier()):
        return None
    e = f"((({known[id(args[0])]}) - {mean}) / sqrtf({var} + {_f(eps)}))"
    e = f"({e} * {gamma})" if gamma else e
    return f"({e} + {beta})" if beta else e


def workspace_bytes(keys, shapes, render):
    """The scratch cpu/matmul packs its operands into, as an expression: A
    as (rows + 16) x K floats for one batch, a block of B (at most 512 x
    128 x 32 floats: its largest kc by nc_panels x 32), and the product's
    rows x N where a sum or mean reduces them; shapes: {input name: [sympy
    dims]}; render: a sympy expression's YAML text."""
    a, b = shapes[keys["a"]], shapes[keys["b"]]
    k = a[-2] if keys["trans_a"] else a[-1]
    n = b[-2] if keys["trans_b"] else b[-1]
    rows = a[-1] if keys["trans_a"] else a[-2]
    if len(b) == 2:  # leading axes of A are rows of one product
        for d in a[:-2]:
            rows = rows * d
    floats = (rows + 16) * k + 512 * 128 * 32
    if keys.get("row") in ("sum", "mean"):
        floats += rows * n
    return render(4 * floats + 64)
