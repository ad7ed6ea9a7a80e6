#include "spec/hardware_profile.h"

#include <yaml-cpp/yaml.h>

#include "common/fs.h"
#include "spec/yaml_reader.h"

namespace kevolve::spec {

expected<hardware_profile> load_hardware_profile(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::exists(file, ec) && !std::filesystem::is_regular_file(file, ec))
    return make_error(errc::invalid_input, file.string() + ": expected a hardware profile YAML file, got a directory or special file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    return make_error(errc::not_found, file.string() + ": cannot open hardware profile");
  } catch (const YAML::Exception& e) {
    return make_error(errc::invalid_input, file.string() + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  yaml_reader r(file.string());
  hardware_profile hw;
  if (!root.IsMap()) return make_error(errc::invalid_input, file.string() + ":1: the document must be a map");
  r.reject_unknown_keys(root, {"name", "backend", "model", "source", "threads", "peak_bandwidth_gbs",
                               "peak_gflops_fp32", "peak_gflops_matrix", "cache_bandwidth_gbs", "measured_at",
                               "fingerprint"}, "");
  if (auto v = r.string_value(root, "name", "name", true)) hw.name = *v;
  if (auto v = r.string_value(root, "backend", "backend", true)) hw.backend = *v;
  if (auto v = r.string_value(root, "model", "model", false)) hw.model = *v;
  if (auto v = r.string_value(root, "source", "source", true)) hw.source = *v;
  if (auto v = r.number_value(root, "threads", "threads", false)) hw.threads = static_cast<int>(*v);
  if (auto v = r.number_value(root, "peak_bandwidth_gbs", "peak_bandwidth_gbs", true)) {
    if (*v <= 0) r.fail(root["peak_bandwidth_gbs"], "peak_bandwidth_gbs", "must be positive");
    hw.peak_bandwidth_gbs = *v;
  }
  if (auto v = r.number_value(root, "peak_gflops_fp32", "peak_gflops_fp32", true)) {
    if (*v <= 0) r.fail(root["peak_gflops_fp32"], "peak_gflops_fp32", "must be positive");
    hw.peak_gflops_fp32 = *v;
  }
  if (auto v = r.number_value(root, "peak_gflops_matrix", "peak_gflops_matrix", false)) {
    if (*v < 0) r.fail(root["peak_gflops_matrix"], "peak_gflops_matrix", "must not be negative");
    hw.peak_gflops_matrix = *v;
  }
  if (auto v = r.number_value(root, "cache_bandwidth_gbs", "cache_bandwidth_gbs", false)) {
    if (*v < 0) r.fail(root["cache_bandwidth_gbs"], "cache_bandwidth_gbs", "must not be negative");
    hw.cache_bandwidth_gbs = *v;
  }
  if (auto v = r.string_value(root, "measured_at", "measured_at", false)) hw.measured_at = *v;
  if (auto v = r.string_value(root, "fingerprint", "fingerprint", false)) hw.fingerprint = *v;
  if (!r.ok()) {
    std::string all;
    for (const auto& e : r.errors()) all += (all.empty() ? "" : "\n") + e;
    return make_error(errc::invalid_input, all);
  }
  return hw;
}

expected<void> save_hardware_profile(const std::filesystem::path& file, const hardware_profile& hw) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << hw.name;
  e << YAML::Key << "backend" << YAML::Value << hw.backend;
  e << YAML::Key << "model" << YAML::Value << hw.model;
  e << YAML::Key << "source" << YAML::Value << hw.source;
  e << YAML::Key << "threads" << YAML::Value << hw.threads;
  e << YAML::Key << "peak_bandwidth_gbs" << YAML::Value << hw.peak_bandwidth_gbs;
  e << YAML::Key << "peak_gflops_fp32" << YAML::Value << hw.peak_gflops_fp32;
  if (hw.peak_gflops_matrix > 0) e << YAML::Key << "peak_gflops_matrix" << YAML::Value << hw.peak_gflops_matrix;
  if (hw.cache_bandwidth_gbs > 0) e << YAML::Key << "cache_bandwidth_gbs" << YAML::Value << hw.cache_bandwidth_gbs;
  e << YAML::Key << "measured_at" << YAML::Value << hw.measured_at;
  e << YAML::Key << "fingerprint" << YAML::Value << hw.fingerprint;
  e << YAML::EndMap;
  return write_file_atomic(file, std::string(e.c_str()) + "\n");
}

}  // namespace kevolve::spec
