#!/usr/bin/python3
"""`kevolve ops import` of KernelBench-style files.

KernelBench: the 24 development problems (../shared/kernelbench beside the
repository, or $KEVOLVE_KERNELBENCH) are imported at --scale 0.1, each YAML
passes `kevolve ops validate`, and at every holdout shape the operator's
torch entry (src/eval/torch_entry.py, as the evaluator calls it) on inputs
drawn from the YAML's generators equals the file's own Model built at
those sizes with the same tensors loaded as its state, in fp64 and fp32.
Prints a table: class, bytes and flops at the timed shape, and whether a
builtin template (knowledge/templates/cpu/*.json `serves`) serves it.
BadInput: the files of tests/data/torch_import/ are refused (exit 2, the
file and the problem named, the output directory unchanged).

Run by CTest (tests kernelbench_import: class KernelBench, and
torch_import_refusals: class BadInput) with KEVOLVE_BIN, KEVOLVE_HOME and
KEVOLVE_TEST_DATA; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_import.py
"""
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import h5py
import torch
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve")
DATA = Path(os.environ.get("KEVOLVE_TEST_DATA") or ROOT / "tests" / "data")
HOME = Path(os.environ.get("KEVOLVE_HOME") or ROOT)
KERNELBENCH = Path(os.environ.get("KEVOLVE_KERNELBENCH") or ROOT / ".." / "shared" / "kernelbench")
sys.path.insert(0, str(HOME / "src" / "eval"))
sys.path.insert(0, str(HOME / "src" / "torchio"))
import torch_entry  # noqa: E402
from kb_source import Source  # noqa: E402  (the file's globals at other sizes)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_sweeps import imported_yamls  # noqa: E402

EXIT_OK, EXIT_BAD_INPUT = 0, 2
SIZEOF = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "int32": 4, "int64": 8}
TORCH_DTYPE = {"fp32": torch.float32, "fp64": torch.float64, "fp16": torch.float16, "bf16": torch.bfloat16,
               "int32": torch.int32, "int64": torch.int64}


def kevolve(*args, timeout=300):
    # One thread a process: the test runs two at a time on two cores.
    return subprocess.run([str(BIN), *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, KEVOLVE_HOME=str(HOME), OMP_NUM_THREADS="1"))


def describe(p):
    return f"exit {p.returncode}\n--- stdout ---\n{p.stdout[-3000:]}\n--- stderr ---\n{p.stderr[-3000:]}"


def listing(d):
    return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*"))


def value(expr, binding, types=None):
    """An operator expression (config/operators/README.md) at a binding."""
    text = str(expr)
    text = re.sub(r"sizeof\((\w+)\)", lambda m: str(SIZEOF[(types or {}).get(m.group(1), m.group(1))]), text)
    return eval(text.replace("^", "**"), {"floor": math.floor, "ceil": math.ceil, "min": min, "max": max,
                                          "__builtins__": {}}, dict(binding))


def draw(dist, shape, dtype, binding, gen):
    args = {k: value(v, binding) for k, v in dist.items() if k != "dist"}
    if dist["dist"] == "uniform":
        return (args["low"] + (args["high"] - args["low"]) * torch.rand(shape, generator=gen, dtype=torch.float64)).to(dtype)
    if dist["dist"] == "normal":
        return (args["mean"] + args["std"] * torch.randn(shape, generator=gen, dtype=torch.float64)).to(dtype)
    if dist["dist"] == "randint":
        return torch.randint(int(args["low"]), int(args["high"]), shape, generator=gen, dtype=dtype)
    raise AssertionError(f"unexpected distribution {dist}")


def served_by(op):
    """The builtin cpu templates whose `serves` matches the operator."""
    names = []
    dtypes = {d for v in op["variants"].values() for d in v.values()}
    for f in sorted((HOME / "knowledge" / "templates" / "cpu").glob("*.json")):
        t = json.loads(f.read_text())
        s, tmpl = t.get("serves", {}), op.get("template", {}) or {}
        ok = op["name"] in s.get("operators", []) or (
            s.get("class") == op["class"] and all(tmpl.get(k) == v for k, v in s.get("match", {}).items())
            and all(k in tmpl for k in s.get("requires", [])) and ("class" in s))
        if ok and dtypes & set(t.get("dtypes", [])):
            names.append(f.stem)
    return names


