#include "synth/sequence_compose.h"

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "common/expr.h"
#include "eval/backends/registry.h"
#include "spec/dtype.h"

namespace kevolve::synth {

namespace {

const char* kEntry = "extern \"C\" int kevolve_kernel(";

struct signature {
  std::string params;  // after `const kv_args* a`
  std::string args;    // after `&p`
};

// The parts' entry point as the backend's ABI declares it
// (eval/backends/registry.h): `const kv_args* a` and, on devices, one
// handle (the stream) passed on to every part. None for an emulated backend,
// whose kernels take a device of DMA queues rather than tensors in memory.
std::optional<signature> signature_for(const std::string& backend) {
  const eval::backend_descriptor* d = eval::find_backend(backend);
  if (!d || d->traits.emulated) return std::nullopt;
  const std::string& abi = d->abi_signature;
  const std::string first = "const kv_args* a";
  const size_t b = abi.find(first), e = abi.rfind(')');
  if (b == std::string::npos || e == std::string::npos || e < b + first.size()) return std::nullopt;
  signature s;
  s.params = abi.substr(b + first.size(), e - b - first.size());
  if (s.params.empty()) return s;
  if (s.params.find(',', 1) != std::string::npos) return std::nullopt;  // one handle at most
  const size_t name = s.params.find_last_of(" *");
  s.args = ", " + s.params.substr(name + 1);
  return s;
}

// Where a tensor of the operator is in kv_args: "a->inputs[i]" or "a->outputs[i]".
std::optional<std::string> operator_tensor(const spec::operator_spec& op, const std::string& name) {
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i].name == name) return "a->inputs[" + std::to_string(i) + "]";
  for (size_t i = 0; i < op.outputs.size(); ++i)
    if (op.outputs[i].name == name) return "a->outputs[" + std::to_string(i) + "]";
  return std::nullopt;
}

// The run-time dtype of a tensor whose YAML dtype is `dt`: a constant for a
// dtype name; for a type symbol, the dtype of an operator tensor of that symbol.
std::optional<std::string> dtype_code(const spec::operator_spec& op, const std::string& dt) {
  if (auto d = spec::parse_dtype(dt)) return std::to_string(int(*d));
  for (const auto* list : {&op.inputs, &op.outputs})
    for (const auto& t : *list)
      if (t.dtype == dt) return *operator_tensor(op, t.name) + ".dtype";
  return std::nullopt;
}

struct split_code {
  std::vector<std::string> includes;
  std::string body;
  std::vector<std::string> macros;  // every #define of the body, to #undef after it
};

expected<split_code> split_part(const std::string& code, size_t index) {
  static const std::regex define_re(R"(^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*))");
  split_code out;
  std::istringstream in(code);
  std::string line;
  bool first = true, entry = false;
  std::set<std::string> seen;
  while (std::getline(in, line)) {
    if (first) {  // the part's template header: the sequence has its own
      first = false;
      if (line.rfind("// kevolve-template", 0) == 0) continue;
    }
    const size_t h = line.find_first_not_of(" \t");
    if (h != std::string::npos && line.compare(h, 8, "#include") == 0) {
      out.includes.push_back(line.substr(h));
      continue;
    }
    std::smatch m;
    if (std::regex_search(line, m, define_re) && seen.insert(m[1]).second) out.macros.push_back(m[1]);
    if (const size_t e = line.find(kEntry); e != std::string::npos) {
      if (entry)
        return make_error(errc::invalid_input, "part " + std::to_string(index) + " defines kevolve_kernel twice");
      entry = true;
      line = line.substr(0, e) + "static int kv_part_kernel(" + line.substr(e + std::string(kEntry).size());
    }
    out.body += line + "\n";
  }
  if (!entry)
    return make_error(errc::invalid_input, "part " + std::to_string(index) + "'s kernel has no `" + kEntry +
                                               "...)` entry point to call");
  return out;
}

}  // namespace

bool sequence_backend(const std::string& backend) { return signature_for(backend).has_value(); }

