"""One run of a KernelBench-style model at one size point.

`probe(source, sizes, device="meta")` builds Model(*get_init_inputs()) and
the inputs of get_inputs() with the size globals set to `sizes`, runs
forward once and records what the import needs: input, state and output
shapes and dtypes, the constructor arguments, and the aten ops it ran with
their flop counts. On the meta device nothing is allocated, so the file's
own (often several GB) shape costs nothing.
"""
import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import flop_registry

# Ops that move or reinterpret data without arithmetic.
NO_FLOPS = {"copy_", "clone", "to", "_to_copy", "empty_like", "zeros_like", "ones_like", "empty", "zeros",
            "ones", "full", "fill_", "detach", "alias", "lift_fresh", "contiguous", "new_empty", "new_zeros",
            "empty_strided", "as_strided", "expand", "slice", "select", "cat", "stack", "constant_pad_nd"}


class OpRecorder(TorchDispatchMode):
    """Counts flops per aten op: matmul/conv/attention by PyTorch's
    FlopCounterMode formulas (torch.utils.flop_counter), every other op
    one per element of its largest tensor (input or output)."""

    def __init__(self):
        super().__init__()
        self.ops = []  # (name, flops)
        self.calls = []  # (func, args, kwargs, out): for recognising the class

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet = func._overloadpacket
        name = packet.__name__
        if packet in flop_registry:
            flops = int(flop_registry[packet](*args, **kwargs, out_val=out))
        elif func.is_view or name in NO_FLOPS:
            flops = 0
        else:
            tensors = [t for t in tree_flatten((args, kwargs, out))[0] if isinstance(t, torch.Tensor)]
            flops = max((t.numel() for t in tensors), default=0)
        self.ops.append((name, flops))
        self.calls.append((func, args, kwargs, out))
        return out


def live_calls(calls, outputs):
    """The calls the outputs are made by, leaving out each whose results no
    later call reads and that touches no floating-point tensor (a module's
    bookkeeping, as BatchNorm's num_batches_tracked += 1) or makes its
    results from none (an unused empty()): the operator is its outputs."""
    live = {id(t) for t in outputs}
    kept = []
    for c in reversed(calls):
        ins = [t for t in tree_flatten((c[1], c[2]))[0] if isinstance(t, torch.Tensor)]
        outs = [t for t in tree_flatten(c[3])[0] if isinstance(t, torch.Tensor)]
        idle = not any(t.dtype.is_floating_point or t.dtype.is_complex for t in ins + outs) or not ins
        if idle and not any(id(t) in live for t in outs):
            continue
        kept.append(c)
        live.update(id(t) for t in ins)
    return kept[::-1]


class ProbeError(Exception):
    pass


def _outputs(r):
    if isinstance(r, torch.Tensor):
        return [r]
    if isinstance(r, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in r):
        return list(r)
    raise ProbeError(f"forward returned {type(r).__name__}, expected a tensor or a tuple of tensors")


def build(ns, device, seed=0):
    """(model, init args, inputs) at the namespace's sizes."""
    init = list(ns["get_init_inputs"]())
    with torch.device(device):
        torch.manual_seed(seed)
        model = ns["Model"](*init)
        torch.manual_seed(seed + 1)
        inputs = list(ns["get_inputs"]())
    return model.to(device), init, [t.to(device) if isinstance(t, torch.Tensor) else t for t in inputs]


def probe(source, sizes, device="meta", eval_mode=False, record_ops=True):
    ns = source.namespace(sizes)
    model, init, inputs = build(ns, device)
    if eval_mode:
        model.eval()
    rec = OpRecorder()
    with torch.no_grad():
        if record_ops:
            with rec:
                out = model(*inputs)
        else:
            out = model(*inputs)
    outs = _outputs(out)
    state = list(model.named_parameters()) + list(model.named_buffers())
    return {
        "init": init,
        "inputs": [(tuple(t.shape), t.dtype) if isinstance(t, torch.Tensor) else ("scalar", t) for t in inputs],
        "state": [(n, tuple(t.shape), t.dtype) for n, t in state],
        "outputs": [(tuple(t.shape), t.dtype) for t in outs],
        "ops": rec.ops,
        "calls": live_calls(rec.calls, outs),
        "inputs_raw": inputs,
        "outputs_raw": outs,
        "state_raw": state,
        "flops": sum(f for _, f in rec.ops),
        "model": model,
    }


def numel(shape):
    return math.prod(shape)