def compare_at(test, op, yaml_path, source_path, point, dtype):
    """The torch entry against the file's Model at one shape point."""
    binding = dict(point)
    binding.pop("name")
    types = {k: d for v in list(op["variants"].values())[:1] for k, d in v.items()}
    params = {p["name"]: value(p["value"], binding) for p in op.get("params", [])}
    gen = torch.Generator().manual_seed(1234)
    tensors, names = [], []
    for t in op["inputs"]:
        kind = types.get(t["dtype"], t["dtype"])
        tdt = dtype if kind.startswith(("fp", "bf")) else TORCH_DTYPE[kind]
        shape = [int(value(d, binding)) for d in t["shape"]]
        tensors.append(draw(op["generators"][t["name"]][0], shape, tdt, binding, gen))
        names.append(t["name"])
    entry = dict(op["torch"], file=str(Path(yaml_path).parent / op["torch"]["file"]))
    got = torch_entry.make_callable(entry, names, params, "cpu", float_dtype=dtype)(*tensors)
    got = [got] if isinstance(got, torch.Tensor) else list(got)

    # The file's own Model at these sizes, its state loaded from the same tensors.
    ns = Source(source_path).namespace(binding)
    model = ns["Model"](*ns["get_init_inputs"]())
    if op["torch"].get("eval"):
        model.eval()
    model = model.to(dtype)
    weights = op["torch"].get("weights", {})
    state = {weights[n]: t for n, t in zip(names, tensors) if n in weights}
    missing, unexpected = model.load_state_dict(state, strict=False)
    test.assertFalse(unexpected, yaml_path)
    own = dict(model.state_dict())
    for k in missing:
        test.assertFalse(own[k].dtype.is_floating_point, f"{yaml_path}: state '{k}' is no operator input")
    forward_in = [t for n, t in zip(names, tensors) if n not in weights]
    # The YAML's input shapes are the file's own at this point.
    file_inputs = ns["get_inputs"]()
    test.assertEqual([tuple(t.shape) for t in forward_in], [tuple(t.shape) for t in file_inputs], yaml_path)
    with torch.no_grad():
        want = model(*forward_in)
    want = [want] if isinstance(want, torch.Tensor) else list(want)
    tol = {torch.float64: (1e-12, 1e-10), torch.float32: (1e-6, 1e-5)}[dtype]
    for o, a, b in zip(op["outputs"], got, want):
        test.assertEqual(list(a.shape), [int(value(d, binding)) for d in o["shape"]], f"{yaml_path} {point}")
        test.assertTrue(torch.allclose(a.reshape(b.shape), b, atol=tol[0], rtol=tol[1]),
                        f"{yaml_path} {point['name']} {dtype}: max diff {(a.reshape(b.shape) - b).abs().max()}")


@unittest.skipUnless(KERNELBENCH.is_dir(), f"no KernelBench development set at {KERNELBENCH} "
                                           "(set KEVOLVE_KERNELBENCH to its folder)")