expected<std::string> compose_sequence(const spec::operator_spec& op, const std::string& backend,
                                       const std::vector<std::string>& parts) {
  const auto sig = signature_for(backend);
  if (!sig)
    return make_error(errc::invalid_input, "operator " + op.name + " is a sequence of class kernels, which runs on a "
                                         "backend of tensors in memory, not an emulated one; got backend " + backend);
  if (parts.size() != op.parts.size())
    return make_error(errc::invalid_input, "operator " + op.name + " has " + std::to_string(op.parts.size()) +
                                               " parts, got " + std::to_string(parts.size()) + " kernels");
  // Shape symbols from the operator's tensors; derived ones computed after them.
  std::string symbols;
  std::set<std::string> bound;
  for (const auto& sym : op.symbols) {
    std::optional<std::string> at;
    for (const auto* list : {&op.inputs, &op.outputs})
      for (const auto& t : *list)
        for (size_t d = 0; d < t.shape.size() && !at; ++d)
          if (t.shape[d] == sym) at = *operator_tensor(op, t.name) + ".dims[" + std::to_string(d) + "]";
    if (!at) continue;
    symbols += "  const double kvs_" + sym + " = (double)" + *at + ";\n  (void)kvs_" + sym + ";\n";
    bound.insert(sym);
  }
  auto symbol = [&](const std::string& s) -> std::optional<std::string> {
    if (bound.count(s)) return "kvs_" + s;
    if (s.rfind("sizeof_", 0) == 0)
      if (auto d = dtype_code(op, s.substr(7))) return "(double)kv_seq_dtype_size(" + *d + ")";
    return std::nullopt;
  };
  for (const auto& [name, text] : op.derived) {
    auto c = c_expression(text, symbol);
    if (!c) continue;  // used below only through a shape, which then says so
    symbols += "  const double kvs_" + name + " = " + *c + ";\n  (void)kvs_" + name + ";\n";
    bound.insert(name);
  }

  std::string intermediates;
  for (const auto& t : op.intermediates) {
    auto dt = dtype_code(op, t.dtype);
    if (!dt)
      return make_error(errc::invalid_input, "operator " + op.name + ": intermediate '" + t.name + "' has dtype " +
                                                 t.dtype + ", which no input or output has");
    std::string dims;
    for (const auto& d : t.shape) {
      auto c = c_expression(d, symbol);
      if (!c)
        return make_error(errc::invalid_input, "operator " + op.name + ": a dimension of intermediate '" + t.name +
                                                   "' cannot be computed from the operator's tensors: " +
                                                   c.error().message + " (a symbol must be a dimension of an input or "
                                                   "output, or derived from those)");
      dims += (dims.empty() ? "" : ", ") + std::string("(int64_t)llround(") + *c + ")";
    }
    intermediates += "  kv_tensor kvt_" + t.name + ";\n  {\n    const int64_t d[] = {" + dims + "};\n" +
                     "    kv_seq_tensor(&kvt_" + t.name + ", ws + off, " + *dt + ", " +
                     std::to_string(t.shape.size()) + ", d);\n    off += (kv_numel(&kvt_" + t.name +
                     ") * kv_seq_dtype_size(kvt_" + t.name + ".dtype) + 255) / 256 * 256;\n  }\n";
  }

  std::vector<std::string> includes;
  std::set<std::string> have;
  std::string bodies, calls;
  for (size_t i = 0; i < parts.size(); ++i) {
    auto s = split_part(parts[i], i);
    if (!s) return tl::unexpected(s.error());
    for (const auto& inc : s->includes)
      if (have.insert(inc).second) includes.push_back(inc);
    const std::string ns = "kv_part" + std::to_string(i);
    bodies += "// ---- part " + std::to_string(i) + ": class " + op.parts[i].op_class + "\nnamespace " + ns + " {\n" +
              s->body + "}  // namespace " + ns + "\n";
    for (const auto& m : s->macros) bodies += "#undef " + m + "\n";
    const auto& part = op.parts[i];
    auto where = [&](const std::string& n) { return operator_tensor(op, n).value_or("kvt_" + n); };
    calls += "  {  // part " + std::to_string(i) + "\n    kv_args p;\n    memset(&p, 0, sizeof p);\n" +
             "    p.abi_version = a->abi_version;\n    p.num_inputs = " + std::to_string(part.inputs.size()) +
             ";\n    p.num_outputs = " + std::to_string(part.outputs.size()) + ";\n";
    for (size_t k = 0; k < part.inputs.size(); ++k)
      calls += "    p.inputs[" + std::to_string(k) + "] = " + where(part.inputs[k]) + ";\n";
    for (size_t k = 0; k < part.outputs.size(); ++k)
      calls += "    p.outputs[" + std::to_string(k) + "] = " + where(part.outputs[k]) + ";\n";
    calls += "    p.num_params = a->num_params;\n    memcpy(p.params, a->params, sizeof p.params);\n"
             "    p.workspace = ws + off;\n    p.workspace_bytes = a->workspace_bytes - off;\n"
             "    p.num_threads = a->num_threads;\n    const int rc = " + ns + "::kv_part_kernel(&p" + sig->args +
             ");\n    if (rc != KV_OK) return rc;\n  }\n";
  }

  std::string out = "// A sequence of " + std::to_string(parts.size()) + " class kernels for operator " + op.name +
                    " (kevolve's builtin synthesizer): each part in a namespace of its own, run in order; the\n"
                    "// intermediates live in the workspace.\n";
  for (const auto& inc : includes) out += inc + "\n";
  out += "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n#include \"kevolve/abi.h\"\n\n";
  out += bodies;
  out += "\nstatic int64_t kv_seq_dtype_size(int32_t t) {\n"
         "  switch (t) {\n    case KV_F16: case KV_BF16: return 2;\n    case KV_I64: case KV_F64: return 8;\n"
         "    case KV_U8: return 1;\n    default: return 4;\n  }\n}\n\n"
         "static void kv_seq_tensor(kv_tensor* t, char* data, int32_t dtype, int32_t rank, const int64_t* dims) {\n"
         "  memset(t, 0, sizeof *t);\n  t->data = data;\n  t->dtype = dtype;\n  t->rank = rank;\n"
         "  int64_t stride = 1;\n  for (int32_t i = rank - 1; i >= 0; --i) {\n"
         "    t->dims[i] = dims[i];\n    t->strides[i] = stride;\n    stride *= dims[i];\n  }\n}\n\n";
  out += std::string("extern \"C\" int kevolve_kernel(const kv_args* a") + sig->params + ") {\n" + symbols +
         "  char* ws = (char*)a->workspace;\n  int64_t off = 0;\n" + intermediates +
         "  if (off > a->workspace_bytes) return KV_ERR_WORKSPACE;\n" + calls + "  return KV_OK;\n}\n";
  return out;
}

}  // namespace kevolve::synth
