// The HDF5 store (layout in hdf5_store.h). HDF5 errors and C++ exceptions stay
// in this file: every entry point catches them and returns an error that
// names the file, the object and, from HDF5's error stack, the cause.
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

#include "store/record_check.h"
#include "store/store_rows.h"

namespace kevolve::store {
namespace {

namespace fs = std::filesystem;

// A failure inside this file, turned into an error at the entry point.
struct failure {
  errc code;
  std::string what;
};
[[noreturn]] void fail(errc code, std::string what) { throw failure{code, std::move(what)}; }

// --- HDF5's error stack -----------------------------------------------------

// The innermost and outermost descriptions of the last HDF5 failure on this
// thread ("truncated file: eof = 2048, ...; unable to open file").
thread_local std::string t_hdf5_detail;

herr_t collect_message(unsigned, const H5E_error2_t* e, void* data) {
  if (e && e->desc && *e->desc) static_cast<std::vector<std::string>*>(data)->push_back(e->desc);
  return 0;
}

herr_t capture_hdf5_error(hid_t stack, void*) {
  std::vector<std::string> msgs;
  H5Ewalk2(stack, H5E_WALK_DOWNWARD, collect_message, &msgs);
  if (msgs.empty()) t_hdf5_detail.clear();
  else if (msgs.size() == 1) t_hdf5_detail = msgs.front();
  else t_hdf5_detail = msgs.back() + "; " + msgs.front();
  return 0;
}

// While alive: HDF5 prints nothing and records its failures in t_hdf5_detail.
class hdf5_errors_captured {
 public:
  hdf5_errors_captured() {
    H5Eget_auto2(H5E_DEFAULT, &old_func_, &old_data_);
    H5Eset_auto2(H5E_DEFAULT, capture_hdf5_error, nullptr);
    t_hdf5_detail.clear();
  }
  ~hdf5_errors_captured() { H5Eset_auto2(H5E_DEFAULT, old_func_, old_data_); }
  hdf5_errors_captured(const hdf5_errors_captured&) = delete;
  hdf5_errors_captured& operator=(const hdf5_errors_captured&) = delete;

