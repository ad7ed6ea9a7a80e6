#include "synth/gemm_bindings.h"

#include <cstdlib>
#include <sstream>
#include <vector>

#include "synth/binding_keys.h"

namespace kevolve::synth {

namespace {

// The epilogue's expression and what it reads: every input it names (but
// the operands) through `load(k)` as `type name`, every param by name.
struct epilogue_binding {
  std::string expr, loads, inputs;  // inputs: their indices, comma-separated ("-1": none)
  int count = 0;
};

expected<epilogue_binding> bind_epilogue(const spec::operator_spec& op, const std::string& where,
                                         const std::vector<int>& operands, const std::string& type,
                                         const std::string& load, const std::string& reads) {
  epilogue_binding e;
  auto expr = expression_key(op, where, "expr", "acc");
  if (!expr) return tl::unexpected(expr.error());
  e.expr = *expr;
  const auto used = identifiers(e.expr);
  std::ostringstream loads, inputs;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const auto& n = op.inputs[k].name;
    if (!used.count(n)) continue;
    if (!is_identifier(n) || n == "acc")
      return make_error(errc::invalid_input, where + "input '" + n + "' cannot be named in 'template.expr'");
    for (int o : operands)
      if (static_cast<int>(k) == o)
        return make_error(errc::invalid_input, where + "'template.expr' names the operand '" + n + "'; it may name `acc`, " +
                                                   reads + " and params");
    loads << "        [[maybe_unused]] const " << type << " " << n << " = " << load << "(" << k << ");\n";
    inputs << (e.count++ ? ", " : "") << k;
  }
  for (size_t k = 0; k < op.params.size(); ++k)
    if (is_identifier(op.params[k].name) && used.count(op.params[k].name))
      loads << "        [[maybe_unused]] const float " << op.params[k].name << " = prm[" << k << "];\n";
  e.loads = loads.str();
  e.inputs = e.count ? inputs.str() : "-1";
  return e;
}

// The row op's kind among `kinds` ({key value, template constant}).
expected<std::string> row_kind(const spec::operator_spec& op, const std::string& where,
                               const std::vector<std::pair<std::string, std::string>>& kinds) {
  const std::string row = key_or(op, "row", "none");
  std::string names;
  for (const auto& [k, c] : kinds) {
    if (k == row) return c;
    names += (names.empty() ? "" : ", ") + k;
  }
  return make_error(errc::invalid_input, where + "'template.row' must be one of " + names + "; got '" + row + "'");
}

expected<long> positive_int(const spec::operator_spec& op, const std::string& where, const std::string& key,
                            const std::string& fallback) {
  const std::string v = key_or(op, key, fallback);
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 1)
    return make_error(errc::invalid_input, where + "'template." + key + "' must be a positive integer, got '" + v + "'");
  return n;
}

expected<std::string> eps_key(const spec::operator_spec& op, const std::string& where) {
  const std::string v = key_or(op, "eps", "1e-5");
  char* end = nullptr;
  const double e = std::strtod(v.c_str(), &end);
  if (*end != '\0' || !(e >= 0))
    return make_error(errc::invalid_input, where + "'template.eps' must be a number >= 0, got '" + v + "'");
  return v;
}

// The norm's affine inputs, which only `row: group_norm` takes.
expected<std::pair<int, int>> affine(const spec::operator_spec& op, const std::string& where) {
  auto gamma = input_named_by(op, where, "gamma", false), beta = input_named_by(op, where, "beta", false);
  if (!gamma) return tl::unexpected(gamma.error());
  if (!beta) return tl::unexpected(beta.error());
  if ((*gamma >= 0 || *beta >= 0) && key_or(op, "row", "none") != "group_norm")
    return make_error(errc::invalid_input, where + "'template.gamma' and 'template.beta' belong to row: group_norm");
  return std::pair<int, int>{*gamma, *beta};
}

// A per-axis list ("2,2") of `dims` integers >= least, padded in front to
// 3 with `pad` for the template's 3-axis arrays.
expected<std::string> axis_list(const spec::operator_spec& op, const std::string& where, const std::string& key, int dims,
                                long least, const std::string& fallback) {
  std::string v = key_or(op, key, "");
  std::vector<long> vals;
  if (v.empty()) {
    vals.assign(static_cast<size_t>(dims), std::strtol(fallback.c_str(), nullptr, 10));
  } else {
    std::string cur;
    for (char c : v + ",") {
      if (c == ',') {
        char* end = nullptr;
        const long n = std::strtol(cur.c_str(), &end, 10);
        if (cur.empty() || *end != '\0' || n < least)
          return make_error(errc::invalid_input, where + "'template." + key + "' must be " + std::to_string(dims) +
                                                     " integers >= " + std::to_string(least) + ", comma-separated; got '" + v + "'");
        vals.push_back(n);
        cur.clear();
      } else if (c != ' ') {
        cur += c;
      }
    }
    if (static_cast<int>(vals.size()) != dims)
      return make_error(errc::invalid_input, where + "'template." + key + "' must be " + std::to_string(dims) +
                                                 " integers (one per spatial axis); got '" + v + "'");
  }
  std::string out;
  const long pad = least == 1 ? 1 : 0;  // a missing leading axis: stride, dilation 1; padding 0
  for (int a = 0; a < 3; ++a) {
    const long n = a < 3 - dims ? pad : vals[static_cast<size_t>(a - (3 - dims))];
    out += (a ? ", " : "") + std::to_string(n);
  }
  return out;
}

}  // namespace

