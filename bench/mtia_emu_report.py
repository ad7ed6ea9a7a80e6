#!/usr/bin/python3
"""Per task of a kevolve store: the best correct kernel's roofline fraction
and speedup over the baseline at every timed shape, the baseline's own
roofline fraction at that shape, and whether issue 6's acceptance bar is met:
>= 0.85 of DPE peak for the GEMM-class operator (gemm_bias_relu) at its
compute-bound shapes, >= 0.80 of the roofline for every other shape (the
emulator's bound class of a kernel says what bounds that kernel, not which
term of the roofline binds: a feature_hash kernel bound by its engines is
still held to 0.80 of the SRAM roofline).

"cap" is the roofline time over the roofline time plus the time every call
spends before its first byte can move: the profile's launch cost (paid on
top of the last PE's finish) and the first DMA's request (descriptor and
SRAM latency; no engine has an operand before it, and DRAM's latency is
longer). No kernel reaches more, so a bar above the cap cannot be met at
that shape.

usage: /usr/bin/python3 bench/mtia_emu_report.py STORE [PROFILE_YAML]
(PROFILE_YAML: the hardware profile the sweep ran on, default
config/hardware/mtia2i.yaml)
"""
import sys
from pathlib import Path

import h5py
import yaml


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
        sys.exit(f"{profile}: expected a hardware profile with params.clock_ghz and {', '.join('params.' + k for k in keys)} ({e})")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    profile = sys.argv[2] if len(sys.argv) == 3 else Path(__file__).resolve().parents[1] / "config/hardware/mtia2i.yaml"
    fixed = fixed_seconds(profile)
    misses = 0
    with h5py.File(sys.argv[1], "r") as f:
        print(f"{'task':32} {'shape':24} {'best':>6} {'baseline':>8} {'speedup':>8}  {'cap':>6}  bottleneck     bar")
        for name in sorted(f["tasks"], key=int):
            g = f["tasks"][name]
            label = "/".join(str(g.attrs[k].decode() if isinstance(g.attrs[k], bytes) else g.attrs[k])
                             for k in ("operator", "variant", "backend"))
            nodes, blob, meas = g["nodes"][...], g["text"][...], g["measurements"][...]
            ok = nodes[(nodes["state"] == 1) & (nodes["status"] == 0) & (nodes["id"] > 0)]
            if len(ok) == 0:
                print(f"{label:32} no correct kernel")
                misses += 1
                continue
            best = ok[ok["fitness"].argmax()]
            rows = meas[(meas["node"] == best["id"]) & (meas["holdout"] == 0)]
            for m in rows:
                shape = text(blob, int(m["shape_offset"]), int(m["shape_length"]))
                neck = text(blob, int(m["bottleneck_offset"]), int(m["bottleneck_length"]))
                frac = float(m["roofline_fraction"])
                base_frac = frac / float(m["speedup"]) if m["speedup"] > 0 else 0.0
                gemm = label.startswith("gemm_bias_relu/")
                bar = 0.85 if gemm and neck == "compute-bound" else 0.80
                met = frac >= bar
                misses += not met
                roof = frac * float(m["candidate_median_s"])
                cap = roof / (roof + fixed) if roof > 0 else 0.0
                verdict = "met" if met else "MISSED" if cap >= bar else "MISSED: the cap is below the bar"
                print(f"{label:32} {shape:24} {frac:6.1%} {base_frac:8.1%} {float(m['speedup']):7.2f}x  "
                      f"{cap:6.1%}  {neck:14} {verdict} ({bar:.0%})")
            print(f"{label:32} best node {int(best['id'])} of {len(nodes) - 1}, fitness {float(best['fitness']):.3f}")
    print(f"{misses} shape(s) below the bar")


if __name__ == "__main__":
    main()
