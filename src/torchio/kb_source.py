"""A KernelBench-style file as a function of its size globals.

The file is executed statement by statement; right after a top-level
statement binds a global named in `overrides`, that global is replaced, so
the statements after it (`bias_shape = (out_channels, 1, 1)`) and the
functions that read it at call time (`get_inputs()`) see the new size.
"""
import ast
import re

# Globals that fix the module's structure rather than its size: kept as
# literals, never scaled or varied.
STRUCTURAL = re.compile(r"kernel|stride|padding|dilation|group|axis|reduce|_dim$|^dim_|pool|eps|momentum")
MIN_SIZE = 8  # smaller integer globals (channels 3, dim 1) stay literals


class SourceError(Exception):
    """The file is not an importable KernelBench-style file."""


class Source:
    def __init__(self, path):
        self.path = str(path)
        with open(self.path) as f:
            text = f.read()
        try:
            self.tree = ast.parse(text, self.path)
        except SyntaxError as e:
            raise SourceError(f"is not valid Python (line {e.lineno}: {e.msg})")
        self.code = [compile(ast.Module(body=[s], type_ignores=[]), self.path, "exec") for s in self.tree.body]
        self.bound = [self._bound_names(s) for s in self.tree.body]
        # Literal tuples of integers (input_shape = (32768,)): their items are
        # size globals of their own, named <name>_<index>.
        self.items = {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and isinstance(stmt.value, ast.Tuple) \
                    and all(isinstance(e, ast.Constant) and type(e.value) is int for e in stmt.value.elts):
                for i in range(len(stmt.value.elts)):
                    self.items[f"{stmt.targets[0].id}_{i}"] = (stmt.targets[0].id, i)

    @staticmethod
    def _bound_names(stmt):
        names = set()
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.add(n.id)
        return names

    def namespace(self, overrides=None):
        """The file's globals, with `overrides` applied as described above."""
        overrides = overrides or {}
        ns = {"__name__": "kv_kernelbench", "__file__": self.path}
        for code, bound in zip(self.code, self.bound):
            exec(code, ns)
            for n in bound & set(overrides):
                ns[n] = overrides[n]
            for item, (n, i) in self.items.items():
                if n in bound and item in overrides:
                    ns[n] = tuple(overrides[item] if j == i else x for j, x in enumerate(ns[n]))
        return ns

    def check(self, ns):
        import torch
        missing = []
        m = ns.get("Model")
        if not (isinstance(m, type) and issubclass(m, torch.nn.Module)):
            missing.append("'class Model(nn.Module)'")
        for f in ("get_inputs", "get_init_inputs"):
            if not callable(ns.get(f)):
                missing.append(f"'{f}()'")
        if missing:
            raise SourceError("has no " + ", no ".join(missing) +
                              " (expected a KernelBench-style file: class Model(nn.Module), get_inputs(), get_init_inputs())")

    def size_globals(self, ns):
        """{name: value} of the integer globals that size the problem."""
        out = {}
        for bound in self.bound:
            for n in sorted(bound):
                v = ns.get(n)
                if type(v) is int and v >= MIN_SIZE and not STRUCTURAL.search(n.lower()) and n not in out:
                    out[n] = v
                for item, (tn, i) in self.items.items():
                    if tn == n and ns[n][i] >= MIN_SIZE and not STRUCTURAL.search(n.lower()):
                        out[item] = ns[n][i]
        return out
