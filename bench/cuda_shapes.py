#!/usr/bin/env python3
"""Writes a kevolve data root (KEVOLVE_HOME) whose operators time the shapes
of bench/cuda_shapes.yaml instead of their own: the shapes lists are
replaced, everything else (holdout shapes, tolerances, references,
baselines, templates) is the repository's.

usage: cuda_shapes.py REPO_ROOT DEST [SHAPES_YAML]
  SHAPES_YAML (default bench/cuda_shapes.yaml): operator -> list of shape
  points, or operator -> {shapes: [...], reference_max_flops: X} (the
  operator's reference_max_flops replaced too).
"""
import os
import shutil
import sys

import yaml


def main():
    root, dest = sys.argv[1], sys.argv[2]
    src = sys.argv[3] if len(sys.argv) > 3 else os.path.join(root, "bench", "cuda_shapes.yaml")
    shapes = yaml.safe_load(open(src))
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(os.path.join(dest, "src"))
    for d in ("config", "knowledge", "data"):
        shutil.copytree(os.path.join(root, d), os.path.join(dest, d))
    shutil.copytree(os.path.join(root, "src", "abi"), os.path.join(dest, "src", "abi"))
    # The PyTorch baseline runner the evaluator starts (data_root()/src/eval).
    os.makedirs(os.path.join(dest, "src", "eval"))
    for f in ("torch_baseline.py", "torch_entry.py"):
        shutil.copy(os.path.join(root, "src", "eval", f), os.path.join(dest, "src", "eval"))
    ops = os.path.join(dest, "config", "operators")
    for op, pts in shapes.items():
        path = os.path.join(ops, op + ".yaml")
        doc = yaml.safe_load(open(path))
        if isinstance(pts, dict):
            if "reference_max_flops" in pts:
                doc["reference_max_flops"] = pts["reference_max_flops"]
            pts = pts["shapes"]
        doc["shapes"] = pts
        with open(path, "w") as f:
            yaml.safe_dump(doc, f, sort_keys=False, width=1000)
    print(f"cuda_shapes.py: {len(shapes)} operators with H200 shapes in {ops}")


if __name__ == "__main__":
    main()
