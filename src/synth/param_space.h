// A template's declared parameter space: each parameter an ordered list of
// allowed values (ints or strings) and a default. Parameter sets are JSON
// objects (sorted keys), so they print and parse deterministically.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/rng.h"

namespace kevolve::synth {

using param_set = nlohmann::json;  // object: name -> value

struct param_def {
  std::string name;
  std::vector<nlohmann::json> values;  // ordered: "increase" moves right
  nlohmann::json default_value;
  std::string doc;

  // Index of v in values, or -1.
  int index_of(const nlohmann::json& v) const;
};

class param_space {
 public:
  param_space() = default;
  explicit param_space(std::vector<param_def> defs) : defs_(std::move(defs)) {}
  // {"vec": {"values": [4, 8, 16], "default": 16, "doc": "..."}, ...}
  static expected<param_space> from_json(const nlohmann::json& j, const std::string& context);

  const std::vector<param_def>& defs() const { return defs_; }
  const param_def* find(const std::string& name) const;
  bool empty() const { return defs_.empty(); }

  param_set defaults() const;
  param_set sample(rng& r) const;
  // Every declared parameter present with an allowed value; missing or
  // unknown values replaced by the default, extra keys dropped.
  param_set normalize(const param_set& p) const;
  bool contains(const param_set& p) const;

  // One step along the ordered values; false when already at the end.
  bool step(param_set& p, const std::string& name, int direction) const;
  // A different allowed value, chosen by r; false when only one value exists.
  bool switch_value(param_set& p, const std::string& name, rng& r) const;
  // A random change of one parameter (a step or a switch); returns its name.
  std::string mutate_one(param_set& p, rng& r, const std::vector<std::string>& avoid = {}) const;

 private:
  std::vector<param_def> defs_;
};

// Keys whose values differ between a and b.
std::vector<std::string> changed_keys(const param_set& a, const param_set& b);

}  // namespace kevolve::synth
