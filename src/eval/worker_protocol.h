// Wire format between the evaluator and kevolve-worker, over two pipes.
// Plain structs: both ends are the same build on the same machine.
//
// The worker maps up to kMaxRegions shared-memory regions (memfds) and loads
// one or more kernel libraries. A SETUP message gives, per library and per
// input set, a kv_args whose tensor `data` fields hold encoded region offsets
// (region << 56 | offset), the pages to turn into guard pages, and the
// workspace size. CALL and TIME run the kernel; TIME rotates over the sets.
#pragma once

#include <chrono>
#include <cstdint>

#include "kevolve/abi.h"

namespace kevolve::eval::wire {

constexpr uint32_t kMagic = 0x4b45564fu;  // "KEVO"
constexpr int kMaxRegions = 4;
constexpr int kMaxLibs = 2;  // at most fd_io.h's kMaxFds: they travel in one message

// File descriptors the worker finds at start.
constexpr int kRequestFd = 3;
constexpr int kReplyFd = 4;
constexpr int kFirstRegionFd = 5;                          // 5..5+regions-1
constexpr int kLibSocketFd = kFirstRegionFd + kMaxRegions;  // the libraries arrive here

// The kernel libraries come over kLibSocketFd (a Unix socket) as one message:
// a lib_message and, as SCM_RIGHTS, one read-only fd per library. The worker
// waits for it once its device context exists, so a worker can be started
// before its candidate is compiled (worker_client::start) and handed the
// library later (worker_client::load).
struct lib_message {
  uint32_t magic = 0x4b45564cu;  // "KEVL"
  uint32_t count = 0;            // fds attached: NUM_LIBS of the worker's argv
};

// DOWNLOAD (GPU workers only): copy every tensor of every set from the
// device back into the shared regions.
// PROFILE (mtia_emu workers): the last call's run profile as int64 words.
enum class op : uint32_t { setup = 1, call = 2, time = 3, quit = 4, download = 5, profile = 6 };

struct request {
  uint32_t magic = kMagic;
  op code = op::call;
  uint32_t lib = 0;        // CALL/TIME: which library
  uint32_t first_set = 0;  // CALL/TIME: set of the first call
  uint32_t reps = 1;       // TIME: number of calls, rotating over sets
  uint32_t payload_bytes = 0;  // SETUP: bytes that follow
  uint64_t nonce = 0;          // echoed in the reply: forged replies do not match
};

struct setup_header {
  uint32_t num_sets = 0;
  uint32_t num_libs = 0;
  uint32_t num_guards = 0;
  uint32_t names_bytes = 0;
  uint64_t workspace_bytes = 0;
  // followed by: uint64_t guard_offsets[num_guards] (encoded region offsets,
  // each one page), kv_args args[num_libs][num_sets], char names[names_bytes]
  // (NUL-terminated parameter names in order).
};

// left_running: a thread of the worker kept running after the kernel returned
// and did not stop within kParkDeadline (thread_parker.h).
enum class reply_status : int32_t { ok = 0, kernel_error = 1, bad_request = 2, left_running = 3 };
constexpr std::chrono::milliseconds kParkDeadline{2000};

struct reply {
  uint32_t magic = kMagic;
  reply_status status = reply_status::ok;
  int32_t rc = 0;        // first non-zero kernel return code
  uint32_t count = 0;    // int64 nanosecond timings that follow
  uint64_t nonce = 0;
};

inline uint64_t encode(uint32_t region, uint64_t offset) { return (uint64_t(region) << 56) | offset; }
inline uint32_t region_of(uint64_t encoded) { return uint32_t(encoded >> 56); }
inline uint64_t offset_of(uint64_t encoded) { return encoded & ((uint64_t(1) << 56) - 1); }

// Worker exit codes that are not the kernel's doing.
constexpr int kExitSetupFailed = 120;  // bad arguments, mmap/dlopen failure
constexpr int kExitSandboxFailed = 121;
constexpr int kExitDeviceError = 122;  // a CUDA error: the context is unusable

}  // namespace kevolve::eval::wire
