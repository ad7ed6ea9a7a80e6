// HDF5 plumbing of the store, independent of its layout: HDF5's error stack
// captured into messages, attributes, compound tables and byte blobs written
// and read with checks that name the object. Only hdf5_store.cpp includes
// this (HDF5 stays inside src/store/, STYLE.md).
#pragma once

#include <H5Cpp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace kevolve::store::hdf5_io {

// A failure inside the store, turned into an error at its entry points.
struct failure {
  errc code;
  std::string what;
};
[[noreturn]] inline void fail(errc code, std::string what) { throw failure{code, std::move(what)}; }

// --- HDF5's error stack -----------------------------------------------------

// The innermost and outermost descriptions of the last HDF5 failure on this
// thread ("truncated file: eof = 2048, ...; unable to open file").
inline thread_local std::string t_hdf5_detail;

inline herr_t collect_message(unsigned, const H5E_error2_t* e, void* data) {
  if (e && e->desc && *e->desc) static_cast<std::vector<std::string>*>(data)->push_back(e->desc);
  return 0;
}

inline herr_t capture_hdf5_error(hid_t stack, void*) {
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

inline std::string hdf5_message(const H5::Exception& e) {
  std::string m = e.getFuncName() + ": " + e.getDetailMsg();
  if (!t_hdf5_detail.empty()) m += " (" + t_hdf5_detail + ")";
  return m;
}


inline void write_string_attribute(H5::H5Object& obj, const char* name, const std::string& value) {
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


inline void require_link(const H5::Group& g, const std::string& where, const char* name, const char* kind) {
  if (H5Lexists(g.getId(), name, H5P_DEFAULT) <= 0) fail(errc::invalid_input, where + ": missing " + kind + " '" + name + "'");
}

inline H5::Attribute open_attribute(const H5::H5Object& obj, const std::string& where, const char* name) {
  if (!obj.attrExists(name)) fail(errc::invalid_input, where + ": missing attribute '" + name + "'");
  return obj.openAttribute(name);
}

inline std::string read_string_attribute(const H5::H5Object& obj, const std::string& where, const char* name) {
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
inline hsize_t length_of(const H5::DataSet& ds, const std::string& what) {
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


}  // namespace kevolve::store::hdf5_io