class KernelBench(unittest.TestCase):
    BATCH_NORM = {"33_Gemm_Scale_BatchNorm.py", "72_ConvTranspose3d_BatchNorm_AvgPool_AvgPool.py"}

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "ops"
        cls.files = sorted(glob.glob(str(KERNELBENCH / "level*" / "*.py")))
        # All 24 in one call, as a user imports a folder, as written (the two
        # with a BatchNorm in training mode: batch statistics); those two
        # again with --eval-mode (running statistics) into a folder of their own.
        cls.all = kevolve("ops", "import", *cls.files, "--scale", "0.1", "--out", cls.out)
        again = [f for f in cls.files if Path(f).name in cls.BATCH_NORM]
        cls.again = kevolve("ops", "import", *again, "--scale", "0.1", "--eval-mode", "--out", Path(cls.tmp.name) / "eval")
        cls.yamls = imported_yamls(cls.all.stdout)
        cls.eval_yamls = {Path(f).name: y for f, y in imported_yamls(cls.again.stdout).items()}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def imported(self):
        for f in self.files:
            self.assertIn(f, self.yamls, f"{f}\n{describe(self.all)}\n{describe(self.again)}")
            yaml_path = self.yamls[f]
            yield f, yaml_path, yaml.safe_load(yaml_path.read_text())

    def test_one_call_imports_the_folder(self):
        self.assertEqual(self.all.returncode, EXIT_OK, describe(self.all))
        self.assertIn(f"imported 24 of 24 files into {self.out}", self.all.stdout)
        self.assertNotIn("error: ", self.all.stderr)
        self.assertEqual(self.again.returncode, EXIT_OK, describe(self.again))
        self.assertEqual(sorted(self.eval_yamls), sorted(self.BATCH_NORM))

    def test_all_24_import(self):
        self.assertEqual(len(self.files), 24, self.files)
        self.assertEqual(len(list(self.imported())), 24)

    def test_each_keeps_its_traced_graph(self):
        """`graph.ops`: the forward's aten ops; `graph.main`: the op that gave the class."""
        mains = {}
        for f, _, op in self.imported():
            g = op.get("graph")
            self.assertTrue(g and g["ops"] and all(o.startswith("aten::") for o in g["ops"]), (f, g))
            if "main" in g:
                self.assertIn(g["main"], g["ops"])
            mains[Path(f).stem] = g.get("main")
        self.assertEqual(mains["9_Matmul_Subtract_Multiply_ReLU"], "aten::addmm")
        self.assertIn(mains["54_conv_standard_3D__square_input__square_kernel"], ("aten::convolution", "aten::conv3d"))
        self.assertIn(mains["44_Average_Pooling_1D"], ("aten::avg_pool1d", "aten::avg_pool2d"))  # 1-D pools run as 2-D

    def test_a_chain_no_one_template_covers_is_a_sequence_of_parts(self):
        """Level-2 72 (transposed conv3d, batch norm, two average pools) as
        written: the convolution, the batch norm with the batch's statistics,
        then each pool, the intermediates between them in the workspace; with
        --eval-mode the batch norm (running statistics) fuses into the
        convolution's expression."""
        f, _, op = next((f, y, o) for f, y, o in self.imported() if Path(f).stem.startswith("72_"))
        self.assertEqual(op["class"], "sequence", op.get("graph"))
        self.assertEqual([p["class"] for p in op["parts"]], ["conv", "row_reduction", "pooling", "pooling"])
        bn = dict(op["parts"][1]["template"])
        self.assertEqual(float(bn.pop("eps")), 1e-05)  # PyYAML reads 1e-05 (YAML 1.2's float) as a string
        self.assertEqual(bn, {"reduction": "batch_norm", "x": "t0", "gamma": "batch_norm_weight",
                              "beta": "batch_norm_bias"})
        self.assertIs(op["torch"]["eval"], False)
        self.assertEqual([t["name"] for t in op["intermediates"]], ["t0", "t1", "t2"])
        self.assertEqual(op["parts"][-1]["outputs"], [op["outputs"][0]["name"]])
        ev = yaml.safe_load(self.eval_yamls["72_ConvTranspose3d_BatchNorm_AvgPool_AvgPool.py"].read_text())
        self.assertEqual([p["class"] for p in ev["parts"]], ["conv", "pooling", "pooling"])
        self.assertIn("batch_norm_running_var", ev["parts"][0]["template"]["expr"])
        self.assertEqual([t["name"] for t in ev["intermediates"]], ["t0", "t1"])

    def test_a_gemm_then_a_training_batch_norm_is_two_parts(self):
        """Level-2 33 (linear, scale, batch norm in training mode): the GEMM
        with its scale epilogue, then the batch norm over the batch's rows."""
        f, _, op = next((f, y, o) for f, y, o in self.imported() if Path(f).stem.startswith("33_"))
        self.assertEqual([p["class"] for p in op["parts"]], ["matmul", "row_reduction"], op.get("parts"))
        self.assertEqual(op["parts"][0]["template"]["expr"], "((acc + gemm_bias) * scale)")
        self.assertEqual(op["parts"][1]["template"]["reduction"], "batch_norm")
        self.assertEqual(op["graph"]["ops"], ["aten::addmm", "aten::mul", "aten::native_batch_norm"])

    def test_a_sweep_says_once_what_no_template_serves(self):
        """A builtin sweep of an imported operator no class template serves ends its task
        when it starts, its stop reason naming the op of the graph no class covers: no
        skipped nodes."""
        f, yaml_path, op = next((f, y, o) for f, y, o in self.imported() if Path(f).stem == "97_ScaledDotProductAttention")
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "s.yaml"
            cfg.write_text(f"""sweep:
  operators: [{yaml_path}]
  backends: [cpu]
  synthesizer: builtin
search:
  stop: {{max_evaluations: 6}}
evaluator:
  torch_baselines: off
""")
            p = kevolve("run", cfg, "--store", Path(d) / "s.h5")
            self.assertEqual(p.returncode, EXIT_OK, describe(p))
            why = (f"no cpu class template serves operator {op['name']}: its graph has {op['graph']['main']} "
                   f"(class {op['class']}), which no cpu class template covers")
            self.assertEqual(p.stderr.count(why), 1, describe(p))
            with h5py.File(Path(d) / "s.h5", "r") as h:
                g = h["tasks/0"]
                stop = g.attrs["stop_reason"]
                self.assertIn(why, stop.decode() if isinstance(stop, bytes) else stop)
                self.assertEqual(len(g["nodes"]), 1)  # the root only

    def test_each_validates(self):
        paths = [y for _, y, _ in self.imported()]
        with ThreadPoolExecutor(2) as pool:
            for p in pool.map(lambda y: kevolve("ops", "validate", y), paths):
                self.assertEqual(p.returncode, EXIT_OK, describe(p))

    def test_the_torch_entry_equals_the_model_at_the_holdout_shapes(self):
        for f, yaml_path, op in self.imported():
            for point in op["holdout_shapes"]:
                for dtype in (torch.float64, torch.float32):
                    compare_at(self, op, yaml_path, f, point, dtype)

    def test_table(self):
        rows = []
        for f, yaml_path, op in self.imported():
            timed = dict(op["shapes"][0])
            timed.pop("name")
            types = next(iter(op["variants"].values()))
            b, fl = value(op["bytes"], timed, types), value(op["flops"], timed)
            self.assertGreater(b, 0)
            self.assertGreater(fl, 0)
            tmpl = ", ".join(f"{k}: {v}" for k, v in (op.get("template") or {}).items())
            rows.append((op["name"], op["class"], tmpl[:40], f"{b / 1e6:.1f} MB", f"{fl / 1e9:.3f} GFLOP",
                         ", ".join(served_by(op)) or "no"))
        widths = [max(len(r[i]) for r in rows + [("name", "class", "template", "bytes", "flops", "served")])
                  for i in range(6)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(("name", "class", "template", "bytes", "flops", "served"), widths))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
        print("\nKernelBench development set at --scale 0.1 (bytes, flops at the timed shape):\n" + "\n".join(lines),
              file=sys.stderr)


