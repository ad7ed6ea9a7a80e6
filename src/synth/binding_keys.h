// What the class bindings (bindings.cpp, gemm_bindings.cpp) read from an
// operator's `template:` map: identifiers, inputs named by a key, 0/1 flags.
#pragma once

#include <cctype>
#include <set>
#include <string>

#include "common/error.h"
#include "spec/operator_spec.h"

namespace kevolve::synth {

inline bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// The key's value, or fallback where it is absent or empty.
inline std::string key_or(const spec::operator_spec& op, const std::string& key, const std::string& fallback) {
  auto it = op.template_params.find(key);
  return it == op.template_params.end() || it->second.empty() ? fallback : it->second;
}

// Identifiers of a C expression (function names included).
inline std::set<std::string> identifiers(const std::string& e) {
  std::set<std::string> out;
  for (size_t i = 0; i < e.size();) {
    if (std::isalpha(static_cast<unsigned char>(e[i])) || e[i] == '_') {
      size_t j = i;
      while (j < e.size() && (std::isalnum(static_cast<unsigned char>(e[j])) || e[j] == '_')) ++j;
      out.insert(e.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(e[i])) || e[i] == '.') {
      while (i < e.size() && (std::isalnum(static_cast<unsigned char>(e[i])) || e[i] == '.')) ++i;  // 1e-05f
    } else {
      ++i;
    }
  }
  return out;
}

// The index of the input the key names; -1 where an optional key is absent.
inline expected<int> input_named_by(const spec::operator_spec& op, const std::string& where, const std::string& key,
                                    bool required) {
  auto it = op.template_params.find(key);
  if (it == op.template_params.end() || it->second.empty()) {
    if (required) return make_error(errc::invalid_input, where + "'template." + key + "' is missing (an input's name)");
    return -1;
  }
  for (size_t k = 0; k < op.inputs.size(); ++k)
    if (op.inputs[k].name == it->second) return static_cast<int>(k);
  return make_error(errc::invalid_input, where + "'template." + key + "': '" + it->second + "' is no input");
}

// The key's value (or fallback) where it is one C expression: no `;`, no `{`.
inline expected<std::string> expression_key(const spec::operator_spec& op, const std::string& where,
                                            const std::string& key, const std::string& fallback) {
  std::string e = key_or(op, key, fallback);
  if (e.find(';') != std::string::npos || e.find('{') != std::string::npos)
    return make_error(errc::invalid_input, where + "'template." + key + "' must be one expression");
  return e;
}

// "0" or "1" (default "0").
inline expected<std::string> flag_key(const spec::operator_spec& op, const std::string& where, const std::string& key) {
  const std::string v = key_or(op, key, "0");
  if (v != "0" && v != "1")
    return make_error(errc::invalid_input, where + "'template." + key + "' must be 0 or 1, got '" + v + "'");
  return v;
}

}  // namespace kevolve::synth
