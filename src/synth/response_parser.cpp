#include "synth/response_parser.h"

#include <regex>
#include <sstream>
#include <vector>

#include "eval/backends/registry.h"

namespace kevolve::synth {
namespace {

struct fence {
  std::string lang;
  std::string body;
};

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(l);
  }
  return out;
}

// ``` or ~~~ fences; an unclosed last fence (a reply cut off) is not a block.
std::vector<fence> fences(const std::string& reply, std::string& prose) {
  std::vector<fence> out;
  const auto lines = lines_of(reply);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const size_t at = l.find_first_not_of(' ');
    if (at == std::string::npos || (l.compare(at, 3, "```") != 0 && l.compare(at, 3, "~~~") != 0)) {
      if (prose.empty() && l.find_first_not_of(" \t#*") != std::string::npos) prose = l.substr(l.find_first_not_of(" \t#*"));
      continue;
    }
    const std::string marker = l.substr(at, 3);
    fence f;
    f.lang = l.substr(at + 3);
    f.lang.erase(0, f.lang.find_first_not_of(" \t"));
    size_t j = i + 1;
    std::string body;
    for (; j < lines.size(); ++j) {
      const size_t a = lines[j].find_first_not_of(' ');
      if (a != std::string::npos && lines[j].compare(a, 3, marker) == 0 && lines[j].find_first_not_of(" `~") == std::string::npos) break;
      body += lines[j] + "\n";
    }
    if (j == lines.size()) break;  // unclosed
    f.body = std::move(body);
    out.push_back(std::move(f));
    i = j;
  }
  return out;
}

bool looks_like_diff(const fence& f) {
  if (f.lang == "diff" || f.lang == "patch") return true;
  return f.body.rfind("--- ", 0) == 0 || f.body.rfind("@@ ", 0) == 0;
}

}  // namespace

std::string check_abi_symbol(const std::string& code, const std::string& backend) {
  static const std::regex direct(R"re(extern\s+"C"[^;{}]*\bkevolve_kernel\s*\()re");
  static const std::regex block(R"re(extern\s+"C"\s*\{)re");
  static const std::regex defined(R"re(\bint\s+kevolve_kernel\s*\()re");
  const bool has_def = std::regex_search(code, defined);
  if (!has_def) return "the code does not define int kevolve_kernel(...)";
  if (!std::regex_search(code, direct) && !std::regex_search(code, block))
    return "kevolve_kernel is not declared extern \"C\" (the evaluator looks up the unmangled symbol)";
  if (const auto* d = eval::find_backend(backend); d && !d->abi_marker.empty() && code.find(d->abi_marker) == std::string::npos)
    return "kevolve_kernel on " + backend + " takes " + d->abi_marker_meaning + " as its second argument";
  return "";
}

std::string apply_unified_diff(const std::string& original, const std::string& diff, std::string& error) {
  std::vector<std::string> text = lines_of(original);
  const std::vector<std::string> d = lines_of(diff);
  size_t from = 0;  // hunks apply in order
  int hunks = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i].rfind("@@", 0) != 0) continue;
    ++hunks;
    std::vector<std::string> old_lines, new_lines;
    size_t j = i + 1;
    for (; j < d.size() && d[j].rfind("@@", 0) != 0; ++j) {
      const std::string& l = d[j];
      if (l.rfind("--- ", 0) == 0 || l.rfind("+++ ", 0) == 0 || l.rfind("\\", 0) == 0) continue;
      if (l.empty()) {
        old_lines.push_back("");
        new_lines.push_back("");
      } else if (l[0] == '-') {
        old_lines.push_back(l.substr(1));
      } else if (l[0] == '+') {
        new_lines.push_back(l.substr(1));
      } else {
        const std::string c = l[0] == ' ' ? l.substr(1) : l;
        old_lines.push_back(c);
        new_lines.push_back(c);
      }
    }
    // Trailing blank context lines are often an artefact of the reply.
    while (!old_lines.empty() && old_lines.back().empty() && !new_lines.empty() && new_lines.back().empty()) {
      old_lines.pop_back();
      new_lines.pop_back();
    }
    size_t at = std::string::npos;
    for (size_t k = from; k + old_lines.size() <= text.size() && at == std::string::npos; ++k) {
      bool match = true;
      for (size_t m = 0; m < old_lines.size() && match; ++m) match = text[k + m] == old_lines[m];
      if (match) at = k;
    }
    if (at == std::string::npos) {
      error = "the diff does not apply to the parent (hunk " + std::to_string(hunks) + " does not match)";
      return "";
    }
    text.erase(text.begin() + long(at), text.begin() + long(at + old_lines.size()));
    text.insert(text.begin() + long(at), new_lines.begin(), new_lines.end());
    from = at + new_lines.size();
    i = j - 1;
  }
  if (hunks == 0) {
    error = "the diff has no @@ hunks";
    return "";
  }
  std::string out;
  for (const auto& l : text) out += l + "\n";
  error.clear();
  return out;
}

extracted_kernel extract_kernel(const std::string& reply, const std::string& parent_code, const std::string& backend) {
  extracted_kernel out;
  std::string prose;
  const std::vector<fence> fs = fences(reply, prose);
  out.summary = prose.substr(0, 200);
  if (fs.empty()) {
    out.unusable = reply.find("```") != std::string::npos ? "the reply's code block is not closed (cut off at max_tokens?)"
                                                           : "the reply has no fenced code block or diff";
    return out;
  }
  // A full file that defines the symbol wins; else a diff against the parent.
  const fence* best = nullptr;
  for (const fence& f : fs)
    if (!looks_like_diff(f) && f.body.find("kevolve_kernel") != std::string::npos && (!best || f.body.size() > best->body.size()))
      best = &f;
  std::string why;
  if (best) {
    out.code = best->body;
    out.how = "fenced";
  } else {
    for (const fence& f : fs) {
      if (!looks_like_diff(f)) continue;
      if (parent_code.empty()) {
        out.unusable = "the reply is a diff, but the child has no parent to apply it to";
        return out;
      }
      std::string err;
      std::string code = apply_unified_diff(parent_code, f.body, err);
      if (!err.empty()) {
        why = err;
        continue;
      }
      out.code = std::move(code);
      out.how = "diff";
      break;
    }
  }
  if (out.code.empty()) {
    out.unusable = !why.empty() ? why : "no code block in the reply defines kevolve_kernel";
    return out;
  }
  if (std::string bad = check_abi_symbol(out.code, backend); !bad.empty()) {
    out.unusable = bad;
    out.code.clear();
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace kevolve::synth