class BadInput(unittest.TestCase):
    CASES = ["no_model.py", "no_get_inputs.py", "forward_raises.py", "nondeterministic.py", "uint8_input.py",
             "complex_input.py", "too_large.py", "dropout.py"]

    def test_each_is_refused_and_nothing_is_written(self):
        files = [DATA / "torch_import" / name for name in self.CASES]
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "keep.txt").write_text("x")
            before = listing(d)
            p = kevolve("ops", "import", *files, "--out", d)  # one call: each refused on its own
            self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
            self.assertIn(f"imported 0 of {len(files)} files", p.stdout)
            self.assertEqual(listing(d), before)
            for f in files:
                with self.subTest(file=f.name):
                    expect = f.read_text().splitlines()[0].removeprefix("# expect: ")
                    at = p.stderr.find(f"error: {f}:")
                    self.assertGreaterEqual(at, 0, describe(p))
                    end = p.stderr.find("\nerror: ", at + 1)
                    self.assertIn(expect, p.stderr[at:end if end >= 0 else None])
        for name in ("no_model.py", "nondeterministic.py"):  # refused early and late
            with tempfile.TemporaryDirectory() as d, self.subTest(file=name):
                missing = Path(d) / "new"
                p = kevolve("ops", "import", DATA / "torch_import" / name, "--out", missing)
                self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
                self.assertIn(f"error: {DATA / 'torch_import' / name}:", p.stderr)
                self.assertFalse(missing.exists())

    def test_a_name_for_several_files_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            f = DATA / "torch_import" / "class_targets.py"
            p = kevolve("ops", "import", f, f, "--name", "ce_loss", "--out", d)
            self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
            self.assertIn("--name names one file's operator; got 2 files", p.stderr)
            self.assertEqual(listing(d), [])

    def test_eval_mode_imports_dropout_and_batchnorm(self):
        for name in ("dropout.py", "batchnorm_train.py"):
            with tempfile.TemporaryDirectory() as d, self.subTest(file=name):
                p = kevolve("ops", "import", DATA / "torch_import" / name, "--eval-mode", "--out", d)
                self.assertEqual(p.returncode, EXIT_OK, describe(p))
                op = yaml.safe_load((Path(d) / ("kb_" + name[:-3] + ".yaml")).read_text())
                self.assertIs(op["torch"]["eval"], True)

    def test_a_batch_norm_in_training_mode_normalizes_by_the_batch(self):
        """As written (no --eval-mode) a BatchNorm2d uses the batch's statistics: class
        row_reduction with reduction batch_norm, the module run in training mode, and
        the torch entry equal to the model (whose running statistics it updates) at
        the holdout shapes."""
        with tempfile.TemporaryDirectory() as d:
            f = DATA / "torch_import" / "batchnorm_train.py"
            p = kevolve("ops", "import", f, "--out", d)
            self.assertEqual(p.returncode, EXIT_OK, describe(p))
            y = Path(d) / "kb_batchnorm_train.yaml"
            op = yaml.safe_load(y.read_text())
            self.assertEqual(op["class"], "row_reduction")
            keys = dict(op["template"])
            self.assertEqual(float(keys.pop("eps")), 1e-05)  # PyYAML reads 1e-05 (YAML 1.2's float) as a string
            self.assertEqual(keys, {"reduction": "batch_norm", "x": "x", "gamma": "bn_weight", "beta": "bn_bias"})
            self.assertIs(op["torch"]["eval"], False)
            self.assertEqual(op["graph"]["ops"], ["aten::native_batch_norm"])  # not its num_batches_tracked += 1
            for point in op["holdout_shapes"]:
                compare_at(self, op, y, f, point, torch.float64)

    def test_integer_targets_stay_integer(self):
        with tempfile.TemporaryDirectory() as d:
            f = DATA / "torch_import" / "class_targets.py"
            p = kevolve("ops", "import", f, "--name", "ce_loss", "--out", d)
            self.assertEqual(p.returncode, EXIT_OK, describe(p))
            op = yaml.safe_load((Path(d) / "ce_loss.yaml").read_text())
            targets = next(t for t in op["inputs"] if t["name"] == "targets")
            self.assertEqual(targets["dtype"], "int64")
            self.assertEqual(op["generators"]["targets"], [{"dist": "randint", "low": 0, "high": "num_classes"}])
            for point in op["holdout_shapes"]:
                compare_at(self, op, Path(d) / "ce_loss.yaml", f, point, torch.float64)

    def test_a_name_that_is_no_identifier_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            p = kevolve("ops", "import", DATA / "torch_import" / "class_targets.py", "--name", "1-bad", "--out", d)
            self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
            self.assertIn("--name must be an identifier", p.stderr)
            self.assertEqual(listing(d), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
