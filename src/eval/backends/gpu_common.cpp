#include "eval/backends/gpu_common.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace kevolve::eval {

worker_options gpu_backend::device_worker(std::filesystem::path executable, int threads, bool sandbox) {
  worker_options wo;
  wo.executable = std::move(executable);
  wo.threads = threads;
  wo.sandbox = sandbox;
  wo.address_space_bytes = 0;
  wo.start_timeout = std::chrono::milliseconds(60000);
  return wo;
}

}  // namespace kevolve::eval

namespace kevolve::eval::gpu {
namespace fs = std::filesystem;

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

std::string find_tool(const char* env_var, const char* name, const std::string& fallback) {
  if (const char* n = std::getenv(env_var); n && *n) return n;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string d;
    while (std::getline(dirs, d, ':'))
      if (!d.empty() && ::access((fs::path(d) / name).c_str(), X_OK) == 0) return (fs::path(d) / name).string();
  }
  return fallback;
}

namespace {
int line_of(const std::string& code, size_t pos) { return int(std::count(code.begin(), code.begin() + long(pos), '\n')) + 1; }
bool null_stream(const std::string& s) { return s == "0" || s == "nullptr" || s == "NULL" || s == "0x0"; }
}  // namespace

void apply_rules(const std::string& code, const std::vector<source_rule>& rules, const std::vector<std::string>& allowed,
                 std::vector<policy_violation>& out) {
  for (const auto& r : rules) {
    if (r.library && std::find(allowed.begin(), allowed.end(), r.library) != allowed.end()) continue;
    for (auto it = std::sregex_iterator(code.begin(), code.end(), r.re); it != std::sregex_iterator(); ++it)
      out.push_back({line_of(code, size_t(it->position(0))), r.name, it->str(0)});
  }
}

void scan_chevron_launches(const std::string& code, std::vector<policy_violation>& out) {
  for (size_t pos = code.find("<<<"); pos != std::string::npos; pos = code.find("<<<", pos + 3)) {
    const size_t end = code.find(">>>", pos + 3);
    if (end == std::string::npos) break;
    int depth = 0, commas = 0;
    size_t last_comma = pos + 2;
    for (size_t i = pos + 3; i < end; ++i) {
      const char c = code[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (c == ',' && depth == 0) {
        ++commas;
        last_comma = i;
      }
    }
    const std::string stream = commas == 3 ? trim(code.substr(last_comma + 1, end - last_comma - 1)) : "";
    if (commas < 3 || null_stream(stream))
      out.push_back({line_of(code, pos), "launch on the default stream", code.substr(pos, end + 3 - pos)});
  }
}

void scan_call_launches(const std::string& code, const std::string& function, int stream_arg,
                        std::vector<policy_violation>& out) {
  for (size_t pos = code.find(function); pos != std::string::npos; pos = code.find(function, pos + function.size())) {
    size_t i = pos + function.size();
    while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
    if (i >= code.size() || code[i] != '(') continue;
    int depth = 0, arg = 0;
    size_t arg_start = i + 1, end = i;
    std::string stream;
    for (size_t j = i; j < code.size(); ++j) {
      const char c = code[j];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if ((c == ',' && depth == 1) || depth == 0) {
        if (arg == stream_arg) stream = trim(code.substr(arg_start, j - arg_start));
        ++arg;
        arg_start = j + 1;
      }
      if (depth == 0) {
        end = j;
        break;
      }
    }
    if (arg <= stream_arg || null_stream(stream))
      out.push_back({line_of(code, pos), "launch on the default stream", code.substr(pos, std::min<size_t>(end + 1 - pos, 160))});
  }
}

}  // namespace kevolve::eval::gpu
