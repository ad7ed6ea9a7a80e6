#include "eval/source_policy.h"

#include <algorithm>
#include <regex>

namespace kevolve::eval {

std::string strip_comments_and_strings(const std::string& s) {
  std::string out = s;
  enum { code, line_comment, block_comment, str, chr } st = code;
  bool include_line = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i], n = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '\n') {
      include_line = false;
      if (st == line_comment) st = code;
      continue;
    }
    switch (st) {
      case code:
        if (c == '#') {
          size_t j = i + 1;
          while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
          include_line = s.compare(j, 7, "include") == 0;
        }
        if (c == '/' && n == '/') { st = line_comment; out[i] = ' '; }
        else if (c == '/' && n == '*') { st = block_comment; out[i] = ' '; }
        else if (c == '"' && !include_line) st = str;
        else if (c == '\'' ) st = chr;
        break;
      case line_comment: out[i] = ' '; break;
      case block_comment:
        out[i] = ' ';
        if (c == '*' && n == '/') { out[i + 1] = ' '; ++i; st = code; }
        break;
      case str:
        if (c == '\\') { out[i] = ' '; if (i + 1 < s.size() && n != '\n') out[++i] = ' '; }
        else if (c == '"') st = code;
        else out[i] = ' ';
        break;
      case chr:
        if (c == '\\') { out[i] = ' '; if (i + 1 < s.size() && n != '\n') out[++i] = ' '; }
        else if (c == '\'') st = code;
        else out[i] = ' ';
        break;
    }
  }
  return out;
}

namespace {

struct rule {
  const char* name;
  std::regex re;
  const char* library;  // non-null: allowed when the operator allows this library
};

const std::vector<rule>& rules() {
  static const std::vector<rule> r = {
      {"vendor library header", std::regex(R"(#\s*include\s*[<"](cblas|openblas|lapacke?|mkl)[^>"]*[>"])"), "openblas"},
      {"vendor library header", std::regex(R"(#\s*include\s*[<"](dnnl|oneapi/dnnl|mkldnn)[^>"]*[>"])"), "dnnl"},
      {"vendor library header", std::regex(R"(#\s*include\s*[<"](Eigen|torch|ATen|c10|cublas|cudnn|rocblas|hipblas|miopen|xnnpack)[^>"]*[>"])"), nullptr},
      {"vendor library call", std::regex(R"(\b(cblas_\w+|sgemm_|dgemm_|openblas_\w+|mkl_\w+))"), "openblas"},
      {"vendor library call", std::regex(R"(\b(dnnl_\w+|dnnl::\w+))"), "dnnl"},
      {"vendor library call", std::regex(R"(\b(at::\w+|torch::\w+|Eigen::\w+|cublas\w+|cudnn\w+))"), nullptr},
      {"run-time code loading", std::regex(R"(\b(dlopen|dlsym|dlvsym|dlmopen|dl_iterate_phdr|_r_debug|link_map)\b)"), nullptr},
      {"inline assembly", std::regex(R"(\b(asm|__asm__|__asm)\b)"), nullptr},
      {"raw system call", std::regex(R"(\b(syscall|__syscall)\s*\()"), nullptr},
      {"process control", std::regex(R"(\b(fork|vfork|execl|execlp|execle|execv|execvp|execve|system|popen|posix_spawn|ptrace|kill|raise|abort_handler)\s*\()"), nullptr},
      {"signal handling", std::regex(R"(\b(signal|sigaction|sigset|bsd_signal|sysv_signal|sigsetjmp|siglongjmp)\s*\()"), nullptr},
      {"memory protection", std::regex(R"(\b(mprotect|mmap|munmap|madvise|mremap)\s*\()"), nullptr},
      {"clock access", std::regex(R"(\b(clock_gettime|gettimeofday|__rdtsc|__rdtscp|rdtsc|std::chrono)\b)"), nullptr},
      {"code run at load time", std::regex(R"(__attribute__\s*\(\(\s*(constructor|destructor))"), nullptr},
      {"file or environment access", std::regex(R"(\b(fopen|freopen|getenv|setenv|putenv|ofstream|ifstream|fstream)\b)"), nullptr},
  };
  return r;
}

}  // namespace

std::vector<policy_violation> scan_source(const std::string& source, const std::vector<std::string>& allowed) {
  const std::string code = strip_comments_and_strings(source);
  std::vector<policy_violation> out;
  for (const auto& r : rules()) {
    if (r.library && std::find(allowed.begin(), allowed.end(), r.library) != allowed.end()) continue;
    for (auto it = std::sregex_iterator(code.begin(), code.end(), r.re); it != std::sregex_iterator(); ++it) {
      const size_t pos = size_t(it->position(0));
      const int line = int(std::count(code.begin(), code.begin() + long(pos), '\n')) + 1;
      out.push_back({line, r.name, it->str(0)});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  return out;
}

std::string describe(const std::vector<policy_violation>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 5; ++i)
    s += (i ? "; " : "") + std::string("line ") + std::to_string(v[i].line) + ": " + v[i].rule + " (" + v[i].text + ")";
  if (v.size() > 5) s += "; and " + std::to_string(v.size() - 5) + " more";
  return s;
}

}  // namespace kevolve::eval
