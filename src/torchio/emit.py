"""The operator YAML's text (config/operators/README.md), in flow style
for the small maps and lists, as the catalog's files are written."""
import json


def flow(v):
    """A YAML flow value: JSON with bare keys and plain scalars where safe."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    s = str(v)
    if s and all(c.isalnum() or c == "_" for c in s) and not s[0].isdigit() and s not in ("true", "false", "null"):
        return s
    return json.dumps(s)


def block_text(key, text, width=88):
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return f"{key}: >\n" + "".join(f"  {l}\n" for l in lines)


def operator_yaml(op):
    """op: the import's result (import_operator.build)."""
    out = [f"# Imported by `kevolve ops import` from {op['source']}", "# (src/torchio/import_operator.py)."]
    out += [f"name: {op['name']}", f"class: {op['class']}", block_text("description", op["description"]).rstrip()]
    out.append("variants:")
    out += [f"  {n}: {flow(v)}" for n, v in op["variants"].items()]
    out.append(f"symbols: {flow(op['symbols'])}")
    for key in ("inputs", "outputs", "params"):
        if not op[key]:
            out.append(f"{key}: []")
            continue
        out.append(f"{key}:")
        out += [f"  - {flow(t)}" for t in op[key]]
    out.append("generators:")
    for n, dists in op["generators"].items():
        out.append(f"  {n}:")
        out += [f"    - {flow(d)}" for d in dists]
    for key in ("shapes", "holdout_shapes"):
        if op.get(key + "_note"):
            out.append("# " + op[key + "_note"])
        out.append(f"{key}:")
        out += [f"  - {flow(s)}" for s in op[key]]
    out.append("# " + op["cost_note"])
    out.append(f"bytes: {flow(op['bytes'])}")
    out.append(f"flops: {flow(op['flops'])}")
    if op.get("workspace_bytes"):
        out.append("# scratch the class template packs the operands into (src/torchio/classify_matmul.py)")
        out.append(f"workspace_bytes: {flow(op['workspace_bytes'])}")
    out.append("tolerance:")
    out += [f"  {d}: {flow(t)}" for d, t in op["tolerance"].items()]
    out.append("# The PyTorch module is the operator's semantics (src/eval/torch_entry.py):")
    out.append("# the evaluator computes references with it in fp64.")
    out.append(f"torch: {flow(op['torch'])}")
    if op["template"]:
        out.append(f"template: {flow(op['template'])}")
    if op.get("parts"):
        out.append("# no one class template covers the forward: these parts, run in order, do; the")
        out.append("# intermediates pass between them in the workspace (src/torchio/classify_sequence.py)")
        out.append("intermediates:")
        out += [f"  - {flow(t)}" for t in op["intermediates"]]
        out.append("parts:")
        out += [f"  - {flow(p)}" for p in op["parts"]]
    if op.get("graph", {}).get("ops"):
        out.append("# the traced forward's aten ops, and the one that gave it its class")
        out.append(f"graph: {flow(op['graph'])}")
    return "\n".join(out) + "\n"
