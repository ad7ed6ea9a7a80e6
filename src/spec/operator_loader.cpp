#include "spec/operator_loader.h"

#include <algorithm>
#include <regex>
#include <set>

#include "common/paths.h"
#include "spec/operator_baselines.h"
#include "spec/operator_parts.h"
#include "spec/operator_torch.h"
#include "spec/shape_points.h"
#include "spec/yaml_reader.h"

namespace kevolve::spec {
namespace fs = std::filesystem;

namespace {

const std::set<std::string> kTopKeys = {
    "name",     "class",      "description",    "variants",     "symbols",           "derived",
    "inputs",   "outputs",    "params",         "generators",   "shapes",            "holdout_shapes",
    "bytes",    "bytes_floor", "flops",     "workspace_bytes", "tolerance",   "reference_max_flops", "max_speedup",
    "reference", "torch", "allowed_libraries", "template", "data_symbols", "default_variant",
    "graph", "int_passes", "parts", "intermediates"};

const std::set<std::string> kClasses = {"elementwise", "row_reduction", "gather_reduce", "matmul", "stencil",
                                        "scan",        "search",        "jagged",        "interaction", "conv",
                                        "pooling",     "sequence",      "custom"};

// dist -> required argument names
const std::map<std::string, std::vector<std::string>> kDistributions = {
    {"uniform", {"low", "high"}},       {"normal", {"mean", "std"}},          {"randint", {"low", "high"}},
    {"zipf", {"n", "s"}},               {"sorted_uniform", {"low", "high"}}, {"offsets", {"total", "max_len"}}};

// The cost expressions: key, field, required.
struct cost_field {
  const char* key;
  std::string operator_spec::*member;
  bool required;
};
const std::vector<cost_field>& cost_fields() {
  static const std::vector<cost_field> f = {{"bytes", &operator_spec::bytes, true},
                                            {"bytes_floor", &operator_spec::bytes_floor, false},
                                            {"flops", &operator_spec::flops, true},
                                            {"int_passes", &operator_spec::int_passes, false},
                                            {"workspace_bytes", &operator_spec::workspace_bytes, false}};
  return f;
}

bool is_identifier(const std::string& s) {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(s, re);
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

class loader {
 public:
  explicit loader(const fs::path& file) : file_(file), r_(file.string()) {}

  expected<operator_spec> run();

 private:
  void read_variants(const YAML::Node& root);
  void read_tensors(const YAML::Node& root, const char* key, std::vector<tensor_spec>& out);
  void read_params(const YAML::Node& root);
  void read_generators(const YAML::Node& root);
  void read_shapes(const YAML::Node& root, const char* key, std::vector<shape_point>& out, bool required);
  void read_tolerances(const YAML::Node& root);
  void read_data_symbols(const YAML::Node& root);
  void check_expressions();
  void check_resolution();
  void check_path(const YAML::Node& root, const std::string& key, const fs::path& p);

  void check_expr(const std::string& text, const std::string& key, int line, const std::set<std::string>& allowed);

  fs::path file_;
  yaml_reader r_;
  operator_spec op_;
  std::map<std::string, int> lines_;  // key path -> line, for cross checks
};

void loader::read_variants(const YAML::Node& root) {
  YAML::Node vs = r_.child(root, "variants", "variants", true);
  if (!vs.IsDefined()) return;
  if (!vs.IsMap() || vs.size() == 0) {
    r_.fail(vs, "variants", "must be a non-empty map of variant name to {type symbol: dtype}, got " + yaml_reader::describe(vs));
    return;
  }
  for (const auto& kv : vs) {
    variant v;
    v.name = kv.first.Scalar();
    const std::string path = "variants." + v.name;
    if (!kv.second.IsMap()) {
      r_.fail(kv.second, path, "must be a map of type symbol to dtype, got " + yaml_reader::describe(kv.second));
      continue;
    }
    for (const auto& tkv : kv.second) {
      const std::string sym = tkv.first.Scalar();
      const std::string dn = tkv.second.IsScalar() ? tkv.second.Scalar() : "";
      auto d = parse_dtype(dn);
      if (!d) {
        r_.fail(tkv.second, path + "." + sym,
                std::string("must be a dtype (") + dtype_names_list() + "), got " + yaml_reader::describe(tkv.second));
        continue;
      }
      if (!is_identifier(sym) || parse_dtype(sym)) r_.fail(tkv.first, path + "." + sym, "must be an identifier that is not a dtype name");
      v.types[sym] = *d;
    }
    op_.variants.push_back(std::move(v));
  }
  // Every variant binds the same type symbols.
  for (const auto& v : op_.variants) {
    std::set<std::string> a, b;
    for (const auto& [k, _] : v.types) a.insert(k);
    for (const auto& [k, _] : op_.variants.front().types) b.insert(k);
    if (a != b) r_.fail(vs, "variants." + v.name, "must bind the same type symbols as the first variant (" + join(b) + ")");
  }
}

void loader::read_tensors(const YAML::Node& root, const char* key, std::vector<tensor_spec>& out) {
  YAML::Node list = r_.child(root, key, key, true);
  if (!list.IsDefined()) return;
  if (!list.IsSequence() || list.size() == 0) {
    r_.fail(list, key, "must be a non-empty list of {name, dtype, shape}, got " + yaml_reader::describe(list));
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    const YAML::Node& t = list[i];
    if (!t.IsMap()) {
      r_.fail(t, path, "must be a map {name, dtype, shape}, got " + yaml_reader::describe(t));
      continue;
    }
    r_.reject_unknown_keys(t, {"name", "dtype", "shape"}, path + ".");
    tensor_spec ts;
    auto name = r_.string_value(t, "name", path + ".name", true);
    auto dt = r_.string_value(t, "dtype", path + ".dtype", true);
    YAML::Node shape = r_.child(t, "shape", path + ".shape", true);
    if (name) {
      if (!is_identifier(*name)) r_.fail(t, path + ".name", "must be an identifier, got \"" + *name + "\"");
      ts.name = *name;
    }
    if (dt) {
      ts.dtype = *dt;
      if (!parse_dtype(*dt)) {
        for (const auto& v : op_.variants)
          if (!v.types.count(*dt)) {
            r_.fail(t["dtype"], path + ".dtype",
                    std::string("must be a dtype (") + dtype_names_list() + ") or a type symbol of every variant, got \"" +
                        *dt + "\"");
            break;
          }
        if (op_.variants.empty())
          r_.fail(t["dtype"], path + ".dtype", std::string("must be a dtype (") + dtype_names_list() + "), got \"" + *dt + "\"");
      }
    }
    if (shape.IsDefined()) {
      if (!shape.IsSequence() || shape.size() == 0 || shape.size() > KV_MAX_RANK) {
        r_.fail(shape, path + ".shape",
                "must be a list of 1 to " + std::to_string(KV_MAX_RANK) + " dimension expressions, got " + yaml_reader::describe(shape));
      } else {
        for (size_t d = 0; d < shape.size(); ++d) {
          if (!shape[d].IsScalar()) {
            r_.fail(shape[d], path + ".shape[" + std::to_string(d) + "]", "must be an integer or an expression, got " + yaml_reader::describe(shape[d]));
            continue;
          }
          ts.shape.push_back(shape[d].Scalar());
          lines_[path + ".shape[" + std::to_string(d) + "]"] = yaml_reader::line_of(shape[d]);
        }
      }
    }
    for (const auto& other : op_.inputs)
      if (other.name == ts.name) r_.fail(t, path + ".name", "duplicates tensor '" + ts.name + "'");
    for (const auto& other : out)
      if (other.name == ts.name) r_.fail(t, path + ".name", "duplicates tensor '" + ts.name + "'");
    out.push_back(std::move(ts));
  }
  if (out.size() > KV_MAX_TENSORS) r_.fail(list, key, "must have at most " + std::to_string(KV_MAX_TENSORS) + " tensors");
}

void loader::read_data_symbols(const YAML::Node& root) {
  YAML::Node map = r_.child(root, "data_symbols", "data_symbols", false);
  if (!map.IsDefined()) return;
  if (!map.IsMap()) {
    r_.fail(map, "data_symbols", "must be a map of symbol to {clipped_lengths, cap, bound}, got " + yaml_reader::describe(map));
    return;
  }
  for (const auto& kv : map) {
    const std::string name = kv.first.Scalar(), path = "data_symbols." + name;
    const YAML::Node& d = kv.second;
    if (!d.IsMap()) {
      r_.fail(d, path, "must be a map {clipped_lengths, cap, bound}, got " + yaml_reader::describe(d));
      continue;
    }
    r_.reject_unknown_keys(d, {"clipped_lengths", "cap", "bound"}, path + ".");
    const bool taken = std::find(op_.symbols.begin(), op_.symbols.end(), name) != op_.symbols.end() ||
                       std::any_of(op_.derived.begin(), op_.derived.end(), [&](const auto& x) { return x.first == name; });
    if (!is_identifier(name) || taken)
      r_.fail(kv.first, path, "must be an identifier that is not a symbol or a derived symbol, got \"" + name + "\"");
    data_symbol ds;
    ds.name = name;
    auto input = r_.string_value(d, "clipped_lengths", path + ".clipped_lengths", true);
    auto cap = r_.expression_value(d, "cap", path + ".cap", true);
    auto bound = r_.expression_value(d, "bound", path + ".bound", true);
    if (input) {
      ds.offsets = *input;
      auto t = std::find_if(op_.inputs.begin(), op_.inputs.end(), [&](const tensor_spec& x) { return x.name == *input; });
      if (t == op_.inputs.end() || t->dtype != "int64" || t->shape.size() != 1)
        r_.fail(d["clipped_lengths"], path + ".clipped_lengths",
                "must name a 1-D int64 input (segment offsets), got \"" + *input + "\"");
    }
    if (cap) ds.cap = *cap, lines_[path + ".cap"] = yaml_reader::line_of(d["cap"]);
    if (bound) ds.bound = *bound, lines_[path + ".bound"] = yaml_reader::line_of(d["bound"]);
    op_.data_symbols.push_back(std::move(ds));
  }
  if (!op_.data_symbols.empty() && !root["bytes_floor"].IsDefined())
    r_.fail(map, "data_symbols", "needs a 'bytes_floor' without them (bytes depends on the input set; the floor must hold for every set)");
}

void loader::read_params(const YAML::Node& root) {
  YAML::Node list = r_.child(root, "params", "params", false);
  if (!list.IsDefined()) return;
  if (!list.IsSequence()) {
    r_.fail(list, "params", "must be a list of {name, type, value}, got " + yaml_reader::describe(list));
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = "params[" + std::to_string(i) + "]";
    const YAML::Node& p = list[i];
    if (!p.IsMap()) {
      r_.fail(p, path, "must be a map {name, type, value}, got " + yaml_reader::describe(p));
      continue;
    }
    r_.reject_unknown_keys(p, {"name", "type", "value"}, path + ".");
    param_spec ps;
    auto name = r_.string_value(p, "name", path + ".name", true);
    auto type = r_.string_value(p, "type", path + ".type", true);
    auto value = r_.expression_value(p, "value", path + ".value", true);
    if (name) ps.name = *name;
    if (type) {
      if (*type != "int" && *type != "float") r_.fail(p["type"], path + ".type", "must be int or float, got \"" + *type + "\"");
      ps.is_float = *type == "float";
    }
    if (value) {
      ps.value = *value;
      lines_[path + ".value"] = yaml_reader::line_of(p["value"]);
    }
    op_.params.push_back(std::move(ps));
  }
  if (op_.params.size() > KV_MAX_PARAMS) r_.fail(list, "params", "must have at most " + std::to_string(KV_MAX_PARAMS) + " entries");
}

void loader::read_generators(const YAML::Node& root) {
  YAML::Node g = r_.child(root, "generators", "generators", true);
  if (!g.IsDefined()) return;
  if (!g.IsMap()) {
    r_.fail(g, "generators", "must be a map of input name to a list of distributions, got " + yaml_reader::describe(g));
    return;
  }
  for (const auto& kv : g) {
    const std::string input = kv.first.Scalar();
    const std::string path = "generators." + input;
    bool known = false;
    for (const auto& t : op_.inputs) known |= t.name == input;
    if (!known) r_.fail(kv.first, path, "names no input of the operator");
    if (!kv.second.IsSequence() || kv.second.size() == 0) {
      r_.fail(kv.second, path, "must be a non-empty list of distributions, got " + yaml_reader::describe(kv.second));
      continue;
    }
    std::vector<distribution> dists;
    for (size_t i = 0; i < kv.second.size(); ++i) {
      const YAML::Node& d = kv.second[i];
      const std::string dpath = path + "[" + std::to_string(i) + "]";
      if (!d.IsMap()) {
        r_.fail(d, dpath, "must be a map {dist, ...}, got " + yaml_reader::describe(d));
        continue;
      }
      auto name = r_.string_value(d, "dist", dpath + ".dist", true);
      if (!name) continue;
      auto spec = kDistributions.find(*name);
      if (spec == kDistributions.end()) {
        std::set<std::string> names;
        for (const auto& [n, _] : kDistributions) names.insert(n);
        r_.fail(d["dist"], dpath + ".dist", "must be one of " + join(names) + ", got \"" + *name + "\"");
        continue;
      }
      std::set<std::string> allowed(spec->second.begin(), spec->second.end());
      allowed.insert("dist");
      r_.reject_unknown_keys(d, allowed, dpath + ".");
      distribution dist;
      dist.dist = *name;
      for (const auto& arg : spec->second) {
        auto v = r_.expression_value(d, arg, dpath + "." + arg, true);
        if (v) {
          dist.args[arg] = *v;
          lines_[dpath + "." + arg] = yaml_reader::line_of(d[arg]);
        }
      }
      dists.push_back(std::move(dist));
    }
    op_.generators[input] = std::move(dists);
  }
  for (const auto& t : op_.inputs)
    if (!t.name.empty() && !op_.generators.count(t.name)) r_.fail(g, "generators." + t.name, "is required: every input needs a generator");
}

void loader::read_shapes(const YAML::Node& root, const char* key, std::vector<shape_point>& out, bool required) {
  YAML::Node list = r_.child(root, key, key, required);
  if (!list.IsDefined()) return;
  if (!list.IsSequence() || list.size() == 0) {
    r_.fail(list, key, "must be a non-empty list of {name, <symbol>: integer...}, got " + yaml_reader::describe(list));
    return;
  }
  const std::set<std::string> free(op_.symbols.begin(), op_.symbols.end());
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    const YAML::Node& s = list[i];
    if (!s.IsMap()) {
      r_.fail(s, path, "must be a map {name, <symbol>: integer...}, got " + yaml_reader::describe(s));
      continue;
    }
    shape_point sp;
    auto name = r_.string_value(s, "name", path + ".name", true);
    if (name) sp.name = *name;
    lines_[std::string(key) + ":" + sp.name] = yaml_reader::line_of(s);
    for (const auto& kv : s) {
      const std::string k = kv.first.Scalar();
      if (k == "name") continue;
      if (!free.count(k)) {
        r_.fail(kv.first, path + "." + k, "is not a free symbol of the operator (symbols: " + join(free) + ")");
        continue;
      }
      auto v = r_.as_int(kv.second, path + "." + k);
      if (!v) continue;
      if (*v < 0) {
        r_.fail(kv.second, path + "." + k, "must be a non-negative integer, got " + std::to_string(*v));
        continue;
      }
      sp.values[k] = *v;
    }
    for (const auto& f : free)
      if (!sp.values.count(f) && !s[f].IsDefined()) r_.fail(s, path + "." + f, "is required: every shape point binds every symbol");
    if (op_.find_shape(sp.name)) r_.fail(s, path + ".name", "duplicates shape name '" + sp.name + "'");
    out.push_back(std::move(sp));
  }
}

void loader::read_tolerances(const YAML::Node& root) {
  // Required as soon as some output is floating point (checked below).
  YAML::Node t = r_.child(root, "tolerance", "tolerance", false);
  if (!t.IsDefined()) return;
  if (t.IsDefined() && !t.IsMap()) {
    r_.fail(t, "tolerance", "must be a map of dtype to {atol, rtol}, got " + yaml_reader::describe(t));
    return;
  }
  if (t.IsDefined())
  for (const auto& kv : t) {
    const std::string dn = kv.first.Scalar();
    auto d = parse_dtype(dn);
    if (!d) {
      r_.fail(kv.first, "tolerance." + dn, std::string("must be keyed by a dtype (") + dtype_names_list() + ")");
      continue;
    }
    r_.reject_unknown_keys(kv.second, {"atol", "rtol"}, "tolerance." + dn + ".");
    auto atol = r_.number_value(kv.second, "atol", "tolerance." + dn + ".atol", true);
    auto rtol = r_.number_value(kv.second, "rtol", "tolerance." + dn + ".rtol", true);
    if (atol && rtol) {
      if (*atol < 0 || *rtol < 0) r_.fail(kv.second, "tolerance." + dn, "atol and rtol must be >= 0");
      op_.tolerances[*d] = {*atol, *rtol};
    }
  }
  // Every floating-point output dtype of every variant needs a tolerance.
  for (const auto& v : op_.variants)
    for (const auto& o : op_.outputs) {
      auto d = tensor_dtype(op_, v, o);
      if (d && is_float(*d) && !op_.tolerances.count(*d))
        r_.fail(t.IsDefined() ? t : root, std::string("tolerance.") + dtype_name(*d),
                "is required: output '" + o.name + "' is " + dtype_name(*d) + " in variant '" + v.name + "'");
    }
}

void loader::check_path(const YAML::Node& at, const std::string& key, const fs::path& p) {
  if (!fs::is_regular_file(p)) r_.fail(at, key, "must name an existing file relative to the YAML, got \"" + p.string() + "\" (not found)");
}

void loader::check_expr(const std::string& text, const std::string& key, int line, const std::set<std::string>& allowed) {
  auto syms = expression_symbols(text);
  if (!syms) {
    r_.fail_at_line(line, key, "must be a valid expression: " + syms.error().message);
    return;
  }
  for (const auto& s : *syms)
    if (!allowed.count(s))
      r_.fail_at_line(line, key, "uses unknown symbol '" + s + "' in \"" + text + "\" (known: " + join(allowed) + ")");
}

void loader::check_expressions() {
  std::set<std::string> known(op_.symbols.begin(), op_.symbols.end());
  for (dtype t : {dtype::f32, dtype::f16, dtype::bf16, dtype::i32, dtype::i64, dtype::f64})
    known.insert(std::string("sizeof_") + dtype_name(t));
  if (!op_.variants.empty())
    for (const auto& [sym, _] : op_.variants.front().types) known.insert("sizeof_" + sym);
  for (const auto& [name, text] : op_.derived) {
    check_expr(text, "derived." + name, lines_["derived." + name], known);
    known.insert(name);
  }
  auto tensors = [&](const std::vector<tensor_spec>& ts, const char* key) {
    for (size_t i = 0; i < ts.size(); ++i)
      for (size_t d = 0; d < ts[i].shape.size(); ++d) {
        const std::string k = std::string(key) + "[" + std::to_string(i) + "].shape[" + std::to_string(d) + "]";
        check_expr(ts[i].shape[d], k, lines_[k], known);
      }
  };
  tensors(op_.inputs, "inputs");
  tensors(op_.outputs, "outputs");
  tensors(op_.intermediates, "intermediates");
  for (size_t i = 0; i < op_.parts.size(); ++i) {
    const std::string k = "parts[" + std::to_string(i) + "].workspace_bytes";
    if (lines_.count(k)) check_expr(op_.parts[i].workspace_bytes, k, lines_[k], known);
  }
  for (size_t i = 0; i < op_.params.size(); ++i) {
    const std::string k = "params[" + std::to_string(i) + "].value";
    check_expr(op_.params[i].value, k, lines_[k], known);
  }
  for (const auto& ds : op_.data_symbols) {
    check_expr(ds.cap, "data_symbols." + ds.name + ".cap", lines_["data_symbols." + ds.name + ".cap"], known);
    check_expr(ds.bound, "data_symbols." + ds.name + ".bound", lines_["data_symbols." + ds.name + ".bound"], known);
  }
  // Only `bytes` is counted per input set: bytes_floor (the guard against
  // impossible times) and flops would see the data symbols' bounds.
  std::set<std::string> with_data = known;
  for (const auto& ds : op_.data_symbols) with_data.insert(ds.name);
  for (const auto& f : cost_fields())
    if (!(op_.*f.member).empty())
      check_expr(op_.*f.member, f.key, lines_[f.key], std::string(f.key) == "bytes" ? with_data : known);
  for (const auto& [input, dists] : op_.generators)
    for (size_t i = 0; i < dists.size(); ++i)
      for (const auto& [arg, text] : dists[i].args) {
        const std::string k = "generators." + input + "[" + std::to_string(i) + "]." + arg;
        check_expr(text, k, lines_[k], known);
      }
}

void loader::check_resolution() {
  auto check = [&](const std::vector<shape_point>& points, const char* key, bool holdout) {
    for (const auto& sp : points)
      if (const std::string why = shape_point_problem(op_, sp, holdout); !why.empty()) {
        r_.fail_at_line(lines_[std::string(key) + ":" + sp.name], std::string(key) + "." + sp.name, why);
        return;
      }
  };
  check(op_.shapes, "shapes", false);
  check(op_.holdout_shapes, "holdout_shapes", true);
}

expected<operator_spec> loader::run() {
  std::error_code ec;
  if (!fs::exists(file_, ec)) return make_error(errc::not_found, file_.string() + ": cannot open operator file");
  if (!fs::is_regular_file(file_, ec))
    return make_error(errc::invalid_input, file_.string() + ": expected an operator YAML file, got a directory or special file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(file_.string());
  } catch (const YAML::BadFile&) {
    return make_error(errc::not_found, file_.string() + ": cannot open operator file");
  } catch (const YAML::Exception& e) {
    return make_error(errc::invalid_input,
                      file_.string() + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) return make_error(errc::invalid_input, file_.string() + ":1: the document must be a map of operator keys");
  op_.file = file_;
  std::set<std::string> top = kTopKeys;
  for (const auto& k : baseline_keys()) top.insert(k);
  r_.reject_unknown_keys(root, top, "");

  if (auto name = r_.string_value(root, "name", "name", true)) {
    op_.name = *name;
    if (!is_identifier(*name)) r_.fail(root["name"], "name", "must be an identifier, got \"" + *name + "\"");
    else if (*name != file_.stem().string())
      r_.fail(root["name"], "name", "must equal the file name '" + file_.stem().string() + "', got \"" + *name + "\"");
  }
  if (auto cls = r_.string_value(root, "class", "class", true)) {
    op_.op_class = *cls;
    if (!kClasses.count(*cls)) r_.fail(root["class"], "class", "must be one of " + join(kClasses) + ", got \"" + *cls + "\"");
  }
  if (auto d = r_.string_value(root, "description", "description", true)) op_.description = *d;
  read_variants(root);
  if (auto syms = r_.string_list(root, "symbols", "symbols", true)) {
    for (const auto& s : *syms)
      if (!is_identifier(s)) r_.fail(root["symbols"], "symbols", "must be identifiers, got \"" + s + "\"");
    op_.symbols = *syms;
  }
  YAML::Node derived = r_.child(root, "derived", "derived", false);
  if (derived.IsDefined()) {
    if (!derived.IsMap()) r_.fail(derived, "derived", "must be a map of symbol to expression, got " + yaml_reader::describe(derived));
    else
      for (const auto& kv : derived) {
        if (!kv.second.IsScalar()) {
          r_.fail(kv.second, "derived." + kv.first.Scalar(), "must be an expression, got " + yaml_reader::describe(kv.second));
          continue;
        }
        op_.derived.emplace_back(kv.first.Scalar(), kv.second.Scalar());
        lines_["derived." + kv.first.Scalar()] = yaml_reader::line_of(kv.second);
      }
  }
  read_tensors(root, "inputs", op_.inputs);
  read_tensors(root, "outputs", op_.outputs);
  if (root["intermediates"].IsDefined() && op_.op_class == "sequence")
    read_tensors(root, "intermediates", op_.intermediates);
  read_params(root);
  read_generators(root);
  read_shapes(root, "shapes", op_.shapes, true);
  read_shapes(root, "holdout_shapes", op_.holdout_shapes, true);
  for (const auto& f : cost_fields()) {
    auto v = r_.expression_value(root, f.key, f.key, f.required);
    if (!v) continue;
    lines_[f.key] = yaml_reader::line_of(root[f.key]);
    op_.*f.member = *v;
  }
  read_data_symbols(root);
  read_tolerances(root);
  if (auto v = r_.number_value(root, "reference_max_flops", "reference_max_flops", false)) op_.reference_max_flops = *v;
  if (auto v = r_.number_value(root, "max_speedup", "max_speedup", false)) {
    if (*v <= 1) r_.fail(root["max_speedup"], "max_speedup", "must be greater than 1");
    op_.max_speedup = *v;
  }
  read_torch(r_, root, file_, op_);
  read_graph(r_, root, op_);
  // Without a C++ reference, PyTorch (in fp64) is the reference.
  if (auto ref = r_.string_value(root, "reference", "reference", !op_.has_torch())) {
    op_.reference = file_.parent_path() / *ref;
    check_path(root["reference"], "reference", op_.reference);
  }
  const auto deprecated = read_baselines(r_, root, file_, op_);
  // `default_variant: {<backend>: <variant>}`: what `variants: default` sweeps
  // on that backend (else the first variant), e.g. the 16-bit DPE's GEMM.
  if (YAML::Node dv = r_.child(root, "default_variant", "default_variant", false); dv.IsDefined()) {
    if (!dv.IsMap()) r_.fail(dv, "default_variant", "must map backend names to variant names, got " + yaml_reader::describe(dv));
    else
      for (const auto& kv : dv) {
        const std::string backend = kv.first.Scalar(), name = kv.second.Scalar();
        if (!op_.baselines.count(backend))
          r_.fail(kv.first, "default_variant." + backend, "names a backend the operator has no 'baselines." + backend + "' for");
        else if (!op_.find_variant(name))
          r_.fail(kv.second, "default_variant." + backend, "names variant '" + name + "', which is not in 'variants'");
        else
          op_.default_variant[backend] = name;
      }
  }
  YAML::Node tmpl = r_.child(root, "template", "template", false);
  if (tmpl.IsDefined()) read_template_keys(r_, tmpl, "template", op_.template_params);
  read_parts(r_, root, op_, lines_);
  if (r_.ok()) check_expressions();
  if (r_.ok()) check_resolution();
  if (!r_.ok()) {
    std::string all;
    for (const auto& e : r_.errors()) all += (all.empty() ? "" : "\n") + e;
    return make_error(errc::invalid_input, all);
  }
  note_deprecated_baselines(file_, deprecated);
  return op_;
}

}  // namespace

expected<operator_spec> load_operator(const fs::path& yaml_file) { return loader(yaml_file).run(); }

fs::path default_operator_dir() { return data_root() / "config" / "operators"; }

expected<std::vector<operator_spec>> load_catalog(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  if (ec) return make_error(errc::not_found, dir.string() + ": cannot list operator directory: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<operator_spec> ops;
  std::string errors;
  for (const auto& f : files) {
    auto op = load_operator(f);
    if (op) ops.push_back(std::move(*op));
    else errors += (errors.empty() ? "" : "\n") + op.error().message;
  }
  if (!errors.empty()) return make_error(errc::invalid_input, errors);
  return ops;
}

expected<operator_spec> find_operator(const std::string& name_or_path) {
  fs::path p(name_or_path);
  if (p.extension() == ".yaml" || name_or_path.find('/') != std::string::npos) return load_operator(p);
  const fs::path f = default_operator_dir() / (name_or_path + ".yaml");
  if (!fs::exists(f)) return make_error(errc::not_found, "unknown operator '" + name_or_path + "': no " + f.string() + " (see `kevolve ops list`)");
  return load_operator(f);
}

}  // namespace kevolve::spec
