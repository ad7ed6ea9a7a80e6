#include "eval/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

// Landlock ABI 3 (Linux 6.2); Debian 12's headers describe ABI 2.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

namespace kevolve::eval {
namespace {

constexpr uid_t kNobody = 65534;

std::string set_limit(int resource, rlim_t value, const char* name) {
  rlimit rl{value, value};
  if (::setrlimit(resource, &rl) != 0) return std::string("setrlimit(") + name + "): " + std::strerror(errno);
  return {};
}

std::string install_filter(bool writes_confined_elsewhere, bool truncate_confined, int reserved_signal) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return "seccomp_init failed";
  int rc = 0;
  auto kill = [&](int nr) { rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, nr, 0); };
  auto deny = [&](int nr, int err) { rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), nr, 0); };
  // New processes and programs.
  for (int nr : {SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat)}) kill(nr);
  // Threads are fine; a clone without CLONE_THREAD is a new process.
  rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  deny(SCMP_SYS(clone3), ENOSYS);  // flags live in memory; glibc falls back to clone
  // Other processes, the network, the kernel.
  for (int nr : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(socket),
                 SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(accept),
                 SCMP_SYS(accept4), SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(unshare), SCMP_SYS(setns),
                 SCMP_SYS(chroot), SCMP_SYS(pivot_root), SCMP_SYS(bpf), SCMP_SYS(perf_event_open),
                 SCMP_SYS(kexec_load), SCMP_SYS(reboot), SCMP_SYS(init_module), SCMP_SYS(finit_module),
                 SCMP_SYS(delete_module), SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
                 SCMP_SYS(userfaultfd), SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter),
                 SCMP_SYS(io_uring_register), SCMP_SYS(setuid), SCMP_SYS(setgid), SCMP_SYS(setreuid),
                 SCMP_SYS(setregid), SCMP_SYS(setresuid), SCMP_SYS(setresgid), SCMP_SYS(setgroups),
                 SCMP_SYS(setrlimit), SCMP_SYS(prlimit64), SCMP_SYS(personality), SCMP_SYS(tkill),
                 SCMP_SYS(sigaltstack), SCMP_SYS(memfd_create)})
    kill(nr);
  // What only a privileged process could do (a profiled worker keeps its
  // user): the clock, the host's names, devices, swap, raw I/O, file handles.
  for (int nr : {SCMP_SYS(settimeofday), SCMP_SYS(clock_settime), SCMP_SYS(clock_adjtime), SCMP_SYS(adjtimex),
                 SCMP_SYS(sethostname), SCMP_SYS(setdomainname), SCMP_SYS(mknod), SCMP_SYS(mknodat),
                 SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(iopl), SCMP_SYS(ioperm), SCMP_SYS(acct),
                 SCMP_SYS(syslog), SCMP_SYS(quotactl), SCMP_SYS(vhangup), SCMP_SYS(kcmp), SCMP_SYS(fanotify_init),
                 SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at), SCMP_SYS(lookup_dcookie)})
    kill(nr);
  // Handlers for ordinary signals (SIGSEGV, SIGBUS, ...) would let a kernel
  // compute lazily when the evaluator reads; glibc's threads need only the
  // real-time ones (32 and up).
  rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(rt_sigaction), 1, SCMP_A0(SCMP_CMP_LT, 32));
  // Nor the worker's own (reading it is harmless).
  if (reserved_signal > 0)
    rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(rt_sigaction), 2,
                           SCMP_A0(SCMP_CMP_EQ, scmp_datum_t(reserved_signal)), SCMP_A1(SCMP_CMP_NE, 0));
  // Signals only to itself.
  const pid_t self = ::getpid();
  rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)self));
  rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)self));
  // No resizing shared memory under the evaluator; no truncating by path
  // unless Landlock governs it (its ABI 3 and later).
  for (int nr : {SCMP_SYS(ftruncate), SCMP_SYS(fallocate)}) deny(nr, EPERM);
  if (!truncate_confined) deny(SCMP_SYS(truncate), EPERM);
  // No writing to the file system (unless Landlock confines writes instead).
  // Any of these flags opens for writing; each is tested on its own, for
  // open (flags in argument 1) and openat (argument 2).
  if (!writes_confined_elsewhere) {
    for (scmp_datum_t flag : {scmp_datum_t(O_WRONLY), scmp_datum_t(O_RDWR), scmp_datum_t(O_CREAT), scmp_datum_t(O_TRUNC),
                              scmp_datum_t(O_APPEND)}) {
      rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, flag, flag));
      rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, flag, flag));
    }
    deny(SCMP_SYS(openat2), ENOSYS);
    for (int nr : {SCMP_SYS(creat), SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat),
                   SCMP_SYS(renameat2), SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rmdir), SCMP_SYS(link),
                   SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat), SCMP_SYS(chmod), SCMP_SYS(fchmod),
                   SCMP_SYS(fchmodat), SCMP_SYS(chown), SCMP_SYS(fchown), SCMP_SYS(lchown), SCMP_SYS(fchownat)})
      deny(nr, EPERM);
  } else {
    // Landlock governs where files are written, not who owns them or their modes.
    for (int nr : {SCMP_SYS(chmod), SCMP_SYS(fchmod), SCMP_SYS(fchmodat), SCMP_SYS(chown), SCMP_SYS(fchown),
                   SCMP_SYS(lchown), SCMP_SYS(fchownat)})
      deny(nr, EPERM);
  }
  if (rc != 0) {
    seccomp_release(ctx);
    return "seccomp_rule_add failed";
  }
  rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) return std::string("seccomp_load: ") + std::strerror(-rc);
  return {};
}

