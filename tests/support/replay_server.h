// Starts tests/llm/replay_server.py (an OpenAI-protocol replay server on
// 127.0.0.1, ephemeral port) for one test and stops it afterwards.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kevolve::testing {

class replay_server {
 public:
  // `script_json`: the server's script (see replay_server.py).
  explicit replay_server(const std::string& script_json) {
    char tmpl[] = "/tmp/kevolve-replay-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::ofstream(dir_ / "script.json") << script_json;
    const std::string script = std::string(KEVOLVE_TEST_SOURCE_DIR) + "/tests/llm/replay_server.py";
    const std::vector<std::string> args = {"/usr/bin/python3", script, "--script", (dir_ / "script.json").string(),
                                           "--port-file", (dir_ / "port").string(), "--log", (dir_ / "log.jsonl").string()};
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 200 && !std::filesystem::exists(dir_ / "port"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    std::ifstream(dir_ / "port") >> port_;
    EXPECT_GT(port_, 0) << "the replay server did not start";
  }
  ~replay_server() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  // The request log, one JSON object per line.
  std::vector<std::string> requests() const {
    std::vector<std::string> out;
    std::ifstream in(dir_ / "log.jsonl");
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }

 private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace kevolve::testing
