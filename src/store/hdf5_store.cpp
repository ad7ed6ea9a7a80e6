// The HDF5 store: the layout (hdf5_store.h) written and read through the
// plumbing of hdf5_io.h. HDF5 errors and C++ exceptions stay in the store:
// every entry point below catches them and returns an error that names the
// file, the object and, from HDF5's error stack, the cause.
#include "store/hdf5_store.h"

#include <H5Cpp.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "store/hdf5_io.h"
#include "store/hdf5_types.h"
#include "store/record_check.h"
#include "store/store_rows.h"

namespace kevolve::store {
namespace {

namespace fs = std::filesystem;
using namespace hdf5_io;
using namespace hdf5_types;  // the tables' compound types

// "0 inherit, 1 compare_siblings, ...": the meaning of an int column.
template <class E, class F>
std::string value_names(E last, F name) {
  std::string s;
  for (int v = 0; v <= int(last); ++v) s += (v ? ", " : "") + std::to_string(v) + " " + name(E(v));
  return s;
}

// --- writing ----------------------------------------------------------------

void write_task(H5::Group& tasks, size_t index, const task_record& t, const store_options& options, std::string& step) {
  const std::string name = std::to_string(index);
  const std::string where = "/tasks/" + name;
  step = where;
  H5::Group g = tasks.createGroup(name);
  write_string_attribute(g, "id", t.id);
  write_string_attribute(g, "operator", t.op);
  write_string_attribute(g, "variant", t.variant);
  write_string_attribute(g, "backend", t.backend);
  write_string_attribute(g, "baseline", t.baseline);
  write_string_attribute(g, "fitness_over", t.fitness_over);
  write_string_attribute(g, "stop_reason", t.stop_reason);
  write_attribute(g, "seconds_spent", H5::PredType::NATIVE_DOUBLE, &t.seconds_spent);
  write_attribute(g, "rng_state", H5::PredType::NATIVE_UINT64, t.search.random.data(), 4);
  write_attribute(g, "evaluations", H5::PredType::NATIVE_INT64, &t.search.evaluations);
  write_attribute(g, "since_improvement", H5::PredType::NATIVE_INT64, &t.search.since_improvement);
  write_attribute(g, "best_fitness", H5::PredType::NATIVE_DOUBLE, &t.search.best_fitness);

  step = where + "/text";
  blob_writer text(g, "text", text_bytes(t), options.text_deflate);
  const task_tables tables = flatten(t, [&text](std::string_view s) { return text.append(s); });
  text.finish();

  step = where + "/nodes";
  H5::DataSet ds = write_table(g, "nodes", node_type(), node_type(), tables.nodes);
  write_string_attribute(ds, "mode_values", value_names(search::memory_mode::reset, [](search::memory_mode m) { return search::to_string(m); }));
  write_string_attribute(ds, "state_values", "0 pending, 1 evaluated");
  write_string_attribute(ds, "status_values", value_names(eval::kLastStatus, [](eval::status s) { return eval::to_string(s); }));

  step = where + "/context";
  const hsize_t nctx = tables.context.size();
  H5::DataSet cds = g.createDataSet("context", H5::PredType::NATIVE_INT64, H5::DataSpace(1, &nctx));
  if (nctx > 0) cds.write(tables.context.data(), H5::PredType::NATIVE_INT64);

  step = where + "/measurements";
  write_table(g, "measurements", measurement_type(), measurement_type(), tables.measurements);

  step = where + "/llm_text";
  blob_writer llm_text(g, "llm_text", llm_text_bytes(t), options.text_deflate);
  const std::vector<llm_row> llm = flatten_llm(t, [&llm_text](std::string_view s) { return llm_text.append(s); });
  llm_text.finish();
  step = where + "/llm";
  H5::DataSet lds = write_table(g, "llm", llm_type(), llm_type(), llm);
  write_string_attribute(lds, "purpose_values", "0 kernel, 1 skill_note");

  step = where + "/skills_text";
  blob_writer skills_text(g, "skills_text", skills_text_bytes(t), options.text_deflate);
  const std::vector<skill_row> skills = flatten_skills(t, [&skills_text](std::string_view s) { return skills_text.append(s); });
  skills_text.finish();
  step = where + "/skills";
  write_table(g, "skills", skill_type(), skill_type(), skills);
}

void write_file(const std::string& file, const sweep_record& r, const store_options& options, std::string& step) {
  step = "creating the file";
  H5::FileAccPropList access;
  access.setFcloseDegree(H5F_CLOSE_STRONG);
  H5::H5File f(file, H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT, access);
  {
    step = "root attributes";
    H5::Group root = f.openGroup("/");
    const int32_t version = kSchemaVersion;
    const int64_t task_count = int64_t(r.tasks.size());
    write_attribute(root, "schema_version", H5::PredType::NATIVE_INT32, &version);
    write_string_attribute(root, "kevolve_version", r.kevolve_version);
    write_string_attribute(root, "config_yaml", r.config_yaml);
    write_string_attribute(root, "config_hash", r.config_hash);
    write_string_attribute(root, "created_at", r.created_at);
    write_attribute(root, "task_count", H5::PredType::NATIVE_INT64, &task_count);
    H5::Group tasks = f.createGroup("/tasks");
    for (size_t i = 0; i < r.tasks.size(); ++i) write_task(tasks, i, r.tasks[i], options, step);
    step = "/ranks";
    std::vector<rank_row> rows;
    for (const auto& k : r.ranks) {
      rank_row w{};
      w.session = k.session;
      w.rank = k.rank;
      copy_fixed(w.host, k.host);
      copy_fixed(w.backend, k.backend);
      copy_fixed(w.state, k.state);
      w.evaluations = k.evaluations;
      w.deadline_misses = k.deadline_misses;
      w.queue_depth = k.queue_depth;
      w.busy_seconds = k.busy_seconds;
      w.uptime_seconds = k.uptime_seconds;
      w.cpu_seconds = k.cpu_seconds;
      for (int i = 0; i < kRankStatusColumns; ++i) {
        const auto it = k.by_status.find(kRankStatusNames[i]);
        w.by_status[i] = it == k.by_status.end() ? 0 : it->second;
      }
      rows.push_back(w);
    }
    write_table(root, "ranks", rank_type(), rank_type(), rows);
  }
  step = "closing the file";
  f.close();
}

// "" or why it failed.
std::string fsync_path(const std::string& p, bool directory) {
  const int fd = ::open(p.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open for fsync: ") + std::strerror(errno);
  const bool ok = ::fsync(fd) == 0;
  const std::string why = ok ? "" : std::string("fsync failed: ") + std::strerror(errno);
  ::close(fd);
  return why;
}

// --- reading ----------------------------------------------------------------

task_record read_task(const H5::Group& tasks, int64_t index, int32_t version, std::string& step) {
  const std::string name = std::to_string(index);
  const std::string where = "/tasks/" + name;
  step = where;
  require_link(tasks, "/tasks", name.c_str(), "group");
  H5::Group g = tasks.openGroup(name);
  task_record t;
  t.id = read_string_attribute(g, where, "id");
  t.op = read_string_attribute(g, where, "operator");
  t.variant = read_string_attribute(g, where, "variant");
  t.backend = read_string_attribute(g, where, "backend");
  t.baseline = read_string_attribute(g, where, "baseline");
  t.fitness_over = g.attrExists("fitness_over") ? read_string_attribute(g, where, "fitness_over") : "";
  t.stop_reason = read_string_attribute(g, where, "stop_reason");
  read_attribute(g, where, "seconds_spent", H5::PredType::NATIVE_DOUBLE, &t.seconds_spent);
  read_attribute(g, where, "rng_state", H5::PredType::NATIVE_UINT64, t.search.random.data(), 4);
  read_attribute(g, where, "evaluations", H5::PredType::NATIVE_INT64, &t.search.evaluations);
  read_attribute(g, where, "since_improvement", H5::PredType::NATIVE_INT64, &t.search.since_improvement);
  read_attribute(g, where, "best_fitness", H5::PredType::NATIVE_DOUBLE, &t.search.best_fitness);

  step = where + "/nodes";
  task_tables tables;
  tables.nodes = read_table<node_row>(g, where, "nodes", node_type(version >= 2));
  if (version < 2)
    for (auto& n : tables.nodes) n.rank = -1;
  if (tables.nodes.empty()) fail(errc::invalid_input, where + "/nodes: no nodes, expected at least the root");
  step = where + "/context";
  require_link(g, where, "context", "dataset");
  H5::DataSet cds = g.openDataSet("context");
  if (cds.getDataType().getClass() != H5T_INTEGER) fail(errc::invalid_input, where + "/context: expected an integer dataset");
  tables.context.resize(length_of(cds, where + "/context"));
  if (!tables.context.empty()) cds.read(tables.context.data(), H5::PredType::NATIVE_INT64);
  step = where + "/measurements";
  tables.measurements =
      read_table<measurement_row>(g, where, "measurements", measurement_type(version >= 4, version >= 5, version >= 6));
  for (auto& m : tables.measurements) {
    if (version < 4) m.torch_eager_median_s = m.torch_compile_median_s = 0;
    if (version < 5) m.profile_offset = m.profile_length = m.metrics_offset = m.metrics_length = 0;
    if (version < 6) {
      m.attainable_fraction = 0;
      m.bound_offset = m.bound_length = 0;
    }
  }

  step = where + "/text";
  blob_reader text(g, where, "text");
  const std::string broken = unflatten(tables, text.size(), [&text](uint64_t o, uint64_t n) { return text.get(o, n); }, t);
  if (!broken.empty()) fail(errc::invalid_input, where + "/" + broken);
  if (version >= 3) {
    step = where + "/llm";
    std::vector<llm_row> llm = read_table<llm_row>(g, where, "llm", llm_type(version >= 4));
    if (version < 4)
      for (auto& x : llm) x.purpose = 0;
    step = where + "/llm_text";
    blob_reader llm_text(g, where, "llm_text");
    const std::string bad_llm =
        unflatten_llm(llm, llm_text.size(), [&llm_text](uint64_t o, uint64_t n) { return llm_text.get(o, n); }, t);
    if (!bad_llm.empty()) fail(errc::invalid_input, where + "/" + bad_llm);
  }
  if (version >= 4) {
    step = where + "/skills";
    const std::vector<skill_row> skills = read_table<skill_row>(g, where, "skills", skill_type());
    step = where + "/skills_text";
    blob_reader skills_text(g, where, "skills_text");
    const std::string bad = unflatten_skills(
        skills, skills_text.size(), [&skills_text](uint64_t o, uint64_t n) { return skills_text.get(o, n); }, t);
    if (!bad.empty()) fail(errc::invalid_input, where + "/" + bad);
  }
  if (auto bad = check_task(t); !bad.empty()) fail(errc::invalid_input, where + ": " + bad);
  return t;
}

sweep_record read_file(const std::string& file, std::string& step) {
  step = "opening the file";
  H5::H5File f(file, H5F_ACC_RDONLY);
  H5::Group root = f.openGroup("/");
  sweep_record r;
  step = "root attributes";
  int32_t version = 0;
  read_attribute(root, "/", "schema_version", H5::PredType::NATIVE_INT32, &version);
  if (version < kOldestReadableSchema || version > kSchemaVersion) {
    const std::string by = root.attrExists("kevolve_version") ? read_string_attribute(root, "/", "kevolve_version") : "";
    const std::string writer = by.empty() ? "another kevolve" : "kevolve " + by;
    fail(errc::invalid_input, "store schema_version is " + std::to_string(version) + ", expected " +
                                  std::to_string(kOldestReadableSchema) + " to " + std::to_string(kSchemaVersion) +
                                  " (written by " + writer + ")");
  }
  r.kevolve_version = read_string_attribute(root, "/", "kevolve_version");
  r.config_yaml = read_string_attribute(root, "/", "config_yaml");
  r.config_hash = read_string_attribute(root, "/", "config_hash");
  r.created_at = read_string_attribute(root, "/", "created_at");
  int64_t task_count = 0;
  read_attribute(root, "/", "task_count", H5::PredType::NATIVE_INT64, &task_count);
  if (task_count < 0) fail(errc::invalid_input, "/: attribute 'task_count' is negative");
  require_link(root, "/", "tasks", "group");
  H5::Group tasks = f.openGroup("/tasks");
  for (int64_t i = 0; i < task_count; ++i) r.tasks.push_back(read_task(tasks, i, version, step));
  if (version >= 2) {
    step = "/ranks";
    for (const rank_row& w : read_table<rank_row>(root, "", "ranks", rank_type())) {
      rank_record k;
      k.session = w.session;
      k.rank = w.rank;
      k.host = from_fixed(w.host);
      k.backend = from_fixed(w.backend);
      k.state = from_fixed(w.state);
      k.evaluations = w.evaluations;
      k.deadline_misses = w.deadline_misses;
      k.queue_depth = int32_t(w.queue_depth);
      k.busy_seconds = w.busy_seconds;
      k.uptime_seconds = w.uptime_seconds;
      k.cpu_seconds = w.cpu_seconds;
      for (int i = 0; i < kRankStatusColumns; ++i)
        if (w.by_status[i]) k.by_status[kRankStatusNames[i]] = w.by_status[i];
      r.ranks.push_back(std::move(k));
    }
  }
  r.schema_version = kSchemaVersion;  // what it becomes when written back
  return r;
}

// Runs `body` on an existing file opened read-write (the edit helpers).
template <class F>
expected<void> edit_file(const fs::path& path, const std::string& what, F body) {
  const hdf5_errors_captured quiet;
  try {
    H5::H5File f(path.string(), H5F_ACC_RDWR);
    if (body(f.getId()) < 0)
      return make_error(errc::invalid_input, path.string() + ": cannot " + what + ": " + t_hdf5_detail);
    f.close();
    return {};
  } catch (const H5::Exception& e) {
    return make_error(errc::invalid_input, path.string() + ": cannot " + what + ": " + hdf5_message(e));
  }
}

}  // namespace

expected<void> write_store(const fs::path& path, const sweep_record& r, const store_options& options) {
  const std::string target = path.string();
  if (r.schema_version != kSchemaVersion)
    return make_error(errc::invalid_input, target + ": cannot write a record of schema_version " +
                                               std::to_string(r.schema_version) + ", this build writes " +
                                               std::to_string(kSchemaVersion));
  if (auto bad = check_record(r); !bad.empty())
    return make_error(errc::invalid_input, target + ": cannot write the store: " + bad);
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(errc::io_error, target + ": cannot create directory " + dir.string() + ": " + ec.message());

  const std::string tmp = target + ".tmp-" + std::to_string(::getpid());
  auto give_up = [&](std::string why) {
    ::unlink(tmp.c_str());
    return make_error(errc::io_error, target + ": cannot write the store: " + why);
  };
  {
    const hdf5_errors_captured quiet;
    std::string step;
    try {
      write_file(tmp, r, options, step);
    } catch (const failure& f) {
      return give_up(step + ": " + f.what);
    } catch (const H5::Exception& e) {
      return give_up(step + ": " + hdf5_message(e));
    } catch (const std::exception& e) {
      return give_up(step + ": " + e.what());
    }
  }
  if (auto why = fsync_path(tmp, false); !why.empty()) return give_up(tmp + ": " + why);
  if (::rename(tmp.c_str(), target.c_str()) != 0) return give_up(std::string("rename from ") + tmp + " failed: " + std::strerror(errno));
  if (auto why = fsync_path(dir.string(), true); !why.empty())
    return make_error(errc::io_error, target + ": written, but the directory " + dir.string() + " could not be synced: " + why);
  return {};
}

expected<sweep_record> read_store(const fs::path& path) {
  const std::string file = path.string();
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return make_error(errc::not_found, file + ": no such store file");
  if (fs::is_directory(st)) return make_error(errc::invalid_input, file + ": is a directory, expected a store file");
  const hdf5_errors_captured quiet;
  const htri_t is_hdf5 = H5Fis_hdf5(file.c_str());
  if (is_hdf5 <= 0)
    return make_error(errc::invalid_input, file + ": not an HDF5 file, expected a kevolve store" +
                                               (t_hdf5_detail.empty() ? "" : " (" + t_hdf5_detail + ")"));
  std::string step;
  try {
    return read_file(file, step);
  } catch (const failure& f) {
    return make_error(f.code, file + ": " + f.what);
  } catch (const H5::Exception& e) {
    return make_error(errc::invalid_input, file + ": corrupt or truncated store (" + step + "): " + hdf5_message(e));
  } catch (const std::exception& e) {
    return make_error(errc::invalid_input, file + ": corrupt store (" + step + "): " + e.what());
  }
}

expected<void> store_remove_object(const fs::path& path, const std::string& object) {
  return edit_file(path, "remove " + object, [&](hid_t f) { return H5Ldelete(f, object.c_str(), H5P_DEFAULT); });
}

expected<void> store_remove_attribute(const fs::path& path, const std::string& object, const std::string& name) {
  return edit_file(path, "remove attribute '" + name + "' of " + object,
                   [&](hid_t f) { return H5Adelete_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT); });
}

expected<void> store_set_int_attribute(const fs::path& path, const std::string& object, const std::string& name,
                                       int64_t value) {
  return edit_file(path, "set attribute '" + name + "' of " + object, [&](hid_t f) -> herr_t {
    hid_t a = H5Aexists_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT) > 0
                  ? H5Aopen_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT)
                  : -1;
    if (a < 0) {
      const hid_t space = H5Screate(H5S_SCALAR);
      a = H5Acreate_by_name(f, object.c_str(), name.c_str(), H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Sclose(space);
      if (a < 0) return -1;
    }
    const herr_t rc = H5Awrite(a, H5T_NATIVE_INT64, &value);
    H5Aclose(a);
    return rc;
  });
}

}  // namespace kevolve::store
