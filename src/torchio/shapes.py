"""The size symbols of a KernelBench-style file and its shape points.

Symbols are the file's integer size globals (kb_source.size_globals) that
change some input, state or constructor argument. Every point is probed on
the meta device: the base point (the file's own sizes), each symbol at 2x,
3x, +1 and +3 (where the module accepts it) and all symbols at 2x at once.
Tensor dimensions and constructor arguments are fitted to expressions over
the symbols from these samples (fit.fit_dim) and checked at every one.
"""
import torch

from fit import FitError, evaluate, fit_dim
from probe import probe


class ShapeError(Exception):
    pass


def _try(source, sizes, eval_mode):
    try:
        return probe(source, sizes, eval_mode=eval_mode)
    except Exception:  # the module refuses these sizes: not a sample
        return None


def _signature(p):
    """What must not change between shape points: arity, ranks, dtypes, state names."""
    return ([(len(s), d) for s, d in p["inputs"]], [(n, len(s), d) for n, s, d in p["state"]],
            [(len(s), d) for s, d in p["outputs"]], _init_structure(p["init"]))


def _init_structure(v):
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_init_structure(x) for x in v))
    return type(v).__name__


def _leaves(v, path=()):
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            yield from _leaves(x, path + (i,))
    else:
        yield path, v


class ShapeModel:
    """Samples of the file at several sizes and the fitted expressions."""

    def __init__(self, source, base_sizes, eval_mode):
        self.source = source
        self.eval_mode = eval_mode
        self.base = probe(source, {}, eval_mode=eval_mode)
        sig = _signature(self.base)
        # Symbols: size globals whose change shows in the probe.
        self.symbols = {}
        self.samples = [(dict(base_sizes), self.base)]
        for s, v in base_sizes.items():
            p = _try(source, {s: 2 * v}, eval_mode)
            if p is None or _signature(p) != sig:
                continue
            if (p["inputs"], p["state"], p["outputs"], p["init"]) == \
               (self.base["inputs"], self.base["state"], self.base["outputs"], self.base["init"]):
                continue
            self.symbols[s] = v
        self.samples = [({s: v for s, v in self.symbols.items()}, self.base)]
        for s, v in self.symbols.items():
            for value in (2 * v, 3 * v, v + 1, v + 3):
                b = {**self.symbols, s: value}
                p = _try(source, b, eval_mode)
                if p is not None and _signature(p) == sig:
                    self.samples.append((b, p))
        joint = {s: 2 * v for s, v in self.symbols.items()}
        p = _try(source, joint, eval_mode)
        if p is None or _signature(p) != sig:
            raise ShapeError(f"the module fails with every size global doubled ({joint})")
        self.samples.append((joint, p))
        names = list(self.symbols)
        try:
            self.inputs = [self._fit_shape(lambda q, i=i: q["inputs"][i][0], names) for i in range(len(sig[0]))]
            self.state = [self._fit_shape(lambda q, i=i: q["state"][i][1], names) for i in range(len(sig[1]))]
            self.outputs = [self._fit_shape(lambda q, i=i: q["outputs"][i][0], names) for i in range(len(sig[2]))]
            self.init = self._fit_init(names)
        except FitError as e:
            raise ShapeError(f"a size does not follow the size globals {names}: {e}")

    def call_output(self, made):
        """The fitted shape of the tensor a traced call returns (made: its
        call index and position among the call's tensors), e.g. a sequence's
        intermediate."""
        index, position = made
        name = self.base["calls"][index][0]._overloadpacket.__name__

        def shape_of(p):
            func, _, _, out = p["calls"][index]
            if func._overloadpacket.__name__ != name:
                raise ShapeError(f"the traced call {index} is aten::{name} at the file's sizes and "
                                 f"aten::{func._overloadpacket.__name__} at others")
            return tuple((out if isinstance(out, torch.Tensor) else [t for t in out
                                                                     if isinstance(t, torch.Tensor)][position]).shape)
        try:
            return self._fit_shape(shape_of, list(self.symbols))
        except FitError as e:
            raise ShapeError(f"a size of the output of aten::{name} does not follow the size globals: {e}")

    def _fit_shape(self, shape_of, names):
        rank = len(shape_of(self.base))
        return [fit_dim([(b, shape_of(p)[d]) for b, p in self.samples], names) for d in range(rank)]

    def _fit_init(self, names):
        """The constructor arguments with each size-dependent integer as
        {"expr": sympy expression}; other values as they are."""
        fitted = {}
        for path, v in _leaves(self.base["init"]):
            if type(v) is not int:
                continue
            vals = [(b, _at(p["init"], path)) for b, p in self.samples]
            if all(x == v for _, x in vals):
                continue
            fitted[path] = fit_dim(vals, names)

        def rebuild(v, path=()):
            if path in fitted:
                return {"expr": fitted[path]}
            if isinstance(v, (list, tuple)):
                return [rebuild(x, path + (i,)) for i, x in enumerate(v)]
            return v
        return rebuild(self.base["init"])

    def check_point(self, binding):
        """Probes a point and checks every fitted shape there; returns the probe."""
        p = probe(self.source, binding, eval_mode=self.eval_mode, record_ops=False)
        for kind, fitted, got in (("input", self.inputs, [s for s, _ in p["inputs"]]),
                                  ("state", self.state, [s for _, s, _ in p["state"]]),
                                  ("output", self.outputs, [s for s, _ in p["outputs"]])):
            for i, (dims, shape) in enumerate(zip(fitted, got)):
                want = tuple(evaluate(d, binding) for d in dims)
                if want != tuple(shape):
                    raise ShapeError(f"{kind} {i} has shape {tuple(shape)} at {binding}, the fitted shape gives {want}")
        return p

    def flops_at(self, binding):
        return probe(self.source, binding, eval_mode=self.eval_mode)["flops"]


