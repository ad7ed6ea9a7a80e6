"""A forward no one class template covers, as a chain of parts that each
one does (the YAML's `class: sequence`, src/spec/operator_parts.h): the
traced calls cut where exactly one tensor crosses the cut (an intermediate),
each side classified on its own with the operator inputs it reads. The
longest covered first part is taken first; the rest is cut again.
"""
import torch
from torch.utils._pytree import tree_flatten

NOT_A_PART = {"custom", "sequence"}


def _tensors(v):
    return [t for t in tree_flatten(v)[0] if isinstance(t, torch.Tensor)]


class _Forward:
    def __init__(self, base, in_names, st_names):
        self.base = base
        self.calls = base["calls"]
        state = [(n, t) for n, t in base["state_raw"] if t.dtype.is_floating_point or t.dtype.is_complex]
        self.inputs = list(zip(in_names, base["inputs_raw"]))
        self.state = [(n, t) for n, (_, t) in zip(st_names, state)]
        self.outer = {id(t) for _, t in self.inputs + self.state}
        self.made = {}  # id -> (call index, position) of every tensor a call returns
        for i, (_, _, _, out) in enumerate(self.calls):
            for p, t in enumerate(_tensors(out)):
                self.made.setdefault(id(t), (i, p))
        self.reads = [{id(t) for t in _tensors((a, k))} for _, a, k, _ in self.calls]

    def cut(self, start, j, end):
        """The one tensor calls[start:j] make that calls[j:end] read (and
        nothing else made before j), or None."""
        read = set().union(*self.reads[j:end]) if j < end else set()
        crossing = {i for i in read if i in self.made and self.made[i][0] < j}
        if len(crossing) != 1:
            return None
        (only,) = crossing
        if self.made[only][0] < start:
            return None
        i, p = self.made[only]
        return _tensors(self.calls[i][3])[p], (i, p)


def _segment(fw, start, end, carried, outputs, classify):
    """(class, keys, input names) of calls[start:end] as an operator of
    their own reading the operator inputs they use and `carried` (name,
    tensor), writing `outputs`; None where no class template covers it."""
    read = set().union(*fw.reads[start:end])
    ins = [(n, t) for n, t in fw.inputs if id(t) in read] + [(n, t) for n, t in carried if id(t) in read]
    st = [(n, t) for n, t in fw.state if id(t) in read]
    sub = dict(fw.base)
    sub.update({"calls": fw.calls[start:end], "inputs_raw": [t for _, t in ins],
                "inputs": [(tuple(t.shape), t.dtype) for _, t in ins],
                "state_raw": [(n, t) for n, t in st], "state": [(n, tuple(t.shape), t.dtype) for n, t in st],
                "outputs_raw": list(outputs), "outputs": [(tuple(t.shape), t.dtype) for t in outputs]})
    op_class, keys = classify(sub, [n for n, _ in ins] + [n for n, _ in st])
    if not keys or op_class in NOT_A_PART:
        return None
    return op_class, keys, [n for n, _ in ins] + [n for n, _ in st]


def split(base, in_names, st_names, out_names, new_name, classify):
    """[{class, template, inputs, outputs, made, tensor}] where the forward
    is a chain of parts class templates cover, else None. made and tensor:
    the (call index, position) and the tensor of the intermediate a part
    writes (None for the last part); new_name(): a fresh name."""
    fw = _Forward(base, in_names, st_names)
    outputs = list(zip(out_names, base["outputs_raw"]))

    def chain(start, carried):
        end = len(fw.calls)
        whole = _segment(fw, start, end, carried, [t for _, t in outputs], classify) if carried else None
        if whole:
            return [{"class": whole[0], "template": whole[1], "inputs": whole[2],
                     "outputs": [n for n, _ in outputs], "made": None}]
        for j in range(end - 1, start, -1):
            c = fw.cut(start, j, end)
            if c is None:
                continue
            t, made = c
            part = _segment(fw, start, j, carried, [t], classify)
            if part is None:
                continue
            name = new_name()
            rest = chain(j, [(name, t)])
            if rest:
                return [{"class": part[0], "template": part[1], "inputs": part[2], "outputs": [name],
                         "made": made, "tensor": t}] + rest
        return None

    if len(base["outputs_raw"]) != 1:
        return None
    return chain(0, [])