 private:
  H5E_auto2_t old_func_ = nullptr;
  void* old_data_ = nullptr;
};

std::string hdf5_message(const H5::Exception& e) {
  std::string m = e.getFuncName() + ": " + e.getDetailMsg();
  if (!t_hdf5_detail.empty()) m += " (" + t_hdf5_detail + ")";
  return m;
}

// --- types of the compound datasets (rows in store_rows.h) ---------------

#define KEVOLVE_MEMBER(type, row, field, h5) type.insertMember(#field, HOFFSET(row, field), H5::PredType::h5)

// Columns of the `ranks` table counting verdicts by status (and "error":
// evaluations that failed for operational reasons).
constexpr int kRankStatusColumns = 9;
constexpr const char* kRankStatusNames[kRankStatusColumns] = {
    "ok", "compile_failed", "wrong_result", "runtime_failed", "timeout", "crashed", "suspicious", "skipped", "error"};

// `with_rank`: schema 2 and later.
H5::CompType node_type(bool with_rank = true) {
  H5::CompType t(sizeof(node_row));
  if (with_rank) KEVOLVE_MEMBER(t, node_row, rank, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, id, NATIVE_INT64);
  KEVOLVE_MEMBER(t, node_row, parent, NATIVE_INT64);
  KEVOLVE_MEMBER(t, node_row, depth, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, mode, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, state, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, status, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, fitness, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, node_row, created_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, node_row, finished_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, node_row, visits, NATIVE_INT64);
  KEVOLVE_MEMBER(t, node_row, value_sum, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, node_row, code_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, code_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, origin_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, origin_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, reason_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, reason_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, context_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, context_length, NATIVE_UINT64);
  return t;
}

H5::CompType measurement_type() {
  H5::CompType t(sizeof(measurement_row));
  KEVOLVE_MEMBER(t, measurement_row, node, NATIVE_INT64);
  KEVOLVE_MEMBER(t, measurement_row, holdout, NATIVE_INT32);
  KEVOLVE_MEMBER(t, measurement_row, max_abs_error, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, candidate_median_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, candidate_p10_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, candidate_p90_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, baseline_median_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, speedup, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, achieved_gbs, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, achieved_gflops, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, roofline_fraction, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, shape_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, shape_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, status_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, status_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, bottleneck_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, bottleneck_length, NATIVE_UINT64);
  return t;
}

H5::CompType llm_type() {
  H5::CompType t(sizeof(llm_row));
  KEVOLVE_MEMBER(t, llm_row, node, NATIVE_INT64);
  KEVOLVE_MEMBER(t, llm_row, attempts, NATIVE_INT32);
  KEVOLVE_MEMBER(t, llm_row, tokens_estimated, NATIVE_INT32);
  KEVOLVE_MEMBER(t, llm_row, prompt_tokens, NATIVE_INT64);
  KEVOLVE_MEMBER(t, llm_row, completion_tokens, NATIVE_INT64);
  KEVOLVE_MEMBER(t, llm_row, latency_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, llm_row, total_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, llm_row, cost, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, llm_row, prompt_ms, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, llm_row, endpoint_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, endpoint_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, model_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, model_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, status_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, status_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, error_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, error_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, prompt_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, prompt_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, reply_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, reply_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, documents_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, documents_length, NATIVE_UINT64);
  return t;
}

// The `ranks` table: one row per evaluator rank and session.
struct rank_row {
  int32_t session, rank;
  char host[64], backend[16], state[16];
  int64_t evaluations, deadline_misses, queue_depth;
  double busy_seconds, uptime_seconds, cpu_seconds;
  int64_t by_status[kRankStatusColumns];
};

H5::CompType rank_type() {
  H5::CompType t(sizeof(rank_row));
  KEVOLVE_MEMBER(t, rank_row, session, NATIVE_INT32);
  KEVOLVE_MEMBER(t, rank_row, rank, NATIVE_INT32);
  t.insertMember("host", HOFFSET(rank_row, host), H5::StrType(H5::PredType::C_S1, sizeof(rank_row::host)));
  t.insertMember("backend", HOFFSET(rank_row, backend), H5::StrType(H5::PredType::C_S1, sizeof(rank_row::backend)));
  t.insertMember("state", HOFFSET(rank_row, state), H5::StrType(H5::PredType::C_S1, sizeof(rank_row::state)));
  KEVOLVE_MEMBER(t, rank_row, evaluations, NATIVE_INT64);
  KEVOLVE_MEMBER(t, rank_row, deadline_misses, NATIVE_INT64);
  KEVOLVE_MEMBER(t, rank_row, queue_depth, NATIVE_INT64);
  KEVOLVE_MEMBER(t, rank_row, busy_seconds, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, rank_row, uptime_seconds, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, rank_row, cpu_seconds, NATIVE_DOUBLE);
  for (int i = 0; i < kRankStatusColumns; ++i)
    t.insertMember(kRankStatusNames[i], HOFFSET(rank_row, by_status) + sizeof(int64_t) * size_t(i), H5::PredType::NATIVE_INT64);
  return t;
}

template <size_t N>
void copy_fixed(char (&out)[N], const std::string& s) {
  std::memset(out, 0, N);
  std::memcpy(out, s.data(), std::min(N - 1, s.size()));
}

template <size_t N>
std::string from_fixed(const char (&in)[N]) {
  return std::string(in, strnlen(in, N));
}

#undef KEVOLVE_MEMBER

// "0 inherit, 1 compare_siblings, ...": the meaning of an int column.
template <class E, class F>
std::string value_names(E last, F name) {
  std::string s;
  for (int v = 0; v <= int(last); ++v) s += (v ? ", " : "") + std::to_string(v) + " " + name(E(v));
  return s;
}

// --- writing ----------------------------------------------------------------

void write_string_attribute(H5::H5Object& obj, const char* name, const std::string& value) {
  H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
  t.setCset(H5T_CSET_UTF8);
  H5::Attribute a = obj.createAttribute(name, t, H5::DataSpace(H5S_SCALAR));
  const char* p = value.c_str();
  a.write(t, &p);
}

template <class T>
void write_attribute(H5::H5Object& obj, const char* name, const H5::PredType& type, const T* values, hsize_t count = 1) {
  H5::DataSpace space = count == 1 ? H5::DataSpace(H5S_SCALAR) : H5::DataSpace(1, &count);
  H5::Attribute a = obj.createAttribute(name, type, space);
  a.write(type, values);
}

template <class Row>
H5::DataSet write_table(H5::Group& g, const char* name, H5::CompType memory_type, H5::CompType file_type,
                        const std::vector<Row>& rows) {
  file_type.pack();
  const hsize_t n = rows.size();
  H5::DataSet ds = g.createDataSet(name, file_type, H5::DataSpace(1, &n));
  if (n > 0) ds.write(rows.data(), memory_type);
  return ds;
}

// Appends strings to a 1-D uint8 dataset of known total size through a
// reused buffer, so that the whole text never sits in memory twice.
class blob_writer {
 public:
  blob_writer(H5::Group& g, const char* name, uint64_t total, int deflate) : total_(total) {
    H5::DSetCreatPropList props;
    const hsize_t dims = total;
    if (deflate > 0 && total > 0) {
      if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) fail(errc::io_error, "this HDF5 library has no deflate filter");
      chunk_ = std::min<uint64_t>(total, kChunk);
      const hsize_t c = chunk_;
      props.setChunk(1, &c);
      props.setDeflate(std::min(deflate, 9));
    }
    ds_ = g.createDataSet(name, H5::PredType::NATIVE_UINT8, H5::DataSpace(1, &dims), props);
    buf_.reserve(kFlush + kChunk);
  }

