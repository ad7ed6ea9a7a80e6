#!/usr/bin/env python3
"""The mtia2i -> mtia300 carry-over from three kevolve stores (schema 6):
SOURCE (a search on mtia2i), SEEDED (a search on mtia300 started from
SOURCE's best kernels with --seed-from: its node of origin "seed" is that
kernel, unchanged) and DEFAULTS (the same search on mtia300 from the
templates' defaults).

Table 1, per timed shape: the mtia2i best's fraction of its attainable
ceiling there; the same kernel on mtia300 (fraction of the roofline and of
the attainable ceiling, what bounds the ceiling); the best kernel either
mtia300 search found.
Table 2, per task: the carried kernel's fitness on mtia300; per search its
best fitness, the evaluations it needed to reach 90% of the best fitness
either search found, and its best kernel's worst shape against the ceiling.
Fitness is the speedup over the operator's mtia_baseline on mtia300.

usage: bench/mtia_emu_generations.py SOURCE SEEDED DEFAULTS
"""
import sys

import h5py


def text(blob, offset, length):
    return bytes(blob[offset:offset + length]).decode("utf-8")


def attr(g, k):
    v = g.attrs[k]
    return v.decode() if isinstance(v, bytes) else str(v)


def tasks(path):
    """task label -> {nodes (finished order), best, shapes(node) -> {shape: (roofline, attainable, bound)}}"""
    out = {}
    with h5py.File(path, "r") as f:
        if int(f.attrs["schema_version"]) < 6:
            sys.exit(f"{path}: schema {int(f.attrs['schema_version'])} has no attainable ceiling (need 6)")
        for name in f["tasks"]:
            g = f["tasks"][name]
            label = attr(g, "operator") + "/" + attr(g, "variant")
            nodes, blob, meas = g["nodes"][...], g["text"][...], g["measurements"][...]
            done = sorted((n for n in nodes if n["id"] > 0 and n["state"] == 1), key=lambda n: float(n["finished_s"]))
            ok = [n for n in done if n["status"] == 0]
            shapes = {}
            for m in meas:
                if m["holdout"]:
                    continue
                shape = text(blob, int(m["shape_offset"]), int(m["shape_length"]))
                bound = text(blob, int(m["bound_offset"]), int(m["bound_length"]))
                shapes.setdefault(int(m["node"]), {})[shape] = (float(m["roofline_fraction"]),
                                                                 float(m["attainable_fraction"]), bound)
            origin = {int(n["id"]): text(blob, int(n["origin_offset"]), int(n["origin_length"])) for n in nodes}
            best = max(ok, key=lambda n: float(n["fitness"])) if ok else None
            out[label] = {"done": done, "best": best, "shapes": shapes, "origin": origin}
    return out


def to_90(t, target):
    for i, n in enumerate(t["done"]):
        if n["status"] == 0 and float(n["fitness"]) >= 0.9 * target:
            return i + 1
    return None


def worst(t, node):
    s = t["shapes"].get(int(node["id"]), {}) if node is not None else {}
    return min((a for _, a, _ in s.values()), default=0.0)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, seeded, defaults = (tasks(p) for p in sys.argv[1:])
    print("| task | shape | mtia2i best: attainable | on mtia300 unchanged: roofline | attainable | bound (mtia300) "
          "| mtia300 searched best: attainable |")
    print("|---|---|---|---|---|---|---|")
    rows2 = []
    for label in sorted(seeded):
        s, d, o = seeded[label], defaults.get(label), src.get(label)
        seeds = [n for n in s["done"] if s["origin"].get(int(n["id"])) == "seed"]
        seed = seeds[0] if seeds else None
        cands = [x for x in (s["best"], d["best"] if d else None) if x is not None]
        top = max(cands, key=lambda n: float(n["fitness"])) if cands else None
        top_t = s if top is not None and s["best"] is top else d
        src_shapes = o["shapes"].get(int(o["best"]["id"]), {}) if o and o["best"] is not None else {}
        seed_shapes = s["shapes"].get(int(seed["id"]), {}) if seed is not None and seed["status"] == 0 else {}
        top_shapes = top_t["shapes"].get(int(top["id"]), {}) if top is not None else {}
        for shape in sorted(set(src_shapes) | set(seed_shapes) | set(top_shapes)):
            a2 = src_shapes.get(shape)
            c3 = seed_shapes.get(shape)
            b3 = top_shapes.get(shape)
            print(f"| {label} | {shape} | {a2[1]:.1%} |" if a2 else f"| {label} | {shape} | - |", end="")
            print(f" {c3[0]:.1%} | {c3[1]:.1%} | {c3[2]} |" if c3 else " - | - | - |", end="")
            print(f" {b3[1]:.1%} |" if b3 else " - |")
        best_fit = float(top["fitness"]) if top is not None else 0.0
        seed_fit = (f"{float(seed['fitness']):.3f}" if seed["status"] == 0 else "failed") if seed is not None else "-"
        cells = [label, seed_fit]
        for t in (s, d):
            if t is None or t["best"] is None:
                cells += ["-", "-", "-"]
                continue
            n90 = to_90(t, best_fit)
            cells += [f"{float(t['best']['fitness']):.3f} (node {int(t['best']['id'])} of {len(t['done'])})",
                      str(n90) if n90 else "not reached", f"{worst(t, t['best']):.1%}"]
        rows2.append(cells)
    print()
    print("| task | carried kernel's fitness | seeded: best | seeded: evaluations to 90% | seeded: worst attainable "
          "| defaults: best | defaults: evaluations to 90% | defaults: worst attainable |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows2:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
