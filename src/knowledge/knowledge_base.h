// The knowledge base: Markdown documents with YAML front matter under
// knowledge/ (constraints/, guides/, hardware/<profile>/, skills/), and
// retrieval in two steps: diagnose from a verdict (triggers such as
// memory_bound or compile_error), then fetch the documents whose triggers
// match, ranked with BM25 over their text. Front matter keys:
//   title: text                     level: constraint | guide | hardware | skill
//   backends: [cpu, cuda, ...]      (empty: every backend)
//   hardware: [h200, ...]           (empty: every hardware profile)
//   classes: [row_reduction, ...]   operator classes (empty: every class)
//   triggers: [memory_bound, ...]   `always` matches every diagnosis
//   tags: [...]                     extra words for the text search
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"

namespace kevolve::knowledge {

struct document {
  std::string path;  // relative to the knowledge root, e.g. "guides/debugging.md"
  std::string title;
  std::string level;
  std::vector<std::string> backends, hardware, classes, triggers, tags;
  std::string body;
};

struct query {
  std::string text;                   // free text (BM25)
  std::vector<std::string> triggers;  // from diagnose(); empty: text only
  std::string backend;                // "" any
  std::string hardware;               // "" any
  std::string op_class;               // "" any
  std::vector<std::string> levels;    // empty: guide, hardware, skill
  size_t limit = 5;
};

struct hit {
  const document* doc = nullptr;
  double score = 0;
  std::vector<std::string> matched;  // triggers that matched
};

// What a verdict says about the next step (the trigger vocabulary).
struct verdict_signals {
  bool has_parent = false;
  std::string status;       // eval status name: ok, compile_failed, ...
  std::string bottleneck;   // memory-bound, compute-bound, latency-bound
  double roofline_fraction = 0;
  std::string diagnostics;  // compiler output or failure reason
};
std::vector<std::string> diagnose(const verdict_signals& v);

class knowledge_base {
 public:
  // Loads every *.md below `root` except README.md and prompts/ (default:
  // $KEVOLVE_HOME/knowledge). Errors name the file and line.
  static expected<knowledge_base> load(const std::filesystem::path& root = {});
  static std::filesystem::path default_root();
  // One more document that is not under the root (a skill distilled from a
  // --seed-from store): `path` names it in prompts and errors.
  expected<void> add(const std::string& path, const std::string& text);

  const std::vector<document>& documents() const { return docs_; }
  const document* find(const std::string& path) const;
  // Constraint documents for a backend (the prompt always carries them).
  std::vector<const document*> constraints(const std::string& backend) const;
  std::vector<hit> search(const query& q) const;

 private:
  static expected<document> parse_document(const std::string& text, const std::string& path, const std::string& name);
  void index();
  bool applies(const document& d, const query& q) const;
  double bm25(size_t doc, const std::vector<std::string>& terms) const;

  std::vector<document> docs_;
  std::vector<std::map<std::string, int>> tf_;
  std::vector<double> length_;
  std::map<std::string, int> df_;
  double avg_length_ = 1;
};

// Lowercase words of letters, digits and '_' (also the BM25 tokens).
std::vector<std::string> tokenize(const std::string& text);

}  // namespace kevolve::knowledge