  // The offset of `s` in the dataset.
  uint64_t append(std::string_view s) {
    const uint64_t at = written_ + buf_.size();
    buf_.append(s.data(), s.size());
    if (buf_.size() >= kFlush) flush(false);
    return at;
  }

  void finish() {
    flush(true);
    if (written_ != total_)
      fail(errc::internal, "wrote " + std::to_string(written_) + " bytes of text, expected " + std::to_string(total_));
  }

 private:
  static constexpr uint64_t kChunk = 1 << 20;
  static constexpr uint64_t kFlush = 8 << 20;

  // Writes whole chunks (everything when `all`), so that a compressed chunk
  // is written once.
  void flush(bool all) {
    uint64_t n = buf_.size();
    if (!all && chunk_ > 0) n -= n % chunk_;
    if (n == 0) return;
    if (written_ + n > total_) fail(errc::internal, "more text than counted");
    H5::DataSpace file_space = ds_.getSpace();
    const hsize_t offset = written_, count = n;
    file_space.selectHyperslab(H5S_SELECT_SET, &count, &offset);
    ds_.write(buf_.data(), H5::PredType::NATIVE_UINT8, H5::DataSpace(1, &count), file_space);
    written_ += n;
    buf_.erase(0, n);
  }

  H5::DataSet ds_;
  uint64_t total_ = 0, written_ = 0, chunk_ = 0;
  std::string buf_;
};

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
  write_string_attribute(ds, "status_values", value_names(eval::status::skipped, [](eval::status s) { return eval::to_string(s); }));

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
  write_table(g, "llm", llm_type(), llm_type(), llm);
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

void require_link(const H5::Group& g, const std::string& where, const char* name, const char* kind) {
  if (H5Lexists(g.getId(), name, H5P_DEFAULT) <= 0) fail(errc::invalid_input, where + ": missing " + kind + " '" + name + "'");
}

H5::Attribute open_attribute(const H5::H5Object& obj, const std::string& where, const char* name) {
  if (!obj.attrExists(name)) fail(errc::invalid_input, where + ": missing attribute '" + name + "'");
  return obj.openAttribute(name);
}

std::string read_string_attribute(const H5::H5Object& obj, const std::string& where, const char* name) {
  H5::Attribute a = open_attribute(obj, where, name);
  H5::DataType type = a.getDataType();  // a memory type of the same string kind and character set
  if (type.getClass() != H5T_STRING || a.getSpace().getSimpleExtentNpoints() != 1)
    fail(errc::invalid_input, where + ": attribute '" + name + "' must be one string");
  if (H5Tis_variable_str(type.getId()) > 0) {
    char* p = nullptr;
    if (H5Aread(a.getId(), type.getId(), &p) < 0)
      fail(errc::invalid_input, where + ": cannot read attribute '" + name + "': " + t_hdf5_detail);
    std::string s = p ? p : "";
    if (p) H5free_memory(p);
    return s;
  }
  std::string s(type.getSize(), '\0');
  a.read(type, s.data());
  s.resize(std::strlen(s.c_str()));
  return s;
}

// A numeric attribute of `count` values, converted to T.
template <class T>
void read_attribute(const H5::H5Object& obj, const std::string& where, const char* name, const H5::PredType& type,
                    T* out, hssize_t count = 1) {
  H5::Attribute a = open_attribute(obj, where, name);
  const H5T_class_t c = a.getDataType().getClass();
  if ((c != H5T_INTEGER && c != H5T_FLOAT) || a.getSpace().getSimpleExtentNpoints() != count)
    fail(errc::invalid_input, where + ": attribute '" + name + "' must be " +
                                  (count == 1 ? std::string("a number") : std::to_string(count) + " numbers"));
  a.read(type, out);
}

// The length of a 1-D dataset.
hsize_t length_of(const H5::DataSet& ds, const std::string& what) {
  H5::DataSpace space = ds.getSpace();
  if (space.getSimpleExtentNdims() != 1) fail(errc::invalid_input, what + ": expected a 1-D dataset");
  hsize_t n = 0;
  space.getSimpleExtentDims(&n);
  return n;
}

template <class Row>
std::vector<Row> read_table(const H5::Group& g, const std::string& where, const char* name, const H5::CompType& type) {
  require_link(g, where, name, "dataset");
  const std::string what = where + "/" + name;
  H5::DataSet ds = g.openDataSet(name);
  H5::DataType file_type = ds.getDataType();
  if (file_type.getClass() != H5T_COMPOUND) fail(errc::invalid_input, what + ": expected a compound dataset");
  for (int i = 0; i < type.getNmembers(); ++i) {
    const std::string field = type.getMemberName(unsigned(i));
    if (H5Tget_member_index(file_type.getId(), field.c_str()) < 0)
      fail(errc::invalid_input, what + ": missing field '" + field + "'");
  }
  std::vector<Row> rows(length_of(ds, what));
  if (!rows.empty()) ds.read(rows.data(), type);
  return rows;
}

// Serves byte ranges of the `text` dataset through a window read in large
// pieces: strings stored in order are read sequentially.
class blob_reader {
 public:
  blob_reader(const H5::Group& g, const std::string& where, const char* name) : what_(where + "/" + name) {
    require_link(g, where, name, "dataset");
    ds_ = g.openDataSet(name);
    H5::DataType t = ds_.getDataType();
    if (t.getClass() != H5T_INTEGER || t.getSize() != 1) fail(errc::invalid_input, what_ + ": expected a uint8 dataset");
    size_ = length_of(ds_, what_);
  }

