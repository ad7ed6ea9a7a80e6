// A store is readable by standard HDF5 tools, with the layout documented in
// src/store/hdf5_store.h: h5dump shows it, h5py reads the nodes table and
// decodes code from the text blob.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "store/hdf5_store.h"
#include "store_fixtures.h"

namespace kevolve::store {
namespace {

namespace fs = std::filesystem;
using namespace testing;

// stdout of a shell command and its exit status.
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* f = ::popen(command.c_str(), "r");
  if (!f) return {"", -1};
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const int status = ::pclose(f);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string h;
  for (unsigned char c : s) {
    h += digits[c >> 4];
    h += digits[c & 15];
  }
  return h;
}

class StoreTools : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = temp_dir::create("kevolve-store-tools-");
    ASSERT_TRUE(d.has_value());
    dir_ = std::make_unique<temp_dir>(std::move(*d));
    path_ = dir_->path() / "sweep.h5";
    record_ = make_record();
    auto w = write_store(path_, record_);
    ASSERT_TRUE(w.has_value()) << w.error().message;
  }
  std::unique_ptr<temp_dir> dir_;
  fs::path path_;
  sweep_record record_;
};

TEST_F(StoreTools, H5dumpShowsTheLayout) {
  if (::access("/usr/bin/h5dump", X_OK) != 0) GTEST_SKIP() << "h5dump not installed (Debian package hdf5-tools)";
  auto [out, rc] = run("/usr/bin/h5dump -H '" + path_.string() + "' 2>&1");
  ASSERT_EQ(rc, 0) << out;
  for (const char* part : {"ATTRIBUTE \"schema_version\"", "ATTRIBUTE \"config_yaml\"", "GROUP \"tasks\"", "GROUP \"1\"",
                           "DATASET \"nodes\"", "DATASET \"text\"", "DATASET \"context\"", "DATASET \"measurements\"",
                           "\"fitness\"", "\"code_offset\"", "ATTRIBUTE \"rng_state\""})
    EXPECT_NE(out.find(part), std::string::npos) << "h5dump -H lacks " << part << ":\n" << out;
}

TEST_F(StoreTools, H5pyReadsTheNodesTable) {
  if (::access("/usr/bin/python3", X_OK) != 0 || run("/usr/bin/python3 -c 'import h5py' 2>&1").second != 0)
    GTEST_SKIP() << "/usr/bin/python3 with h5py not installed (Debian package python3-h5py)";
  const task_record& t = record_.tasks[0];
  node_id pick = search::kNoNode;
  for (const node& n : t.search.nodes.nodes())
    if (n.ok() && n.id > 10 && n.code.find('\0') == std::string::npos) {
      pick = n.id;
      break;
    }
  ASSERT_NE(pick, search::kNoNode);
  const std::string script =
      "import h5py, sys\n"
      "f = h5py.File(sys.argv[1], 'r')\n"
      "assert int(f.attrs['schema_version']) == 5\n"
      "g = f['tasks/0']\n"
      "assert {'torch_eager_median_s', 'torch_compile_median_s'} <= set(g['measurements'].dtype.names)\n"
      "nodes, text, k = g['nodes'], g['text'], int(sys.argv[2])\n"
      "row = nodes[k]\n"
      "print(len(nodes))\n"
      "print(repr(float(row['fitness'])))\n"
      "print(text[row['code_offset']:row['code_offset'] + row['code_length']].tobytes().hex())\n"
      "print(g.attrs['id'])\n"
      "import json\n"
      "m = [r for r in g['measurements'][()] if r['metrics_length'] > 0][0]\n"
      "print(json.loads(text[m['metrics_offset']:m['metrics_offset'] + m['metrics_length']].tobytes())['dram_pct'])\n";
  ASSERT_TRUE(write_file_atomic(dir_->path() / "read.py", script).has_value());
  auto [out, rc] = run("/usr/bin/python3 '" + (dir_->path() / "read.py").string() + "' '" + path_.string() + "' " +
                       std::to_string(pick) + " 2>&1");
  ASSERT_EQ(rc, 0) << out;
  std::istringstream lines(out);
  std::string count, fitness, code, id;
  std::getline(lines, count);
  std::getline(lines, fitness);
  std::getline(lines, code);
  std::getline(lines, id);
  std::string dram;
  std::getline(lines, dram);
  EXPECT_EQ(dram, "71.5") << "the metrics of a measurement, read with h5py and json";
  EXPECT_EQ(count, std::to_string(t.search.nodes.size()));
  EXPECT_EQ(std::strtod(fitness.c_str(), nullptr), t.search.nodes.at(pick).fitness) << fitness;
  EXPECT_EQ(code, hex(t.search.nodes.at(pick).code));
  EXPECT_EQ(id, t.id);
}

}  // namespace
}  // namespace kevolve::store
