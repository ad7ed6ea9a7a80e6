// YAML front matter of a Markdown document ("---\nkey: value\n---\nbody"),
// as used by the knowledge base (knowledge/**/*.md). Every value is read as a
// list of strings: a scalar is a list of one.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/error.h"

namespace kevolve::spec {

struct front_matter {
  std::map<std::string, std::vector<std::string>> fields;
  std::string body;  // the Markdown after the closing ---
  int body_line = 1;  // 1-based line of the body's first line in the file
};

// `file` names the document in errors ("knowledge/x.md:3: 'level' must be ...").
// A document without front matter is an error.
expected<front_matter> parse_front_matter(const std::string& text, const std::string& file);

}  // namespace kevolve::spec