// Landlock: every way of writing to the file system is refused except beneath
// `dir` and to the existing NVIDIA device files (/dev/nvidia*, opened for
// writing by the driver and its profiling library).
std::string confine_writes(const std::string& dir, long& abi) {
  abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return "this kernel has no Landlock, which confines a profiled worker's writes";
  uint64_t dir_rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                        LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                        LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                        LANDLOCK_ACCESS_FS_MAKE_SYM;
  uint64_t file_rights = LANDLOCK_ACCESS_FS_WRITE_FILE;
  if (abi >= 2) dir_rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) {
    dir_rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
    file_rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
  }
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = dir_rights;
  const int ruleset = int(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return std::string("landlock_create_ruleset: ") + std::strerror(errno);
  auto allow = [&](const std::string& path, uint64_t rights) -> std::string {
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return "opening " + path + ": " + std::strerror(errno);
    landlock_path_beneath_attr rule{};
    rule.allowed_access = rights;
    rule.parent_fd = fd;
    const long r = ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    const int e = errno;
    ::close(fd);
    return r == 0 ? std::string() : "landlock_add_rule(" + path + "): " + std::strerror(e);
  };
  std::string err = allow(dir, dir_rights);
  if (DIR* d = err.empty() ? ::opendir("/dev") : nullptr) {
    for (dirent* e; err.empty() && (e = ::readdir(d));) {
      const std::string path = std::string("/dev/") + e->d_name;
      struct stat st;
      if (std::strncmp(e->d_name, "nvidia", 6) == 0 && ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode))
        err = allow(path, file_rights);
    }
    ::closedir(d);
  }
  if (err.empty() && ::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
    err = std::string("landlock_restrict_self: ") + std::strerror(errno);
  ::close(ruleset);
  return err;
}

}  // namespace

sandbox_options sandbox_for_mode(int mode) {
  sandbox_options o;
  o.drop_privileges = mode == 1;
  o.seccomp = mode != 0;
  if (mode == 2) {
    const char* tmp = std::getenv("TMPDIR");
    o.writable_dir = tmp && *tmp ? tmp : "/nonexistent-kevolve-worker-tmpdir";  // fails to confine: refused
  }
  return o;
}

std::string enter_sandbox(const sandbox_options& o) {
  std::string err;
  if (o.address_space_bytes && (err = set_limit(RLIMIT_AS, o.address_space_bytes, "RLIMIT_AS")).size()) return err;
  if ((err = set_limit(RLIMIT_CORE, 0, "RLIMIT_CORE")).size()) return err;
  if ((err = set_limit(RLIMIT_FSIZE, o.max_output_bytes, "RLIMIT_FSIZE")).size()) return err;
  if ((err = set_limit(RLIMIT_NPROC, 256, "RLIMIT_NPROC")).size()) return err;
  if (o.drop_privileges && ::geteuid() == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)
      return std::string("dropping privileges to nobody: ") + std::strerror(errno);
    if (::setuid(0) == 0) return "dropping privileges: setuid(0) still succeeds";
  }
  // Libraries are loaded through /proc/self/fd, which needs a dumpable process.
  ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs: ") + std::strerror(errno);
  long landlock_abi = 0;
  if (!o.writable_dir.empty() && (err = confine_writes(o.writable_dir, landlock_abi)).size()) return err;
  if (o.seccomp) return install_filter(!o.writable_dir.empty(), landlock_abi >= 3, o.reserved_signal);
  return {};
}

void seal_process() { ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

}  // namespace kevolve::eval
