#!/usr/bin/python3
"""Command-line contract of the kevolve binary: exit codes, messages on
stderr, JSON on stdout, and nothing written when the input is bad.

Run by CTest (test cli_contract) with KEVOLVE_BIN, KEVOLVE_HOME,
KEVOLVE_CACHE_DIR, KEVOLVE_WORKER and KEVOLVE_TEST_DATA set; by hand:
    KEVOLVE_BIN=build/kevolve .venv/bin/python tests/cli/test_cli.py
Exit codes of kevolve: 0 ok, 1 verdict other than ok, 2 bad input or usage,
3 internal error.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("KEVOLVE_BIN") or ROOT / "build" / "kevolve")
DATA = Path(os.environ.get("KEVOLVE_TEST_DATA") or ROOT / "tests" / "data")
HOME = Path(os.environ.get("KEVOLVE_HOME") or ROOT)
CATALOG = HOME / "config" / "operators"
BAD = DATA / "bad_operators"

EXIT_OK, EXIT_VERDICT, EXIT_BAD_INPUT = 0, 1, 2


def kevolve(*args, cwd=None, env=None, timeout=120):
    """Runs kevolve; returns the CompletedProcess (text mode)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([str(BIN), *map(str, args)], cwd=cwd or ROOT, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def describe(p):
    return f"exit {p.returncode}\n--- stdout ---\n{p.stdout[-3000:]}\n--- stderr ---\n{p.stderr[-3000:]}"


def bad_yaml_expectation(path):
    """The '# expect: ...' text and the line of the '# <-- error' marker."""
    expect, line = None, None
    for n, text in enumerate(path.read_text().splitlines(), start=1):
        if text.startswith("# expect: "):
            expect = text[len("# expect: "):]
        if "# <-- error" in text:
            line = n
    return expect, line


def listing(d):
    return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*"))


class OpsValidateRunsThePyTorchVersion(unittest.TestCase):
    """`kevolve ops validate` runs an operator's `torch` at its holdout shapes (the
    project's PyTorch): each broken one in tests/data/bad_torch/ exits 2 naming the
    file and what is wrong; an operator from PyTorch alone validates."""
    CASES = {"nondeterministic": "non-deterministic: two runs on the same inputs",
             "wrong_shape": "has shape [37, 3], the operator's is [37, 1003]",
             "wrong_dtype": "is torch.float64, the operator's is fp32",
             "raises": "AttributeError: module 'torch' has no attribute 'no_such_function'",
             "disagrees": "disagrees with its C++ reference at shape"}

    def test_broken_pytorch_versions_exit_2_and_say_why(self):
        for name, why in self.CASES.items():
            f = DATA / "bad_torch" / f"{name}.yaml"
            with self.subTest(name):
                p = kevolve("ops", "validate", f)
                self.assertEqual(p.returncode, 2, describe(p))
                self.assertIn(str(f), p.stderr)
                self.assertIn(why, p.stderr)

    def test_an_operator_from_pytorch_alone_validates(self):
        for f in (ROOT / "config" / "operators" / "swiglu.yaml", DATA / "operators" / "ts_swiglu.yaml"):
            p = kevolve("ops", "validate", f)
            self.assertEqual(p.returncode, 0, describe(p))
            self.assertIn("ok:", p.stdout)


class Help(unittest.TestCase):
    def test_help_exits_0_and_names_the_commands(self):
        p = kevolve("--help")
        self.assertEqual(p.returncode, EXIT_OK, describe(p))
        self.assertIn("usage: kevolve", p.stdout)
        for cmd in ("eval", "ops", "doctor"):
            self.assertRegex(p.stdout, rf"(?m)^\s+{cmd}\s", cmd)

    def test_command_help_lists_its_options(self):
        p = kevolve("eval", "--help")
        self.assertEqual(p.returncode, EXIT_OK, describe(p))
        for opt in ("--op", "--kernel", "--backend", "--json", "--budget"):
            self.assertIn(opt, p.stdout)

    def test_no_command_is_a_usage_error(self):
        p = kevolve()
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn("no command given", p.stderr)

    def test_unknown_command_exits_2(self):
        p = kevolve("frobnicate")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn("error: unknown command 'frobnicate'", p.stderr)
        self.assertEqual(p.stdout, "")


class OpsList(unittest.TestCase):
    def test_lists_every_catalog_operator(self):
        p = kevolve("ops", "list")
        self.assertEqual(p.returncode, EXIT_OK, describe(p))
        rows = {line.split()[0]: line.split() for line in p.stdout.splitlines()[1:-1] if line.strip()}
        self.assertIn("softmax", rows)
        self.assertEqual(rows["softmax"][1], "row_reduction")
        self.assertIn("fp32", rows["softmax"][2].split(","))
        names = sorted(f.stem for f in CATALOG.glob("*.yaml"))
        self.assertEqual(sorted(rows), names)
        self.assertRegex(p.stdout.splitlines()[-1], rf"^{len(names)} operators in ")


class OpsValidate(unittest.TestCase):
    def test_every_catalog_file_is_valid(self):
        files = sorted(CATALOG.glob("*.yaml"))
        self.assertGreaterEqual(len(files), 10)
        for f in files:
            with self.subTest(file=f.name):
                p = kevolve("ops", "validate", "--no-compile", f)
                self.assertEqual(p.returncode, EXIT_OK, describe(p))
                self.assertIn(f"ok: {f} ({f.stem}, ", p.stdout)
                self.assertEqual(p.stderr, "")

    def test_catalog_file_with_compiling_reference_and_baseline(self):
        f = CATALOG / "softmax.yaml"
        p = kevolve("ops", "validate", f, timeout=300)
        self.assertEqual(p.returncode, EXIT_OK, describe(p))
        self.assertIn(f"ok: {f} (softmax, 2 variants, ", p.stdout)

    def test_each_bad_yaml_exits_2_with_file_line_and_key(self):
        files = [f for f in sorted(BAD.glob("*.yaml")) if bad_yaml_expectation(f)[0]]
        self.assertGreaterEqual(len(files), 20)
        for f in files:
            expect, line = bad_yaml_expectation(f)
            with self.subTest(file=f.name):
                self.assertIsNotNone(line, f"{f}: no '# <-- error' marker")
                p = kevolve("ops", "validate", f)
                self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
                self.assertTrue(p.stderr.startswith(f"error: {f}:{line}: {expect}"), describe(p))
                self.assertNotIn("ok:", p.stdout)

    def test_one_bad_file_among_good_ones_fails_the_run_but_reports_all(self):
        good, bad = CATALOG / "softmax.yaml", BAD / "missing_flops.yaml"
        p = kevolve("ops", "validate", "--no-compile", good, bad, CATALOG / "layernorm.yaml")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn(f"ok: {good} ", p.stdout)
        self.assertIn(f"ok: {CATALOG / 'layernorm.yaml'} ", p.stdout)
        self.assertIn(f"error: {bad}:", p.stderr)

    def test_missing_file_exits_2(self):
        p = kevolve("ops", "validate", "--no-compile", BAD / "no_such_file.yaml")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn("no_such_file.yaml", p.stderr)

    def test_a_directory_instead_of_a_file_exits_2(self):
        p = kevolve("ops", "validate", CATALOG)
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn(f"error: {CATALOG}", p.stderr)

    def test_reference_that_does_not_compile_exits_2_and_writes_nothing(self):
        f = BAD / "reference_does_not_compile.yaml"
        ref = BAD / "reference_does_not_compile" / "reference.cpp"
        with tempfile.TemporaryDirectory() as cwd, tempfile.TemporaryDirectory() as cache, \
                tempfile.TemporaryDirectory() as tmp:
            p = kevolve("ops", "validate", f, cwd=cwd, env={"KEVOLVE_CACHE_DIR": cache, "TMPDIR": tmp},
                        timeout=300)
            self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
            self.assertTrue(p.stderr.startswith(f"error: {f}: 'reference' ({ref}) does not compile"), describe(p))
            self.assertRegex(p.stderr, r"error: expected .* before .return.", "the compiler's diagnostic is shown")
            self.assertNotIn("ok:", p.stdout)
            self.assertEqual(listing(cwd), [], "files left in the working directory")
            self.assertEqual(listing(cache), [], "files left in KEVOLVE_CACHE_DIR")
            self.assertEqual(listing(tmp), [], "files left in TMPDIR")

    def test_no_compile_skips_the_compile_step(self):
        f = BAD / "reference_does_not_compile.yaml"
        p = kevolve("ops", "validate", "--no-compile", f)
        self.assertEqual(p.returncode, EXIT_OK, describe(p))


class EvalUsage(unittest.TestCase):
    def test_missing_kernel_file_exits_2_naming_kernel(self):
        p = kevolve("eval", "--op", "softmax", "--kernel", "/nonexistent")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn("--kernel", p.stderr)
        self.assertIn("/nonexistent", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_a_directory_as_kernel_exits_2_naming_kernel(self):
        p = kevolve("eval", "--op", "softmax", "--kernel", DATA / "kernels")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn("--kernel", p.stderr)

    def test_a_directory_as_operator_exits_2(self):
        p = kevolve("eval", "--op", DATA / "operators", "--kernel", DATA / "kernels" / "softmax_good.cpp")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn(f"error: {DATA / 'operators'}", p.stderr)

    def test_unknown_operator_exits_2(self):
        p = kevolve("eval", "--op", "no_such_op", "--kernel", "X")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn("unknown operator 'no_such_op'", p.stderr)

    def test_unavailable_backend_exits_2(self):
        p = kevolve("eval", "--backend", "cuda", "--op", "softmax", "--kernel", DATA / "kernels" / "softmax_good.cpp")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn("--backend", p.stderr)
        self.assertIn("cuda", p.stderr)

    def test_mtia_emu_example_is_accepted(self):
        ex = ROOT / "knowledge" / "examples" / "mtia_emu" / "softmax.cpp"
        p = kevolve("eval", "--backend", "mtia_emu", "--op", DATA / "operators" / "ts_softmax.yaml", "--kernel", ex,
                    "--trials", "2")
        self.assertEqual(p.returncode, 0, describe(p))
        self.assertIn("on mtia_emu", p.stdout)
        self.assertIn("bound:", p.stdout)

    def test_missing_required_option_exits_2(self):
        p = kevolve("eval", "--op", "softmax")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn("kernel", p.stderr)

    def test_bad_operator_file_exits_2_with_its_error(self):
        f = BAD / "shape_missing_symbol.yaml"
        p = kevolve("eval", "--op", f, "--kernel", DATA / "kernels" / "softmax_good.cpp")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn(f"error: {f}:", p.stderr)


class KbRender(unittest.TestCase):
    """kevolve kb render: a builtin template's kernel at a parameter point, which kevolve eval accepts."""

    def test_a_rendered_point_is_the_template_at_those_parameters_and_evaluates(self):
        op = DATA / "operators" / "ts_dot_interaction.yaml"
        p = kevolve("kb", "render", op, "--backend", "mtia_emu", "--variant", "bf16",
                    "--params", '{"fan": 1, "slots": 3, "stack": 2}')
        self.assertEqual(p.returncode, 0, describe(p))
        first = p.stdout.splitlines()[0]
        self.assertTrue(first.startswith("// kevolve-template: mtia_emu/dot_interaction {"), first)
        self.assertIn('"fan":1', first)
        self.assertIn('"slots":3', first)
        self.assertIn('"out_units":1', first)  # the default where none was given
        self.assertIn("#define KVP_FAN 1", p.stdout)
        with tempfile.TemporaryDirectory() as d:
            k = Path(d) / "k.cpp"
            k.write_text(p.stdout)
            e = kevolve("eval", "--backend", "mtia_emu", "--op", op, "--variant", "bf16", "--kernel", k, "--trials", "2")
            self.assertEqual(e.returncode, 0, describe(e))

    def test_bad_parameters_template_and_variant_exit_2_naming_them(self):
        cases = [(["--params", '{"fan": 7}'], "parameter 'fan' takes 0, 1, 2, got 7"),
                 (["--params", '{"nope": 1}'], "has no parameter 'nope'"),
                 (["--params", "[1]"], "--params: expected a JSON object"),
                 (["--template", "cpu/row_softmax"], "templates that do: mtia_emu/dot_interaction"),
                 (["--variant", "fp8"], "has no variant 'fp8'")]
        for extra, message in cases:
            p = kevolve("kb", "render", "dot_interaction", "--backend", "mtia_emu", *extra)
            self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
            self.assertIn(message, p.stderr)
            self.assertEqual(p.stdout, "")
        p = kevolve("kb", "render", "dot_interaction")
        self.assertEqual(p.returncode, EXIT_BAD_INPUT, describe(p))
        self.assertIn("--backend", p.stderr)


class EvalVerdicts(unittest.TestCase):
    OP = DATA / "operators" / "t_softmax.yaml"

    def evaluate(self, kernel):
        p = kevolve("eval", "--op", self.OP, "--kernel", DATA / "kernels" / kernel, "--json", "--budget", "0.05",
                    timeout=180)
        try:
            verdict = json.loads(p.stdout)
        except json.JSONDecodeError:
            self.fail("stdout is not one JSON object\n" + describe(p))
        return p, verdict

    def test_good_kernel_is_ok_with_per_shape_results(self):
        p, v = self.evaluate("softmax_good.cpp")
        self.assertEqual(p.returncode, EXIT_OK, describe(p))
        self.assertEqual(v["status"], "ok", v.get("reason"))
        self.assertGreater(v["fitness"], 0)
        self.assertEqual(v["operator"], "t_softmax")
        self.assertEqual(v["variant"], "fp32")
        shapes = {s["shape"]: s for s in v["shapes"]}
        self.assertEqual(set(shapes), {"rows_1024", "rows_4096", "odd_tail", "single_row"})
        for name, s in shapes.items():
            with self.subTest(shape=name):
                self.assertEqual(s["status"], "ok", s["reason"])
                self.assertEqual(s["holdout"], name in ("odd_tail", "single_row"))
                self.assertLessEqual(s["max_error_ratio"], 1.0)
                if not s["holdout"]:
                    self.assertGreater(s["candidate"]["runs"], 0)
                    self.assertGreater(s["speedup"], 0)
        # bytes from the YAML formula 2 * B * N * sizeof(T), B=256 N=1024 fp32
        self.assertEqual(shapes["rows_1024"]["bytes"], 2 * 256 * 1024 * 4)

    def test_nan_output_is_a_wrong_result_with_exit_1(self):
        p, v = self.evaluate("cheats/r15_nan_output.cpp")
        self.assertEqual(p.returncode, EXIT_VERDICT, describe(p))
        self.assertEqual(v["status"], "wrong_result")
        self.assertEqual(v["fitness"], 0)
        self.assertIn("nan", v["reason"].lower())
        statuses = [s["status"] for s in v["shapes"]]
        self.assertIn("wrong_result", statuses)
        self.assertNotIn("ok", statuses)


class Doctor(unittest.TestCase):
    def test_json_reports_a_measured_cpu_roofline(self):
        p = kevolve("doctor", "--json", timeout=300)
        self.assertEqual(p.returncode, EXIT_OK, describe(p))
        j = json.loads(p.stdout)
        self.assertGreater(j["cpu"]["peak_bandwidth_gbs"], 0)
        self.assertGreater(j["cpu"]["peak_gflops_fp32"], 0)
        self.assertIn("cpu", j["backends"])
        self.assertTrue(j["tools"]["g++"], "g++ is needed to evaluate anything")


def main():
    if not (BIN.is_file() and os.access(BIN, os.X_OK)):
        print(f"kevolve binary not found: {BIN} (set KEVOLVE_BIN)", file=sys.stderr)
        return 1
    result = unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2, exit=False).result
    print(f"cli_contract: {result.testsRun} tests, {len(result.failures)} failures, {len(result.errors)} errors",
          file=sys.stderr)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