  uint64_t size() const { return size_; }

  // A byte range inside the dataset (checked by unflatten).
  std::string get(uint64_t offset, uint64_t length) {
    if (offset < window_offset_ || offset + length > window_offset_ + window_.size())
      refill(offset, std::min<uint64_t>(std::max<uint64_t>(kWindow, length), size_ - offset));
    return window_.substr(offset - window_offset_, length);
  }

 private:
  static constexpr uint64_t kWindow = 16 << 20;

  void refill(uint64_t offset, uint64_t count) {
    window_.resize(count);
    H5::DataSpace file_space = ds_.getSpace();
    const hsize_t o = offset, c = count;
    file_space.selectHyperslab(H5S_SELECT_SET, &c, &o);
    ds_.read(window_.data(), H5::PredType::NATIVE_UINT8, H5::DataSpace(1, &c), file_space);
    window_offset_ = offset;
  }

  std::string what_;
  H5::DataSet ds_;
  uint64_t size_ = 0;
  uint64_t window_offset_ = 0;
  std::string window_;
};

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
  tables.measurements = read_table<measurement_row>(g, where, "measurements", measurement_type());

  step = where + "/text";
  blob_reader text(g, where, "text");
  const std::string broken = unflatten(tables, text.size(), [&text](uint64_t o, uint64_t n) { return text.get(o, n); }, t);
  if (!broken.empty()) fail(errc::invalid_input, where + "/" + broken);
  if (version >= 3) {
    step = where + "/llm";
    const std::vector<llm_row> llm = read_table<llm_row>(g, where, "llm", llm_type());
    step = where + "/llm_text";
    blob_reader llm_text(g, where, "llm_text");
    const std::string bad_llm =
        unflatten_llm(llm, llm_text.size(), [&llm_text](uint64_t o, uint64_t n) { return llm_text.get(o, n); }, t);
    if (!bad_llm.empty()) fail(errc::invalid_input, where + "/" + bad_llm);
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
