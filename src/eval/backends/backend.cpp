#include "eval/backends/backend.h"

#include "common/paths.h"
#include "eval/backends/cpu_backend.h"
#include "eval/backends/cuda_backend.h"
#include "eval/backends/hip_backend.h"
#include "eval/backends/mtia_emu_backend.h"

namespace kevolve::eval {

expected<static_check> check_statically(backend& b, const std::string& source,
                                        const std::vector<std::string>& allowed) {
  static_check c;
  const auto violations = b.scan(source, allowed);
  if (!violations.empty()) {
    c.result = status::suspicious;
    c.reason = "the source does what a kernel may not: " + describe(violations);
    return c;
  }
  auto k = b.compile(source, allowed, b.source_name());
  if (!k) return tl::unexpected(k.error());
  c.kernel = std::move(*k);
  if (!c.kernel.ok) {
    c.result = status::compile_failed;
    c.reason = c.kernel.failure.empty() ? "the compiler rejected the kernel" : c.kernel.failure;
    return c;
  }
  auto abi = b.check_compiled(c.kernel, allowed);
  if (!abi) return tl::unexpected(abi.error());
  c.result = abi->result;
  c.reason = abi->reason;
  return c;
}

std::vector<std::string> known_backends() { return {"cpu", "cuda", "hip", "hip_on_cuda", "mtia_emu"}; }

expected<std::unique_ptr<backend>> make_backend(const std::string& name, std::chrono::seconds compile_timeout) {
  if (name.empty() || name == "cpu")
    return std::unique_ptr<backend>(std::make_unique<cpu_backend>(cache_root() / "compile" / "cpu", compile_timeout));
  if (name == "cuda")
    return std::unique_ptr<backend>(std::make_unique<cuda_backend>(cache_root() / "compile" / "cuda", compile_timeout));
  if (name == "hip")
    return std::unique_ptr<backend>(std::make_unique<hip_backend>(cache_root() / "compile" / "hip", compile_timeout));
  if (name == "hip_on_cuda")
    return std::unique_ptr<backend>(std::make_unique<cuda_backend>(cache_root() / "compile" / "hip_on_cuda",
                                                                   compile_timeout, std::string(), true));
  if (name == "mtia_emu")
    return std::unique_ptr<backend>(
        std::make_unique<mtia_emu_backend>(cache_root() / "compile" / "mtia_emu", compile_timeout));
  std::string known;
  for (const auto& b : known_backends()) known += (known.empty() ? "" : ", ") + b;
  return make_error(errc::invalid_input, "backend '" + name + "' is not known (backends: " + known + ")");
}

}  // namespace kevolve::eval
