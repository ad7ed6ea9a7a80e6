#include "spec/operator_parts.h"

#include <algorithm>
#include <set>

namespace kevolve::spec {

namespace {

// Classes a part may have: any a class template serves on its own.
const std::set<std::string> kPartClasses = {"elementwise", "row_reduction", "gather_reduce", "matmul", "stencil",
                                            "scan",        "jagged",        "interaction",   "conv",   "pooling"};

bool has_tensor(const std::vector<tensor_spec>& ts, const std::string& name) {
  return std::any_of(ts.begin(), ts.end(), [&](const tensor_spec& t) { return t.name == name; });
}

const tensor_spec* find_tensor(const operator_spec& op, const std::string& name) {
  for (const auto* list : {&op.inputs, &op.intermediates, &op.outputs})
    for (const auto& t : *list)
      if (t.name == name) return &t;
  return nullptr;
}

std::string names_of(const std::vector<tensor_spec>& ts) {
  std::string out;
  for (const auto& t : ts) out += (out.empty() ? "" : ", ") + t.name;
  return out.empty() ? "none" : out;
}

// Bytes of one intermediate, rounded up to 256 (the parts' alignment).
std::string aligned_bytes(const tensor_spec& t) {
  std::string n;
  for (const auto& d : t.shape) n += (n.empty() ? "" : "*") + std::string("(") + d + ")";
  return "ceil(" + n + "*sizeof(" + t.dtype + ")/256)*256";
}

}  // namespace

void read_template_keys(yaml_reader& r, const YAML::Node& map, const std::string& key_path,
                        std::map<std::string, std::string>& out) {
  if (!map.IsMap()) {
    r.fail(map, key_path, "must be a map, got " + yaml_reader::describe(map));
    return;
  }
  for (const auto& kv : map) {
    YAML::Emitter e;
    e << kv.second;
    out[kv.first.Scalar()] = kv.second.IsScalar() ? kv.second.Scalar() : std::string(e.c_str());
  }
}

void read_parts(yaml_reader& r, const YAML::Node& root, operator_spec& op, std::map<std::string, int>& lines) {
  const bool sequence = op.op_class == "sequence";
  YAML::Node parts = r.child(root, "parts", "parts", sequence);
  if (!sequence) {
    if (parts.IsDefined()) r.fail(parts, "parts", "is for class sequence only, got class " + op.op_class);
    if (YAML::Node im = root["intermediates"]; im.IsDefined())
      r.fail(im, "intermediates", "is for class sequence only, got class " + op.op_class);
    return;
  }
  if (!parts.IsDefined()) return;
  if (YAML::Node w = root["workspace_bytes"]; w.IsDefined())
    r.fail(w, "workspace_bytes", "is computed from the parts and intermediates for class sequence; remove it");
  if (!parts.IsSequence() || parts.size() < 2) {
    r.fail(parts, "parts", "must be a list of at least 2 parts {class, template, inputs, outputs}, got " +
                               yaml_reader::describe(parts));
    return;
  }
  for (const auto& t : op.intermediates)
    if (has_tensor(op.outputs, t.name)) r.fail(root["intermediates"], "intermediates", "duplicates output '" + t.name + "'");
  std::set<std::string> written, read;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string path = "parts[" + std::to_string(i) + "]";
    const YAML::Node& p = parts[i];
    if (!p.IsMap()) {
      r.fail(p, path, "must be a map {class, template, inputs, outputs}, got " + yaml_reader::describe(p));
      continue;
    }
    r.reject_unknown_keys(p, {"class", "template", "inputs", "outputs", "workspace_bytes"}, path + ".");
    operator_part part;
    if (auto c = r.string_value(p, "class", path + ".class", true)) {
      part.op_class = *c;
      if (!kPartClasses.count(*c)) {
        std::string all;
        for (const auto& k : kPartClasses) all += (all.empty() ? "" : ", ") + k;
        r.fail(p["class"], path + ".class", "must be one of " + all + ", got \"" + *c + "\"");
      }
    }
    if (YAML::Node t = r.child(p, "template", path + ".template", true); t.IsDefined())
      read_template_keys(r, t, path + ".template", part.template_params);
    if (auto ins = r.string_list(p, "inputs", path + ".inputs", true)) {
      for (const auto& n : *ins) {
        if (has_tensor(op.inputs, n) || written.count(n)) {
          read.insert(n);
        } else if (has_tensor(op.intermediates, n)) {
          r.fail(p["inputs"], path + ".inputs", "reads intermediate '" + n + "' before a part writes it");
        } else {
          r.fail(p["inputs"], path + ".inputs",
                 "names '" + n + "', which is no input (" + names_of(op.inputs) + ") or intermediate (" +
                     names_of(op.intermediates) + ")");
        }
      }
      part.inputs = *ins;
    }
    if (auto outs = r.string_list(p, "outputs", path + ".outputs", true)) {
      for (const auto& n : *outs) {
        if (!has_tensor(op.intermediates, n) && !has_tensor(op.outputs, n))
          r.fail(p["outputs"], path + ".outputs",
                 "names '" + n + "', which is no output (" + names_of(op.outputs) + ") or intermediate (" +
                     names_of(op.intermediates) + ")");
        else if (!written.insert(n).second)
          r.fail(p["outputs"], path + ".outputs", "writes '" + n + "', which an earlier part writes");
      }
      if (outs->empty()) r.fail(p["outputs"], path + ".outputs", "must name at least one tensor");
      part.outputs = *outs;
    }
    if (auto w = r.expression_value(p, "workspace_bytes", path + ".workspace_bytes", false)) {
      part.workspace_bytes = *w;
      lines[path + ".workspace_bytes"] = yaml_reader::line_of(p["workspace_bytes"]);
    }
    op.parts.push_back(std::move(part));
  }
  for (const auto& t : op.outputs)
    if (!written.count(t.name)) r.fail(parts, "parts", "write no part output '" + t.name + "'");
  for (const auto& t : op.intermediates)
    if (written.count(t.name) && !read.count(t.name))
      r.fail(root["intermediates"], "intermediates", "'" + t.name + "' is written but no later part reads it");
    else if (!written.count(t.name))
      r.fail(root["intermediates"], "intermediates", "'" + t.name + "' is written by no part");

  std::string total, widest;
  for (const auto& t : op.intermediates) total += (total.empty() ? "" : " + ") + aligned_bytes(t);
  for (const auto& part : op.parts)
    widest = widest.empty() ? "(" + part.workspace_bytes + ")" : "max(" + widest + ", (" + part.workspace_bytes + "))";
  op.workspace_bytes = (total.empty() ? "0" : total) + " + " + widest;
}

operator_spec part_operator(const operator_spec& op, size_t i) {
  const operator_part& part = op.parts.at(i);
  operator_spec p = op;
  p.name = op.name + "_part" + std::to_string(i);
  p.op_class = part.op_class;
  p.template_params = part.template_params;
  p.workspace_bytes = part.workspace_bytes;
  p.parts.clear();
  p.intermediates.clear();
  p.graph_ops.clear();
  p.graph_main.clear();
  p.inputs.clear();
  p.outputs.clear();
  for (const auto& n : part.inputs) p.inputs.push_back(*find_tensor(op, n));
  for (const auto& n : part.outputs) p.outputs.push_back(*find_tensor(op, n));
  return p;
}

}  // namespace kevolve::spec
