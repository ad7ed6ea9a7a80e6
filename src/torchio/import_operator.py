"""kevolve ops import: a KernelBench-style file as an operator.

    python import_operator.py FILE.py... [--name N] [--scale S] [--out DIR] [--eval-mode]

writes, for each FILE, DIR/<name>.yaml (config/operators/README.md) and
DIR/<name>.py (a copy of FILE, the YAML's `torch: {file, module: Model,
...}` entry, see src/eval/torch_entry.py), both or nothing, and prints
`imported<TAB>FILE<TAB>YAML`. Files are imported one after another in this
one process (PyTorch is loaded once); a refused file does not stop the
others. Exit 0 all imported, 2 some file cannot be imported (stderr:
`error: FILE: what is wrong; what was expected`), other codes a bug.
Run by `kevolve ops import` (src/app/cmd_ops.cpp), which then validates the
YAML like `kevolve ops validate`.
"""
import argparse
import inspect
import itertools
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "eval"))

import sympy  # noqa: E402
import torch  # noqa: E402

import torch_entry  # noqa: E402
from classify import classify, graph  # noqa: E402
import classify_conv  # noqa: E402
import classify_matmul  # noqa: E402
import classify_sequence  # noqa: E402
from emit import operator_yaml  # noqa: E402
from fit import FitError, evaluate, fit_polynomial, render, sym  # noqa: E402
from generators import for_state, from_sample  # noqa: E402
from kb_source import Source, SourceError  # noqa: E402
from probe import build  # noqa: E402
from shapes import ShapeError, ShapeModel, holdout, scaled  # noqa: E402

# References and checks run with TF32 off (as the evaluator's references).
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_float32_matmul_precision("highest")

# the scratch a class template's keys need (`workspace_bytes`)
WORKSPACE = {"matmul": classify_matmul.workspace_bytes, "conv": classify_conv.workspace_bytes}
INITIAL_SEED = torch.initial_seed()
MEMORY_LIMIT = 4 << 30  # inputs + weights + outputs of a timed shape
DTYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64",
          torch.int32: "int32", torch.int64: "int64"}
SIZEOF = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "int32": 4, "int64": 8}
TOLERANCE = {"fp32": {"atol": 1.0e-4, "rtol": 1.0e-4}, "fp64": {"atol": 1.0e-10, "rtol": 1.0e-10},
             "fp16": {"atol": 1.0e-3, "rtol": 2.0e-3}, "bf16": {"atol": 1.0e-2, "rtol": 1.6e-2}}


class Refusal(Exception):
    """The file cannot be imported: the message says why and what was expected."""


def default_name(path):
    """kb<L>_<stem> for a file in a folder levelL, else kb_<stem>; the stem
    lowercased, runs of other characters than [a-z0-9] as one '_'."""
    stem = re.sub(r"[^a-z0-9]+", "_", os.path.splitext(os.path.basename(path))[0].lower()).strip("_")
    level = re.fullmatch(r"level(\d+)", os.path.basename(os.path.dirname(os.path.abspath(path))))
    return ("kb" + level.group(1) if level else "kb") + "_" + (stem or "operator")


def dtype_name(d, what):
    if d not in DTYPES:
        raise Refusal(f"{what} has dtype {d}; expected one of kevolve's dtypes ({', '.join(DTYPES.values())})")
    return DTYPES[d]


def check_modes(model, eval_mode):
    """Refuses a forward that is not a function of its inputs: live dropout
    outside eval mode. Norms in training mode use the batch's statistics,
    which their output depends on alone (the running statistics they update
    are no part of it)."""
    if eval_mode:
        return
    for n, m in model.named_modules():
        where = f"'{n}'" if n else "the model"
        if isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0:
            raise Refusal(f"has live dropout ({type(m).__name__}(p={m.p}) at {where}): a forward must be "
                          f"deterministic; expected no dropout, or --eval-mode (eval: true)")


