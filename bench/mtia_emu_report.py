#!/usr/bin/env python3
"""Per task of a kevolve store: the best correct kernel's fraction of the
roofline and of the attainable ceiling at every timed shape, its speedup over
the baseline, the baseline's roofline fraction at that shape, what bounds the
ceiling, and whether issue 24's bar is met: every shape at >= 80% of its
attainable ceiling.

The attainable ceiling is the evaluator's (schema 6 stores:
measurements.attainable_fraction and bound; src/eval/backends/mtia_emu_ceiling.h):
the roofline's memory time, or the compute at the cheapest decomposition the
DPE runs for the dtype (three bf16 products per fp32 product), or the
operator's declared integer work (`int_passes`) on the SE's and vector core's
32-bit lanes, whichever is longest, plus the launch and the first DMA's
request (descriptor and SRAM latency), all from the profile's parameters.
`roofline` stays the raw fraction the "faster than possible" guard uses.

A store older than schema 6 has no ceiling: the script then falls back to
issue 6's `cap` (roofline time plus the launch and the first request, from
PROFILE_YAML) and says so.

usage: bench/mtia_emu_report.py STORE [PROFILE_YAML]
(PROFILE_YAML: the hardware profile the sweep ran on, default
config/hardware/mtia2i.yaml; read only for an old store)
"""
import sys
from pathlib import Path

import h5py
import yaml

BAR = 0.80


def text(blob, offset, length):
    return bytes(blob[offset:offset + length]).decode("utf-8")


def fixed_seconds(profile):
    """The launch plus the first DMA's request: time before any byte moves."""
    keys = ("launch_cycles", "dma_descriptor_cycles", "sram_latency_cycles")
    try:
        params = yaml.safe_load(Path(profile).read_text())["params"]
        cycles = sum(float(params[k]["value"]) for k in keys)
        return cycles / (float(params["clock_ghz"]["value"]) * 1e9)
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as e:
        sys.exit(f"{profile}: expected a hardware profile with params.clock_ghz and "
                 f"{', '.join('params.' + k for k in keys)} ({e})")


def attr(g, k):
    v = g.attrs[k]
    return v.decode() if isinstance(v, bytes) else str(v)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    profile = sys.argv[2] if len(sys.argv) == 3 else Path(__file__).resolve().parents[1] / "config/hardware/mtia2i.yaml"
    misses = shapes = 0
    with h5py.File(sys.argv[1], "r") as f:
        schema = int(f.attrs["schema_version"])
        old = schema < 6
        fixed = fixed_seconds(profile) if old else 0.0
        if old:
            print(f"store schema {schema} has no attainable ceiling: using the launch cap of {profile}")
        print(f"{'task':32} {'shape':26} {'best':>6} {'baseline':>8} {'speedup':>8} {'attain':>7}  "
              f"{'bound':26} bar ({BAR:.0%} of attainable)")
        for name in sorted(f["tasks"], key=int):
            g = f["tasks"][name]
            label = "/".join(attr(g, k) for k in ("operator", "variant", "backend"))
            nodes, blob, meas = g["nodes"][...], g["text"][...], g["measurements"][...]
            ok = nodes[(nodes["state"] == 1) & (nodes["status"] == 0) & (nodes["id"] > 0)]
            if len(ok) == 0:
                print(f"{label:32} no correct kernel")
                misses += 1
                continue
            best = ok[ok["fitness"].argmax()]
            rows = meas[(meas["node"] == best["id"]) & (meas["holdout"] == 0)]
            for m in rows:
                shapes += 1
                shape = text(blob, int(m["shape_offset"]), int(m["shape_length"]))
                frac = float(m["roofline_fraction"])
                base_frac = frac / float(m["speedup"]) if m["speedup"] > 0 else 0.0
                if old:
                    roof = frac * float(m["candidate_median_s"])
                    attain = (roof + fixed) / float(m["candidate_median_s"]) if roof > 0 else 0.0
                    bound = "(cap: launch + first request)"
                else:
                    attain = float(m["attainable_fraction"])
                    bound = text(blob, int(m["bound_offset"]), int(m["bound_length"])) or "-"
                met = attain >= BAR
                misses += not met
                print(f"{label:32} {shape:26} {frac:6.1%} {base_frac:8.1%} {float(m['speedup']):7.2f}x {attain:7.1%}  "
                      f"{bound:26} {'met' if met else 'MISSED'}")
            print(f"{label:32} best node {int(best['id'])} of {len(nodes) - 1}, fitness {float(best['fitness']):.3f}")
    print(f"{shapes - misses} of {shapes} shape(s) at >= {BAR:.0%} of attainable; {misses} below")


if __name__ == "__main__":
    main()
