// A long-lived trusted PyTorch process (src/eval/torch_baseline.py serve):
// one JSON request per line on its stdin, one JSON answer per line on its
// stdout, tensors as files in its private directory. It runs the operator's
// PyTorch version for the evaluator (the fp64 reference, the fp32 stand-in,
// validation runs); it never sees a candidate, and its environment is
// scrubbed like the yardstick runner's (torch_environment()). Not thread-safe.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"

namespace kevolve::eval {

// Where tensors of `bytes` pass between the evaluator and PyTorch: tmpfs
// (/dev/shm) above 64 MiB where it is writable, else the scratch root.
std::filesystem::path torch_scratch_root(size_t bytes);

class torch_process {
 public:
  // Starts `python torch_baseline.py DIR serve` in a fresh private directory
  // under torch_scratch_root(tensor_bytes): the tensors pass through it.
  static expected<std::unique_ptr<torch_process>> start(const std::filesystem::path& python, int threads,
                                                        size_t tensor_bytes);
  ~torch_process();
  torch_process(const torch_process&) = delete;
  torch_process& operator=(const torch_process&) = delete;

  // Where request files go (inputs) and answer files come from (outputs).
  const std::filesystem::path& dir() const { return dir_->path(); }
  // One request, its answer; an error when the process died, timed out or
  // answered something that is not JSON (then the process is stopped).
  expected<nlohmann::json> request(const nlohmann::json& req, std::chrono::milliseconds timeout);
  bool alive() const { return pid_ > 0; }

 private:
  torch_process() = default;
  void stop();
  std::string stderr_tail() const;

  std::unique_ptr<temp_dir> dir_;
  int pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string pending_;  // bytes read past the last answer's newline
};

}  // namespace kevolve::eval
