"""The per-problem table of a KernelBench sweep's store (bench/kernelbench_cpu.sh):
each task's best correct kernel at its timed shape, measured in the sweep
itself next to PyTorch eager and torch.compile (same evaluations), its
fraction of the roofline floor, and whether its held-out shapes passed.

    python3 bench/kernelbench_table.py STORE OPS_DIR
"""
import math
import sys

import h5py
import yaml


def text(blob, row, key):
    o, n = int(row[key + "_offset"]), int(row[key + "_length"])
    return blob[o:o + n].decode()


def main(store, ops_dir):
    rows, faster_eager, faster_compile, correct = [], 0, 0, 0
    with h5py.File(store, "r") as f:
        tasks = sorted(f["tasks"], key=int)
        for name in tasks:
            g = f["tasks"][name]
            op = g.attrs["operator"]
            op = op.decode() if isinstance(op, bytes) else str(op)
            spec = yaml.safe_load(open(f"{ops_dir}/{op}.yaml"))
            nodes, meas, blob = g["nodes"][...], g["measurements"][...], bytes(g["text"][...])
            ok = nodes[(nodes["state"] == 1) & (nodes["status"] == 0) & (nodes["id"] > 0)]
            evaluated = int(((nodes["state"] == 1) & (nodes["id"] > 0)).sum())
            if len(ok) == 0:
                stop = g.attrs.get("stop_reason", b"")
                stop = stop.decode() if isinstance(stop, bytes) else str(stop)
                rows.append((op, spec["class"], "-", "-", "-", "-", "-", f"{evaluated} evaluated; {stop[:120]}"))
                continue
            best = ok[ok["fitness"].argmax()]
            mine = meas[meas["node"] == best["id"]]
            timed = [m for m in mine if not m["holdout"]]
            held = [m for m in mine if m["holdout"]]
            held_ok = all(text(blob, m, "status") == "ok" for m in held)
            correct += held_ok
            m = timed[0]
            k, e, c = float(m["candidate_median_s"]), float(m["torch_eager_median_s"]), float(m["torch_compile_median_s"])
            xe, xc = (e / k if e > 0 else math.nan), (c / k if c > 0 else math.nan)
            faster_eager += xe > 1
            faster_compile += xc > 1
            origin = text(blob, best, "origin").removeprefix("builtin:")
            rows.append((op, spec["class"], origin, f"{k * 1e3:.2f} ms", f"{xe:.2f}x", f"{xc:.2f}x",
                         f"{100 * float(m['roofline_fraction']):.0f}%",
                         f"{evaluated} evaluated; holdouts {'ok' if held_ok else 'FAILED'} ({len(held)})"))
    head = ("problem", "class", "best template", "kernel", "x eager", "x compile", "% of floor", "notes")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print(f"\n{len(tasks)} problems: correct kernels (held-out shapes passed) for {correct}; faster than PyTorch "
          f"eager on {faster_eager}; faster than torch.compile on {faster_compile}.")


if __name__ == "__main__":
    main(*sys.argv[1:])