expected<std::map<std::string, std::string>> bind_matmul(const spec::operator_spec& op) {
  const std::string where = op.file.string() + ": matmul template: ";
  if (op.outputs.size() != 1) return make_error(errc::invalid_input, where + "needs 1 output");
  auto a = input_named_by(op, where, "a", true), b = input_named_by(op, where, "b", true);
  if (!a) return tl::unexpected(a.error());
  if (!b) return tl::unexpected(b.error());
  if (*a == *b) return make_error(errc::invalid_input, where + "'template.a' and 'template.b' must be two inputs");
  auto ta = flag_key(op, where, "trans_a"), tb = flag_key(op, where, "trans_b");
  if (!ta) return tl::unexpected(ta.error());
  if (!tb) return tl::unexpected(tb.error());
  auto row = row_kind(op, where, {{"none", "kRowNone"}, {"sum", "kRowSum"}, {"mean", "kRowMean"},
                                  {"softmax", "kRowSoftmax"}, {"log_softmax", "kRowLogSoftmax"},
                                  {"group_norm", "kRowGroupNorm"}});
  if (!row) return tl::unexpected(row.error());
  auto groups = positive_int(op, where, "groups", "1");
  if (!groups) return tl::unexpected(groups.error());
  auto eps = eps_key(op, where);
  if (!eps) return tl::unexpected(eps.error());
  auto ab = affine(op, where);
  if (!ab) return tl::unexpected(ab.error());
  auto e = bind_epilogue(op, where, {*a, *b}, "vf", "KV_COL", "1-D inputs");
  if (!e) return tl::unexpected(e.error());
  return std::map<std::string, std::string>{
      {"MM_A", std::to_string(*a)},          {"MM_B", std::to_string(*b)},
      {"MM_TA", *ta},                        {"MM_TB", *tb},
      {"MM_LOADS", e->loads},                {"MM_EXPR", e->expr},
      {"MM_COLS", e->inputs},                {"MM_NCOLS", std::to_string(e->count)},
      {"MM_ROW", *row},                      {"MM_GAMMA", std::to_string(ab->first)},
      {"MM_BETA", std::to_string(ab->second)}, {"MM_GROUPS", std::to_string(*groups)},
      {"MM_EPS", *eps},                      {"MM_NPARAMS", std::to_string(op.params.size())},
      {"MM_IDENTITY", e->expr == "acc" ? "true" : "false"},
  };
}

expected<std::map<std::string, std::string>> bind_conv(const spec::operator_spec& op) {
  const std::string where = op.file.string() + ": conv template: ";
  if (op.outputs.size() != 1) return make_error(errc::invalid_input, where + "needs 1 output");
  auto x = input_named_by(op, where, "x", true), w = input_named_by(op, where, "w", true);
  if (!x) return tl::unexpected(x.error());
  if (!w) return tl::unexpected(w.error());
  if (*x == *w) return make_error(errc::invalid_input, where + "'template.x' and 'template.w' must be two inputs");
  const int dims = static_cast<int>(op.inputs[static_cast<size_t>(*x)].shape.size()) - 2;
  if (dims < 1 || dims > 3)
    return make_error(errc::invalid_input, where + "input '" + op.inputs[static_cast<size_t>(*x)].name +
                                               "' must be [N, C, ...] with 1 to 3 spatial axes");
  auto transposed = flag_key(op, where, "transposed");
  if (!transposed) return tl::unexpected(transposed.error());
  auto stride = axis_list(op, where, "stride", dims, 1, "1"), padding = axis_list(op, where, "padding", dims, 0, "0");
  auto dilation = axis_list(op, where, "dilation", dims, 1, "1");
  auto outpad = axis_list(op, where, "output_padding", dims, 0, "0");
  for (auto* l : {&stride, &padding, &dilation, &outpad})
    if (!*l) return tl::unexpected(l->error());
  auto groups = positive_int(op, where, "groups", "1"), norm_groups = positive_int(op, where, "norm_groups", "1");
  if (!groups) return tl::unexpected(groups.error());
  if (!norm_groups) return tl::unexpected(norm_groups.error());
  auto row = row_kind(op, where, {{"none", "kRowNone"}, {"mean", "kRowMean"}, {"group_norm", "kRowGroupNorm"}});
  if (!row) return tl::unexpected(row.error());
  auto eps = eps_key(op, where);
  if (!eps) return tl::unexpected(eps.error());
  auto ab = affine(op, where);
  if (!ab) return tl::unexpected(ab.error());
  auto e = bind_epilogue(op, where, {*x, *w}, "float", "KV_CH", "inputs of one value per output channel");
  if (!e) return tl::unexpected(e.error());
  return std::map<std::string, std::string>{
      {"CV_X", std::to_string(*x)},          {"CV_W", std::to_string(*w)},
      {"CV_TRANSPOSED", *transposed == "1" ? "true" : "false"},
      {"CV_DIMS", std::to_string(dims)},     {"CV_STRIDE", *stride},
      {"CV_PADDING", *padding},              {"CV_DILATION", *dilation},
      {"CV_OUTPUT_PADDING", *outpad},        {"CV_GROUPS", std::to_string(*groups)},
      {"CV_ROW", *row},                      {"CV_GAMMA", std::to_string(ab->first)},
      {"CV_BETA", std::to_string(ab->second)}, {"CV_NORM_GROUPS", std::to_string(*norm_groups)},
      {"CV_EPS", *eps},                      {"CV_IDENTITY", e->expr == "acc" ? "true" : "false"},
      {"CV_LOADS", e->loads},                {"CV_EXPR", e->expr},
      {"CV_CHS", e->inputs},                 {"CV_NCH", std::to_string(e->count)},
      {"CV_NPARAMS", std::to_string(op.params.size())},
  };
}

