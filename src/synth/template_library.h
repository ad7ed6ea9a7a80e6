// The builtin synthesizer's kernel templates, loaded from
// knowledge/templates/<backend>/*.json (metadata) and *.cpp.tmpl (source with
// placeholders). Format: knowledge/templates/README.md.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "spec/operator_spec.h"
#include "synth/param_space.h"

namespace kevolve::synth {

struct template_info {
  std::string name;     // "<backend>/<file stem>", e.g. "cpu/row_softmax"
  std::string backend;
  std::filesystem::path metadata_file;
  std::filesystem::path source_file;
  std::string description;
  std::vector<std::string> operators;         // served by name
  std::string op_class;                       // served by class, when the keys below match
  std::map<std::string, std::string> match;   // template key -> required value
  std::vector<std::string> requires_keys;     // template keys that must exist
  std::vector<std::string> dtypes;            // dtypes it handles; empty: any
  std::string binding;                        // class binding that fills extra placeholders
  int priority = 0;                           // higher is preferred when several serve
  param_space space;

  // Whether it serves the operator (any variant when v is null).
  bool serves(const spec::operator_spec& op, const spec::variant* v) const;
  bool serves_by_name(const spec::operator_spec& op) const;
};

class template_library {
 public:
  // Loads every *.json below `root` (knowledge/templates); all problems, one per line.
  static expected<template_library> load(const std::filesystem::path& root);
  // knowledge/templates under data_root().
  static std::filesystem::path default_root();

  const std::vector<template_info>& templates() const { return templates_; }
  const template_info* find(const std::string& name) const;
  // Templates serving the operator on the backend, best first (by name match,
  // then priority, then name).
  std::vector<const template_info*> serving(const spec::operator_spec& op, const spec::variant* v,
                                            const std::string& backend) const;
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
  std::vector<template_info> templates_;
};

}  // namespace kevolve::synth