def forward_names(cls, n):
    try:
        ps = list(inspect.signature(cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        ps = []
    names = [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[:n] if len(names) >= n else [f"x{i}" for i in range(n)]


def unique(name, taken):
    name = re.sub(r"\W", "_", name)
    if not re.match(r"[A-Za-z_]", name):
        name = "t_" + name
    base, k = name, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def bytes_expression(tensors):
    """sum of numel * sizeof over (shape exprs, dtype or type symbol)."""
    groups = {}
    for shape, dt in tensors:
        n = sympy.Integer(1)
        for d in shape:
            n *= d
        groups[dt] = groups.get(dt, 0) + n
    return " + ".join(f"({render(n)}) * sizeof({dt})" for dt, n in groups.items())


def output_names(count, taken):
    """y (or y0, y1, ...), with a trailing underscore while an input has the name."""
    names = []
    for i in range(count):
        n = "y" if count == 1 else f"y{i}"
        while n in taken:
            n += "_"
        names.append(n)
    return names


def build_operator(path, name, scale, eval_mode):
    src = Source(path)
    try:
        ns = src.namespace()
    except Exception as e:
        raise Refusal(f"fails when loaded: {type(e).__name__}: {e}")
    src.check(ns)
    try:
        model = ShapeModel(src, src.size_globals(ns), eval_mode)
    except ShapeError:
        raise
    except Exception as e:
        raise Refusal(f"forward raises at the file's shape (run on the meta device): {type(e).__name__}: {e}")
    base = model.base
    check_modes(base["model"], eval_mode)
    for i, x in enumerate(base["inputs"]):
        if x[0] == "scalar":
            raise Refusal(f"get_inputs() item {i} is a {type(x[1]).__name__}; expected tensors only")
    n_in = len(base["inputs"])
    kinds = [dtype_name(d, f"input {i} of get_inputs()") for i, (_, d) in enumerate(base["inputs"])]
    state = [(n, s, d) for n, s, d in base["state"] if d.is_floating_point or d.is_complex]
    kinds += [dtype_name(d, f"module state '{n}'") for n, _, d in state]
    out_kinds = [dtype_name(d, f"output {i} of forward") for i, (_, d) in enumerate(base["outputs"])]
    floats = [k for k in kinds + out_kinds if k.startswith(("fp", "bf"))]
    variant = floats[0] if floats else (kinds + out_kinds)[0]  # the file's dtypes: one variant
    tsym = lambda k: "T" if k == variant else k  # noqa: E731

    taken = set(model.symbols)
    in_names = [unique(n, taken) for n in forward_names(ns["Model"], n_in)]
    st_names = [unique(n.replace(".", "_"), taken) for n, _, _ in state]
    st_index = {n: i for i, (n, _, _) in enumerate(base["state"])}
    st_shapes = [model.state[st_index[n]] for n, _, _ in state]

    # Constructor arguments: size-dependent integers become params.
    params, pnames = [], {}

    def yaml_init(v):
        if isinstance(v, dict):
            e = v["expr"]
            text = render(e)
            if text not in pnames:
                pname = text if isinstance(e, sympy.Symbol) else unique(f"init_{len(params)}", taken)
                pnames[text] = pname
                params.append({"name": pname, "type": "int", "value": text})
            return pnames[text]
        if isinstance(v, (list, tuple)):
            return [yaml_init(x) for x in v]
        if isinstance(v, (bool, int, float)):
            return v
        raise Refusal(f"get_init_inputs() returns a {type(v).__name__}; expected numbers and lists of numbers")
    init = yaml_init(model.init)

    # Shape points.
    timed = [("kernelbench", dict(model.symbols))]
    shapes_note = "the file's own sizes"
    if scale is not None:
        timed = [("kernelbench_scaled", scaled(model, scale))]
        shapes_note = (f"the file's batch and sizes above 64 times --scale {scale} (rounded to a multiple of a "
                       f"power of two that divides them); the file's own: " + ", ".join(f"{k}={v}" for k, v in model.symbols.items()))
    holds = []
    for targets in ([3, 37, 13], [5, 19, 11]):
        h = holdout(model, targets)
        if h not in [x for _, x in holds]:
            holds.append((f"odd_{len(holds) + 1}", h))

    tensors = [(s, tsym(k)) for s, k in zip(model.inputs, kinds[:n_in])]
    tensors += [(s, tsym(k)) for s, k in zip(st_shapes, kinds[n_in:])]
    out_shapes = [s if s else [sympy.Integer(1)] for s in model.outputs]
    all_tensors = tensors + [(s, tsym(k)) for s, k in zip(out_shapes, out_kinds)]
    for shape_name, point in timed:
        total = 0
        for shape, k in all_tensors:
            n = 1
            for d in shape:
                n *= evaluate(d, point)
            total += n * SIZEOF[variant if k == "T" else k]
        if total > MEMORY_LIMIT:
            raise Refusal(f"needs {total / 2**30:.1f} GiB of inputs, weights and outputs at its shape "
                          f"({', '.join(f'{k}={v}' for k, v in point.items())}); expected at most "
                          f"{MEMORY_LIMIT / 2**30:.0f} GiB: pass --scale S (0 < S <= 1) for a smaller timed shape")
    try:
        flops, calls = fit_polynomial(model.flops_at, model.symbols)
    except FitError as e:
        raise Refusal(f"its flop count is not a polynomial in the sizes: {e}")

    # The real run at the first holdout shape: raises? deterministic? the entry equals the model?
    hname, hpoint = holds[0]
    hns = src.namespace(hpoint)
    try:
        hmodel, _, hinputs = build(hns, "cpu")
        if eval_mode:
            hmodel.eval()
        with torch.no_grad():
            out1 = hmodel(*hinputs)
            out2 = hmodel(*hinputs)
    except Exception as e:
        raise Refusal(f"forward raises at the holdout shape {hpoint}: {type(e).__name__}: {e}")
    outs1, outs2 = ([o] if isinstance(o, torch.Tensor) else list(o) for o in (out1, out2))
    if not all(torch.equal(a, b) for a, b in zip(outs1, outs2)):
        raise Refusal("forward is not deterministic (two calls on the same inputs differ); expected a pure "
                      "function of its inputs (no torch.rand, dropout or other random draws in forward)")
    hstate = dict(list(hmodel.named_parameters()) + list(hmodel.named_buffers()))

    generators = {}
    for i, (n, t) in enumerate(zip(in_names, hinputs)):
        generators[n] = from_sample(t)
        if not t.dtype.is_floating_point:
            generators[n] = [integer_range(hns, i, hpoint)]
    for (sname, _, _), n in zip(state, st_names):
        owner = sname.rpartition(".")[0]
        wkey = (owner + "." if owner else "") + "weight"
        wshape = model.state[st_index[wkey]] if wkey in st_index else None
        generators[n] = for_state(hmodel, sname, hstate[sname], wshape)

    entry = {"file": f"{name}.py", "module": "Model", "init": init,
             "weights": {n: s for n, (s, _, _) in zip(st_names, state)}, "eval": bool(eval_mode)}
    self_check(entry, path, in_names + st_names, params, hpoint, hinputs + [hstate[s] for s, _, _ in state], outs1)

    op_class, template = classify(base, in_names + st_names)
    if op_class == "jagged" and template.get("offsets"):
        generators[template["offsets"]] = segment_offsets(template, dict(zip(in_names, model.inputs)))
    elif op_class == "jagged":
        raise Refusal("its torch.segment_reduce is not one kevolve can draw inputs for; expected segments given "
                      "by `offsets` (a 1-D int64 input) along axis 0 (segment lengths, `indices` and other axes "
                      "are not drawn)")
    workspace = None
    shapes_by_name = {n: s for n, (s, _) in zip(in_names + st_names, tensors)}
    if op_class in WORKSPACE and template:
        workspace = WORKSPACE[op_class](template, shapes_by_name, render)
    out_names = output_names(len(out_shapes), in_names + st_names)
    parts, intermediates = None, []
    if not template and op_class != "jagged":  # no one class template: a chain of them?
        names_taken = set(taken) | set(in_names + st_names + out_names)
        count = itertools.count()
        parts = classify_sequence.split(base, in_names, st_names, out_names,
                                        lambda: unique(f"t{next(count)}", names_taken), classify)
        if parts:
            for part in parts:
                if part["made"] is not None:
                    shape = model.call_output(part["made"])
                    shapes_by_name[part["outputs"][0]] = shape
                    intermediates.append({"name": part["outputs"][0],
                                          "dtype": tsym(dtype_name(part["tensor"].dtype, "an intermediate")),
                                          "shape": [dim_text(d) for d in shape]})
                if part["class"] in WORKSPACE:
                    part["workspace_bytes"] = WORKSPACE[part["class"]](part["template"], shapes_by_name, render)
            parts = [{k: v for k, v in p.items() if k not in ("made", "tensor")} for p in parts]
            op_class, template = "sequence", {}
            op_class, template = "sequence", {}
    doc = inspect.getdoc(ns["Model"]) or ""
    first = doc.strip().split("\n\n")[0].replace("\n", " ") if doc.strip() else f"The forward of {os.path.basename(path)}."
    description = (f"{first} KernelBench-style problem {os.path.basename(path)}, imported as written: Model(*init) "
                   f"in {'eval' if eval_mode else 'training'} mode, its parameters and floating-point buffers "
                   f"as inputs. References run with TF32 off.")
    return {
        "source": os.path.basename(path), "name": name, "class": op_class, "description": description,
        "variants": {variant: {"T": variant}},
        "symbols": list(model.symbols),
        "inputs": [{"name": n, "dtype": k, "shape": [dim_text(d) for d in s]}
                   for n, (s, k) in zip(in_names + st_names, tensors)],
        "outputs": [{"name": n, "dtype": tsym(k), "shape": [dim_text(d) for d in s]}
                    for n, s, k in zip(out_names, out_shapes, out_kinds)],
        "params": params,
        "generators": generators,
        "shapes": [{"name": n, **p} for n, p in timed], "shapes_note": "timed: " + shapes_note,
        "holdout_shapes": [{"name": n, **p} for n, p in holds],
        "holdout_shapes_note": "odd sizes the module accepts (group counts keep dividing), verified only",
        "bytes": bytes_expression(all_tensors), "flops": render(flops),
        "cost_note": (f"bytes: inputs, weights and outputs once (shapes from the traced forward); flops: "
                      f"torch.utils.flop_counter for matmul/conv/attention, one per element of the largest tensor "
                      f"of every other op, interpolated exactly as a polynomial in the sizes from {calls} meta-device "
                      f"runs at multiples of the file's sizes"),
        "tolerance": {k: TOLERANCE[k] for k in dict.fromkeys(out_kinds) if k in TOLERANCE},
        "torch": entry, "template": template, "graph": graph(base), "workspace_bytes": workspace,
        "parts": parts, "intermediates": intermediates,
    }


def segment_offsets(keys, shapes):
    """Draws of a segment reduction's offsets [B+1] over the values' rows
    (keys: the template's values and offsets inputs): segments up to twice
    the mean length, and a heavy skew (most segments empty)."""
    rows = render(shapes[keys["values"]][0])
    b = render(shapes[keys["offsets"]][0] - 1)
    return [{"dist": "offsets", "total": rows, "max_len": f"ceil(2*({rows})/max({b}, 1))"},
            {"dist": "offsets", "total": rows, "max_len": f"16*ceil(({rows})/max({b}, 1))"}]


def integer_range(ns, i, point, draws=32):
    """randint over what get_inputs() draws for integer input i: the range
    of `draws` draws at the point, its end a size symbol where one equals
    it (class indices below num_classes), else a number."""
    lo, hi = None, None
    for seed in range(draws):
        torch.manual_seed(seed)
        t = ns["get_inputs"]()[i]
        lo = int(t.min()) if lo is None else min(lo, int(t.min()))
        hi = int(t.max()) if hi is None else max(hi, int(t.max()))
    end = next((s for s, v in point.items() if v == hi + 1), hi + 1)
    return {"dist": "randint", "low": lo, "high": end}


def dim_text(d):
    return int(d) if d.is_Integer else render(d)


def self_check(entry, path, names, params, point, tensors, want):
    values = {p["name"]: evaluate(sympy.sympify(p["value"], locals={s: sym(s) for s in point}), point) for p in params}
    e = dict(entry, file=os.path.abspath(path))
    fn = torch_entry.make_callable(e, names, values, "cpu")
    with torch.no_grad():
        got = fn(*tensors)
    got = [got] if isinstance(got, torch.Tensor) else list(got)
    for a, b in zip(got, want):
        if not torch.allclose(a.reshape(b.shape).double(), b.double(), rtol=1e-5, atol=1e-6):
            raise RuntimeError(f"the torch entry {entry} differs from Model at {point}: an importer bug")


def write(op, path, out_dir):
    """DIR/<name>.yaml and DIR/<name>.py, both or neither."""
    out_dir = os.path.abspath(out_dir)
    exists = os.path.isdir(out_dir)
    tmp = tempfile.mkdtemp(prefix=".kevolve-import-", dir=out_dir if exists else os.path.dirname(out_dir))
    try:
        with open(os.path.join(tmp, op["name"] + ".yaml"), "w") as f:
            f.write(operator_yaml(op))
        shutil.copyfile(path, os.path.join(tmp, op["name"] + ".py"))
        if exists:
            for ext in (".py", ".yaml"):
                os.replace(os.path.join(tmp, op["name"] + ext), os.path.join(out_dir, op["name"] + ext))
            os.rmdir(tmp)
        else:
            os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return os.path.join(out_dir, op["name"] + ".yaml")


def import_one(path, name, scale, eval_mode, out_dir):
    """The YAML written for one file, or None where it is refused (stderr
    says why)."""
    try:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise Refusal(f"--name must be an identifier (it is the YAML's name and file stem), got '{name}'")
        if scale is not None and not 0 < scale <= 1:
            raise Refusal(f"--scale must be in (0, 1], got {scale}")
        if not os.path.isfile(path):
            raise Refusal("cannot open the file; expected a KernelBench-style Python file")
        torch.manual_seed(INITIAL_SEED)  # each file as if it were imported alone
        op = build_operator(path, name, scale, eval_mode)
    except (Refusal, SourceError, ShapeError) as e:
        print(f"error: {path}: {e}", file=sys.stderr, flush=True)
        return None
    return write(op, path, out_dir)


def main(argv):
    ap = argparse.ArgumentParser(prog="kevolve ops import")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--name")
    ap.add_argument("--scale", type=float)
    ap.add_argument("--out", default=".")
    ap.add_argument("--eval-mode", action="store_true")
    a = ap.parse_args(argv)
    names = {}
    refused = 0
    for path in a.files:
        name = a.name or default_name(path)
        if name in names:
            print(f"error: {path}: its operator name '{name}' is also that of {names[name]}; import it on its own "
                  "with --name", file=sys.stderr, flush=True)
            refused += 1
            continue
        names[name] = path
        yaml_path = import_one(path, name, a.scale, a.eval_mode, a.out)
        if yaml_path is None:
            refused += 1
        else:
            print(f"imported\t{path}\t{yaml_path}", flush=True)
    return 2 if refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
