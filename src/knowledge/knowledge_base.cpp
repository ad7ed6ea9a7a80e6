#include "knowledge/knowledge_base.h"

#include <algorithm>
#include <regex>
#include <cctype>
#include <cmath>
#include <set>

#include "common/fs.h"
#include "common/paths.h"
#include "spec/front_matter.h"

namespace kevolve::knowledge {
namespace fs = std::filesystem;

namespace {

const std::set<std::string> kLevels = {"constraint", "guide", "hardware", "skill"};
const std::set<std::string> kKeys = {"title", "level", "backends", "hardware", "classes", "triggers", "tags"};

bool contains(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Empty list or "any": every value.
bool open_or_has(const std::vector<std::string>& v, const std::string& x) {
  return x.empty() || v.empty() || contains(v, x) || contains(v, "any");
}

}  // namespace

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> out;
  std::string w;
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '_') {
      w += char(std::tolower(c));
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

std::vector<std::string> diagnose(const verdict_signals& v) {
  std::vector<std::string> t;
  if (!v.has_parent) return {"first_draft"};
  std::string diag = v.diagnostics;
  std::transform(diag.begin(), diag.end(), diag.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v.status == "compile_failed") t.push_back("compile_error");
  else if (v.status == "wrong_result") t.push_back("wrong_result");
  else if (v.status == "runtime_failed" || v.status == "crashed") t.push_back("runtime_error");
  else if (v.status == "timeout") t.push_back("timeout");
  else if (v.status == "suspicious") t.push_back("suspicious");
  else if (v.status == "ok") {
    if (v.bottleneck == "memory-bound") t.push_back("memory_bound");
    else if (v.bottleneck == "compute-bound") t.push_back("compute_bound");
    else if (v.bottleneck == "latency-bound") {
      t.push_back("latency_bound");
      t.push_back("low_occupancy");
    }
    if (v.roofline_fraction > 0 && v.roofline_fraction < 0.3) t.push_back("far_from_roofline");
  }
  // Compilers report spills and occupancy on every compile ("0 bytes spill
  // stores", hip's "VGPRs Spill: 0", "Occupancy [waves/SIMD]: 8"): only
  // non-zero spills and low occupancy count.
  static const std::regex spills(R"(([1-9][0-9]* bytes spill)|(spill[a-z ]*: *[1-9]))");
  static const std::regex waves(R"(occupancy \[waves/simd\]: *([0-9]+))");
  if (std::regex_search(diag, spills)) t.push_back("register_spills");
  bool low = false, reported = false;
  for (auto it = std::sregex_iterator(diag.begin(), diag.end(), waves); it != std::sregex_iterator(); ++it) {
    reported = true;
    low = low || std::stoi((*it)[1].str()) <= 2;
  }
  if (!reported) low = diag.find("occupancy") != std::string::npos;
  if (low && !contains(t, "low_occupancy")) t.push_back("low_occupancy");
  return t;
}

fs::path knowledge_base::default_root() { return data_root() / "knowledge"; }

expected<knowledge_base> knowledge_base::load(const fs::path& root_in) {
  const fs::path root = root_in.empty() ? default_root() : root_in;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return make_error(errc::not_found, root.string() + ": no knowledge directory");
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path rel = fs::relative(it->path(), root, ec);
    const std::string top = rel.begin()->string();
    if (it->is_directory() && (top == "prompts" || top == "templates" || top == "examples")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".md" && it->path().filename() != "README.md")
      files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  knowledge_base kb;
  for (const auto& f : files) {
    const std::string rel = fs::relative(f, root, ec).string();
    auto text = read_file(f);
    if (!text) return tl::unexpected(text.error());
    auto d = parse_document(*text, rel, (root.filename() / rel).string());
    if (!d) return tl::unexpected(d.error());
    kb.docs_.push_back(std::move(*d));
  }
  kb.index();
  return kb;
}

expected<void> knowledge_base::add(const std::string& path, const std::string& text) {
  auto d = parse_document(text, path, path);
  if (!d) return tl::unexpected(d.error());
  docs_.push_back(std::move(*d));
  index();
  return {};
}

expected<document> knowledge_base::parse_document(const std::string& text, const std::string& path,
                                                  const std::string& name) {
  auto fm = spec::parse_front_matter(text, name);
  if (!fm) return tl::unexpected(fm.error());
  document d;
  d.path = path;
  for (const auto& [key, values] : fm->fields) {
    if (!kKeys.count(key))
      return make_error(errc::invalid_input, name + ": unknown front matter key '" + key +
                                                 "' (expected title, level, backends, hardware, classes, triggers, tags)");
    if ((key == "title" || key == "level") && values.size() != 1)
      return make_error(errc::invalid_input, name + ": '" + key + "' must be one string");
  }
  auto get = [&](const char* k) { auto it = fm->fields.find(k); return it == fm->fields.end() ? std::vector<std::string>{} : it->second; };
  if (auto t = get("title"); !t.empty()) d.title = t[0];
  if (auto l = get("level"); !l.empty()) d.level = l[0];
  if (!kLevels.count(d.level))
    return make_error(errc::invalid_input, name + ": 'level' must be constraint, guide, hardware or skill, got '" + d.level + "'");
  d.backends = get("backends");
  d.hardware = get("hardware");
  d.classes = get("classes");
  d.triggers = get("triggers");
  d.tags = get("tags");
  if (d.title.empty()) return make_error(errc::invalid_input, name + ": 'title' is missing");
  d.body = std::move(fm->body);
  return d;
}

// BM25 statistics: title and tags count with the body.
void knowledge_base::index() {
  tf_.clear();
  length_.clear();
  df_.clear();
  double total = 0;
  for (const auto& d : docs_) {
    std::string all = d.title + " " + d.title + " " + d.body;
    for (const auto& t : d.tags) all += " " + t + " " + t;
    std::map<std::string, int> tf;
    const auto words = tokenize(all);
    for (const auto& w : words) ++tf[w];
    for (const auto& [w, n] : tf) ++df_[w];
    tf_.push_back(std::move(tf));
    length_.push_back(double(words.size()));
    total += double(words.size());
  }
  avg_length_ = docs_.empty() ? 1 : std::max(1.0, total / double(docs_.size()));
}

const document* knowledge_base::find(const std::string& path) const {
  for (const auto& d : docs_)
    if (d.path == path) return &d;
  return nullptr;
}

std::vector<const document*> knowledge_base::constraints(const std::string& backend) const {
  std::vector<const document*> out;
  for (const auto& d : docs_)
    if (d.level == "constraint" && open_or_has(d.backends, backend)) out.push_back(&d);
  return out;
}

bool knowledge_base::applies(const document& d, const query& q) const {
  const std::vector<std::string> levels = q.levels.empty() ? std::vector<std::string>{"guide", "hardware", "skill"} : q.levels;
  return contains(levels, d.level) && open_or_has(d.backends, q.backend) && open_or_has(d.hardware, q.hardware) &&
         open_or_has(d.classes, q.op_class);
}

double knowledge_base::bm25(size_t i, const std::vector<std::string>& terms) const {
  const double k1 = 1.2, b = 0.75, n = double(docs_.size());
  double score = 0;
  for (const auto& t : terms) {
    auto it = tf_[i].find(t);
    if (it == tf_[i].end()) continue;
    const double df = double(df_.at(t));
    const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    const double f = double(it->second);
    score += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length_[i] / avg_length_));
  }
  return score;
}

