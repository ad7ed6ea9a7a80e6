// The knowledge base as shipped in knowledge/: every document loads, every
// backend has constraints, and retrieval follows the diagnosis.
#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "knowledge/knowledge_base.h"

namespace kevolve::knowledge {
namespace {

const knowledge_base& shipped() {
  static const knowledge_base kb = [] {
    auto k = knowledge_base::load();
    EXPECT_TRUE(k.has_value()) << (k ? "" : k.error().message);
    return k ? std::move(*k) : knowledge_base{};
  }();
  return kb;
}

std::vector<std::string> paths(const std::vector<hit>& hits) {
  std::vector<std::string> out;
  for (const auto& h : hits) out.push_back(h.doc->path);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(KnowledgeBase, EveryBackendHasConstraintsAndEveryProfileHardwareDocs) {
  for (const char* b : {"cpu", "cuda", "hip", "mtia_emu"}) {
    const auto c = shipped().constraints(b);
    EXPECT_GE(c.size(), 2u) << b;  // the common rules and the backend's own
  }
  for (const char* hw : {"x86", "h200", "mi300x", "mtia2i", "mtia300"}) {
    int n = 0;
    for (const auto& d : shipped().documents()) n += d.level == "hardware" && has(d.hardware, hw);
    EXPECT_GE(n, 2) << hw;
  }
}

TEST(KnowledgeBase, AMemoryBoundVerdictRetrievesTheMemoryHierarchyDocuments) {
  verdict_signals v;
  v.has_parent = true;
  v.status = "ok";
  v.bottleneck = "memory-bound";
  v.roofline_fraction = 0.2;
  const auto t = diagnose(v);
  ASSERT_TRUE(has(t, "memory_bound"));
  for (const auto& [backend, hw, doc] : {std::tuple<const char*, const char*, const char*>{"cpu", "x86", "hardware/x86/memory-hierarchy.md"},
                                         {"cuda", "h200", "hardware/h200/memory-hierarchy.md"},
                                         {"hip", "mi300x", "hardware/mi300x/memory-hierarchy.md"},
                                         {"mtia_emu", "mtia2i", "hardware/mtia2i/memory-hierarchy.md"}}) {
    query q;
    q.triggers = t;
    q.backend = backend;
    q.hardware = hw;
    q.text = "softmax row_reduction memory bandwidth";
    const auto p = paths(shipped().search(q));
    ASSERT_FALSE(p.empty()) << backend;
    EXPECT_EQ(p.front(), doc) << backend;
    EXPECT_TRUE(has(p, "guides/tuning.md")) << backend;
    EXPECT_FALSE(has(p, "guides/debugging.md")) << backend;
    for (const auto& x : p)
      if (x.rfind("hardware/", 0) == 0) {
        EXPECT_NE(x.find(std::string("/") + hw + "/"), std::string::npos) << x;
      }
  }
}

TEST(KnowledgeBase, ACompileErrorRetrievesTheDebuggingGuide) {
  verdict_signals v;
  v.has_parent = true;
  v.status = "compile_failed";
  v.diagnostics = "error: 'kv_args' does not name a type";
  query q;
  q.triggers = diagnose(v);
  q.backend = "cpu";
  q.hardware = "x86";
  q.text = "error does not name a type";
  const auto p = paths(shipped().search(q));
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p.front(), "guides/debugging.md");
  EXPECT_FALSE(has(p, "hardware/x86/memory-hierarchy.md"));
}

TEST(KnowledgeBase, DiagnosisNamesSpillsAndTheFirstDraft) {
  EXPECT_EQ(diagnose({}), std::vector<std::string>{"first_draft"});
  verdict_signals v;
  v.has_parent = true;
  v.status = "ok";
  v.bottleneck = "compute-bound";
  v.diagnostics = "ptxas info: 48 bytes spill stores";
  EXPECT_EQ(diagnose(v), (std::vector<std::string>{"compute_bound", "register_spills"}));
  // Reports of no spills and good occupancy (ptxas, hip's remarks) are no diagnosis.
  v.diagnostics = "ptxas info: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                  "remark:     VGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]\n"
                  "remark:     Occupancy [waves/SIMD]: 8 [-Rpass-analysis=kernel-resource-usage]";
  EXPECT_EQ(diagnose(v), (std::vector<std::string>{"compute_bound"}));
  v.diagnostics = "remark:     VGPRs Spill: 12 [-Rpass-analysis=kernel-resource-usage]\n"
                  "remark:     Occupancy [waves/SIMD]: 2 [-Rpass-analysis=kernel-resource-usage]";
  EXPECT_EQ(diagnose(v), (std::vector<std::string>{"compute_bound", "register_spills", "low_occupancy"}));
}

TEST(KnowledgeBase, TextSearchRanksByBm25) {
  query q;
  q.text = "wavefront 64 lanes";
  q.levels = {"constraint", "guide", "hardware"};
  const auto p = paths(shipped().search(q));
  ASSERT_FALSE(p.empty());
  EXPECT_TRUE(p.front().find("mi300x") != std::string::npos || p.front() == "constraints/hip.md") << p.front();
}

TEST(KnowledgeBase, BadFrontMatterNamesTheFile) {
  char tmpl[] = "/tmp/kevolve-kb-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  std::filesystem::create_directories(dir + "/guides");
  std::ofstream(dir + "/guides/x.md") << "---\ntitle: x\nlevel: tutorial\n---\nbody\n";
  auto kb = knowledge_base::load(dir);
  ASSERT_FALSE(kb.has_value());
  EXPECT_NE(kb.error().message.find("guides/x.md: 'level' must be constraint, guide, hardware or skill, got 'tutorial'"),
            std::string::npos) << kb.error().message;
  std::ofstream(dir + "/guides/x.md") << "no front matter\n";
  kb = knowledge_base::load(dir);
  ASSERT_FALSE(kb.has_value());
  EXPECT_NE(kb.error().message.find("guides/x.md:1: expected YAML front matter"), std::string::npos) << kb.error().message;
  std::ofstream(dir + "/guides/x.md") << "---\ntitle: x\nlevel: guide\nprofile: h200\n---\nbody\n";
  kb = knowledge_base::load(dir);
  ASSERT_FALSE(kb.has_value());
  EXPECT_NE(kb.error().message.find("unknown front matter key 'profile'"), std::string::npos) << kb.error().message;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kevolve::knowledge