def _at(v, path):
    for i in path:
        v = v[i]
    return v


ODD = [37, 19, 13, 11, 7, 5, 3]


def _valid(model, binding):
    try:
        model.check_point(binding)
        return True
    except Exception:
        return False


def _candidates(v, target):
    """Odd sizes near `target` (at most v), then multiples of the powers of
    two that divide v (group counts), then v itself."""
    out = []
    for t in [target] + [o for o in ODD if o < target]:
        t = min(t, v if v % 2 else v - 1)
        if t >= 1 and t not in out:
            out.append(t)
    d = 2
    while v % d == 0 and d < v:
        k = max(1, target // d) | 1
        for m in (k, k + 2, 1):
            if d * m <= v and d * m not in out:
                out.append(d * m)
        d *= 2
    out.append(v)
    return out


def holdout(model, targets, max_numel=1 << 17, max_flops=3e7):
    """A small point with odd sizes where the module allows them: symbol i
    starts at targets[i] (the last target repeats) and each is the first
    candidate the module accepts with the others at their base sizes; then
    the largest is shrunk while the point is over the budget."""
    names = list(model.symbols)
    point = {}
    for i, s in enumerate(names):
        t = targets[min(i, len(targets) - 1)]
        for c in _candidates(model.symbols[s], t):
            if _valid(model, {**model.symbols, s: c}):
                point[s] = c
                break
        else:
            raise ShapeError(f"no small size of '{s}' is accepted by the module")
    if not _valid(model, point):
        raise ShapeError(f"the module refuses the holdout point {point}")
    for _ in range(40):
        p = model.check_point(point)
        numel = max([_numel(s) for s, _ in p["inputs"]] + [_numel(s) for s, _ in p["outputs"]] + [1])
        if numel <= max_numel and model.flops_at(point) <= max_flops:
            return point
        s = max(names, key=lambda n: point[n])
        smaller = [c for c in _candidates(model.symbols[s], point[s] // 2) if c < point[s]]
        for c in smaller:
            if _valid(model, {**point, s: c}):
                point[s] = c
                break
        else:
            return point
    return point


def scaled(model, scale, threshold=64):
    """The base point with the batch (the first dimension of the first
    input, where it is a symbol) and every size above `threshold` times
    `scale`, rounded to a multiple of the largest power of two (at most 16)
    that divides the size and is at most the scaled size; where the module
    refuses it (group counts), the multiple doubles while it divides."""
    point = dict(model.symbols)
    first = model.inputs[0][0] if model.inputs and model.inputs[0] else None
    batch = str(first) if first is not None and first.is_Symbol else None
    for s, v in model.symbols.items():
        if v <= threshold and s != batch:
            continue
        align = 1
        while align < 16 and v % (align * 2) == 0 and align * 2 <= max(1, v * scale):
            align *= 2
        while True:
            c = max(align, int(round(v * scale / align)) * align)
            if _valid(model, {**model.symbols, s: c}) or align >= v or v % (align * 2):
                break
            align *= 2
        point[s] = c
    if not _valid(model, point):
        raise ShapeError(f"the module refuses the scaled point {point} (--scale {scale})")
    return point


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n