std::vector<hit> knowledge_base::search(const query& q) const {
  const auto terms = tokenize(q.text);
  std::vector<hit> hits;
  for (size_t i = 0; i < docs_.size(); ++i) {
    const document& d = docs_[i];
    if (!applies(d, q)) continue;
    hit h;
    h.doc = &d;
    for (const auto& t : q.triggers)
      if (contains(d.triggers, t)) h.matched.push_back(t);
    const bool always = contains(d.triggers, "always");
    if (!q.triggers.empty() && h.matched.empty() && !always) continue;  // step 1: the diagnosis decides
    // The primary diagnosis (the first trigger) counts most; a document about
    // this very hardware beats a general one with the same match; then text.
    double trigger = always ? 1.0 : 0.0;
    for (size_t k = 0; k < q.triggers.size(); ++k)
      if (contains(d.triggers, q.triggers[k])) trigger = std::max(trigger, k == 0 ? 10.0 : 8.0);
    const bool specific = !q.hardware.empty() && contains(d.hardware, q.hardware);
    h.score = trigger + (specific ? 3.0 : 0.0) + bm25(i, terms);
    if (q.triggers.empty() && h.score <= 0) continue;
    hits.push_back(std::move(h));
  }
  std::stable_sort(hits.begin(), hits.end(), [](const hit& a, const hit& b) { return a.score > b.score; });
  if (hits.size() > q.limit) hits.resize(q.limit);
  return hits;
}

}  // namespace kevolve::knowledge
