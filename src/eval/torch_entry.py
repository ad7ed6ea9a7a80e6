"""An operator's PyTorch version as a Python callable, for kevolve's trusted
PyTorch processes (src/eval/torch_baseline.py: references and yardsticks;
src/torchio/: import). The operator YAML's `torch` key is one of:

  torch: "torch.softmax(x, dim=-1)"       an expression (or a function body
                                           ending in `return`) over the
                                           inputs and params by name, `torch`,
                                           `F` (torch.nn.functional), `math`
  torch: {file: f.py, function: name}      a function of the file, called as
                                           name(*inputs, *params)
  torch: {file: f.py, module: Model,       an nn.Module of the file, built as
          init: [64, "C", 0.5, ["C", 1]],  Model(*init) (a string names a param,
          weights: {w: linear.weight},     resolved per shape, also in lists), whose listed
          eval: true}                      parameters and buffers are operator
                                           inputs (functional_call); the other
                                           inputs go to forward() in order;
                                           eval: module.eval() first; a 0-d
                                           output is returned as shape [1]

The C++ side (src/eval/torch_baseline.cpp) passes this as the manifest's
"torch" object: {"expression": ...} or {"file", "function"} or {"file",
"module", "init", "weights", "eval"}, the file's path absolute.
"""
import importlib.util
import math
import os
import sys

import torch
import torch.nn.functional as F

_modules = {}


def load_file(path):
    """The module of a Python file, loaded once per process."""
    path = os.path.abspath(path)
    if path not in _modules:
        name = "kv_torch_" + str(len(_modules))
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ValueError(f"{path}: cannot be loaded as a Python file")
        mod = importlib.util.module_from_spec(spec)
        # Registered, so torch.compile (dynamo) can import the module's code by name.
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _modules[path] = mod
    return _modules[path]


def expression_function(expression, names):
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


def _resolve(a, params):
    """An init argument: a string names a param, in lists too."""
    if isinstance(a, str):
        return params[a]
    if isinstance(a, list):
        return [_resolve(x, params) for x in a]
    return a


def _at_least_1d(out):
    """Operator outputs have rank >= 1: a 0-d tensor (a loss) as shape [1]."""
    if isinstance(out, torch.Tensor):
        return out.reshape(1) if out.dim() == 0 else out
    if isinstance(out, (tuple, list)):
        return type(out)(_at_least_1d(o) for o in out)
    return out


def build_module(entry, params):
    """Model(*init) of the entry's file, on the CPU, under a fixed seed (the
    weights it draws are replaced by the operator's inputs)."""
    mod = load_file(entry["file"])
    cls = getattr(mod, entry["module"], None)
    if cls is None or not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
        raise ValueError(f"{entry['file']}: has no nn.Module class '{entry['module']}'")
    init = [_resolve(a, params) for a in entry.get("init", [])]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        m = cls(*init)
    if entry.get("eval", False):
        m.eval()
    return m


def make_callable(entry, input_names, params, device, float_dtype=None):
    """fn(*inputs) -> outputs for the manifest's "torch" entry. `params` maps
    each param's name to its value at this shape; `float_dtype`, when given,
    is the dtype the module's own floating state is cast to (the reference's
    fp64; a 16-bit variant's storage type)."""
    values = list(params.values())
    if "expression" in entry:
        f = expression_function(entry["expression"], list(input_names) + list(params))
        return lambda *a: f(*a, *values)
    if "function" in entry:
        f = getattr(load_file(entry["file"]), entry["function"], None)
        if not callable(f):
            raise ValueError(f"{entry['file']}: has no function '{entry['function']}'")
        return lambda *a: f(*a, *values)
    m = build_module(entry, params).to(device)
    if float_dtype is not None:
        m = m.to(float_dtype)
    weights = entry.get("weights", {})
    state = set(dict(m.named_parameters())) | set(dict(m.named_buffers()))
    for name, where in weights.items():
        if name not in input_names:
            raise ValueError(f"torch.weights: '{name}' is not an input of the operator")
        if where not in state:
            raise ValueError(f"torch.weights: the module has no parameter or buffer '{where}' (for input '{name}')")
    slots = [(i, weights.get(n)) for i, n in enumerate(input_names)]

    def call(*a):
        state_in = {where: a[i] for i, where in slots if where is not None}
        forward_in = [a[i] for i, where in slots if where is None]
        return _at_least_1d(torch.func.functional_call(m, state_in, tuple(forward_in)))

    return call