namespace {

// x (default input 0), eps, and the optional per-channel gamma and beta of a
// group norm (groups > 0) or a batch norm (groups 0: no template.groups).
expected<std::map<std::string, std::string>> bind_norm(const spec::operator_spec& op, const std::string& what,
                                                       bool grouped) {
  const std::string where = op.file.string() + ": " + what + " template: ";
  if (op.outputs.size() != 1) return make_error(errc::invalid_input, where + "needs 1 output");
  auto x = input_named_by(op, where, "x", false);
  if (!x) return tl::unexpected(x.error());
  auto groups = grouped ? positive_int(op, where, "groups", "") : expected<long>(0L);
  if (!groups) return tl::unexpected(groups.error());
  auto eps = eps_key(op, where);
  if (!eps) return tl::unexpected(eps.error());
  auto gamma = input_named_by(op, where, "gamma", false), beta = input_named_by(op, where, "beta", false);
  if (!gamma) return tl::unexpected(gamma.error());
  if (!beta) return tl::unexpected(beta.error());
  return std::map<std::string, std::string>{
      {"GN_X", std::to_string(*x < 0 ? 0 : *x)}, {"GN_GAMMA", std::to_string(*gamma)},
      {"GN_BETA", std::to_string(*beta)},         {"GN_GROUPS", std::to_string(*groups)},
      {"GN_EPS", *eps},
  };
}

}  // namespace

expected<std::map<std::string, std::string>> bind_group_norm(const spec::operator_spec& op) {
  return bind_norm(op, "group_norm", true);
}

expected<std::map<std::string, std::string>> bind_batch_norm(const spec::operator_spec& op) {
  return bind_norm(op, "batch_norm", false);
}

expected<std::map<std::string, std::string>> bind_pooling(const spec::operator_spec& op) {
  const std::string where = op.file.string() + ": pooling template: ";
  if (op.outputs.size() != 1 || op.inputs.empty()) return make_error(errc::invalid_input, where + "needs 1 input and 1 output");
  const std::string kind = key_or(op, "kind", "");
  if (kind != "avg" && kind != "max")
    return make_error(errc::invalid_input, where + "'template.kind' must be avg or max, got '" + kind + "'");
  const std::string kernel = key_or(op, "kernel", "");
  if (kernel.empty()) return make_error(errc::invalid_input, where + "'template.kernel' is missing (one size per spatial axis)");
  int dims = 1;
  for (char c : kernel) dims += c == ',';
  if (dims > 3) return make_error(errc::invalid_input, where + "'template.kernel' must have 1 to 3 sizes, got '" + kernel + "'");
  auto k = axis_list(op, where, "kernel", dims, 1, "1"), st = axis_list(op, where, "stride", dims, 1, "1");
  auto pd = axis_list(op, where, "padding", dims, 0, "0"), dl = axis_list(op, where, "dilation", dims, 1, "1");
  for (auto* l : {&k, &st, &pd, &dl})
    if (!*l) return tl::unexpected(l->error());
  if (key_or(op, "stride", "").empty()) st = k;  // PyTorch's default stride: the kernel
  auto ceil = flag_key(op, where, "ceil_mode");
  if (!ceil) return tl::unexpected(ceil.error());
  const std::string incl = key_or(op, "count_include_pad", "1");
  if (incl != "0" && incl != "1")
    return make_error(errc::invalid_input, where + "'template.count_include_pad' must be 0 or 1, got '" + incl + "'");
  std::string divisor = "0";
  if (!key_or(op, "divisor", "").empty()) {
    auto d = positive_int(op, where, "divisor", "");
    if (!d) return tl::unexpected(d.error());
    divisor = std::to_string(*d);
  }
  return std::map<std::string, std::string>{
      {"PL_KERNEL", *k},  {"PL_STRIDE", *st},  {"PL_PADDING", *pd},
      {"PL_DILATION", *dl}, {"PL_CEIL", *ceil == "1" ? "true" : "false"},
      {"PL_INCLUDE_PAD", incl == "1" ? "true" : "false"}, {"PL_DIVISOR", divisor},
  };
}

}  // namespace kevolve::synth
