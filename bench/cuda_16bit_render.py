#!/usr/bin/env python3
"""Renders a grid of CUDA template points for bench/cuda_16bit.py and
compiles each into a shared library (nvcc -O3 for sm_90 and the shared CUDA
runtime, as the evaluator compiles; PyTorch's process has the runtime loaded).

usage: cuda_16bit_render.py KEVOLVE_BIN POINTS_JSON DEST [--jobs N] [--no-compile] [--home DIR --label L]
  POINTS_JSON: {"<op>": {"variants": [...], "template": "cuda/<name>" (optional),
                "points": [{param: value, ...}, ...]}, ...}; {} is the template's
  defaults. DEST/manifest.json lists every kernel: op, variant, template, params, file
  (added to an existing manifest). --home DIR: render DIR's templates (e.g. an
  older checkout's, to time them beside), each kernel labelled L.
Run from the repository root (or a carry of it: KEVOLVE_HOME is the parent of bench/).
"""
import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    args = sys.argv[1:]
    jobs, compile_ = os.cpu_count() or 2, True
    if "--jobs" in args:
        i = args.index("--jobs")
        jobs = int(args[i + 1])
        del args[i:i + 2]
    if "--no-compile" in args:
        args.remove("--no-compile")
        compile_ = False
    home, label = ROOT, ""
    for opt in ("--home", "--label"):
        if opt in args:
            i = args.index(opt)
            if opt == "--home":
                home = os.path.abspath(args[i + 1])
            else:
                label = args[i + 1]
            del args[i:i + 2]
    kevolve, points_file, dest = args
    os.makedirs(dest, exist_ok=True)
    grid = json.load(open(points_file))
    env = dict(os.environ, KEVOLVE_HOME=home)
    mpath = os.path.join(dest, "manifest.json")
    old = json.load(open(mpath)) if os.path.exists(mpath) else []
    manifest, seen, sources = [], set(), {}
    for op, spec in grid.items():
        if op.startswith("_"):
            continue
        for variant in spec["variants"]:
            for p in spec["points"]:
                cmd = [kevolve, "kb", "render", spec.get("op", op), "--backend", "cuda", "--variant", variant,
                       "--params", json.dumps(p)]
                if "template" in spec:
                    cmd += ["--template", spec["template"]]
                r = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if r.returncode != 0:
                    print(f"render {op} {variant} {p}: {r.stderr.strip()[:300]}", file=sys.stderr)
                    continue
                src = r.stdout
                head = src.split("\n", 1)[0]  # // kevolve-template: <name> <params>
                _, _, name, params = head.split(" ", 3)
                key = (spec.get("op", op), variant, src)
                if key in seen:  # a point that renders as another (a parameter the path ignores)
                    continue
                seen.add(key)
                # One library per distinct source: the variants of a point share it
                # (a kernel dispatches on the tensors' dtype).
                digest = hashlib.sha1(src.encode()).hexdigest()[:12]
                stem = f"{spec.get('op', op)}.{digest}"
                if digest not in sources:
                    sources[digest] = stem
                    open(os.path.join(dest, stem + ".cu"), "w").write(src)
                manifest.append({"op": spec.get("op", op), "variant": variant, "template": name,
                                 "params": json.loads(params), "file": stem + ".so", "source": stem + ".cu",
                                 "label": label})

    def build(m):
        so = os.path.join(dest, m["file"])
        cu = os.path.join(dest, m["source"])
        if os.path.exists(so) and os.path.getmtime(so) >= os.path.getmtime(cu):
            return m, ""
        cmd = ["nvcc", "-std=c++17", "-O3", "-gencode", "arch=compute_90,code=sm_90", "-Xcompiler",
               "-fPIC", "-shared", "-cudart", "shared", "-Xptxas", "-v", "-I", os.path.join(ROOT, "src", "abi"), "-Xlinker", "--as-needed", "-lcuda", cu,
               "-o", so]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return m, (r.stderr if r.returncode else "") + ("" if r.returncode == 0 else f"exit {r.returncode}")

    if compile_:
        firsts = {m["source"]: m for m in manifest}
        errors = {}
        with ThreadPoolExecutor(jobs) as ex:
            for m, err in ex.map(build, firsts.values()):
                if err:
                    print(f"compile {m['source']}: {err[-400:]}", file=sys.stderr)
                    errors[m["source"]] = err[-400:]
        for m in manifest:
            if m["source"] in errors:
                m["compile_error"] = errors[m["source"]]
    json.dump(old + manifest, open(mpath, "w"), indent=1)
    print(f"{len(manifest)} kernels in {dest}")


if __name__ == "__main__":
    main()
