#!/usr/bin/python3
"""Writes the best correct kernel of every task of a kevolve store to
DIR/<operator>.<EXT> (default cpp: the layout bench/cpu_examples.py --kernel-dir
expects; bench/cuda_sweep.sh uses cu).

usage: /usr/bin/python3 bench/export_best.py STORE DIR [EXT]
"""
import os
import sys

import h5py


def text(blob, offset, length):
    return bytes(blob[offset:offset + length]).decode("utf-8")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    store, out = sys.argv[1], sys.argv[2]
    ext = sys.argv[3] if len(sys.argv) == 4 else "cpp"
    os.makedirs(out, exist_ok=True)
    with h5py.File(store, "r") as f:
        for name in sorted(f["tasks"], key=int):
            g = f["tasks"][name]
            op = g.attrs["operator"]
            op = op.decode() if isinstance(op, bytes) else str(op)
            nodes = g["nodes"][...]
            blob = g["text"][...]
            ok = nodes[(nodes["state"] == 1) & (nodes["status"] == 0) & (nodes["id"] > 0)]
            if len(ok) == 0:
                print(f"{op}: no correct kernel", file=sys.stderr)
                continue
            best = ok[ok["fitness"].argmax()]
            code = text(blob, int(best["code_offset"]), int(best["code_length"]))
            with open(os.path.join(out, op + "." + ext), "w") as k:
                k.write(code)
            print(f"{op}: node {int(best['id'])}, fitness {float(best['fitness']):.3f}")


if __name__ == "__main__":
    main()
