#include "synth/factory.h"

#include <cstdio>
#include <mutex>

#include "synth/builtin_synthesizer.h"
#include "synth/llm_synthesizer.h"

namespace kevolve::synth {
namespace {

std::mutex resources_mu;
std::shared_ptr<llm_resources> process_resources;
std::mutex seed_mu;
std::vector<seed_skill> seed_skills;  // under seed_mu

std::vector<seed_skill> current_seed_skills() {
  std::lock_guard<std::mutex> lk(seed_mu);
  return seed_skills;
}

}  // namespace

expected<void> set_seed_skills(std::vector<seed_skill> skills) {
  // Refuse what would break a synthesizer later: the builtin priors' blocks
  // and the knowledge base's front matter.
  knowledge::knowledge_base probe;
  skill_priors priors;
  for (const auto& s : skills) {
    if (auto r = probe.add(s.path, s.text); !r) return r;
    if (auto r = priors.add(s.text, s.path); !r) return r;
  }
  std::lock_guard<std::mutex> lk(seed_mu);
  seed_skills = std::move(skills);
  return {};
}

expected<std::unique_ptr<builtin_synthesizer>> make_builtin_synthesizer() {
  auto s = builtin_synthesizer::create();
  if (!s) return tl::unexpected(s.error());
  for (const auto& k : current_seed_skills())
    if (auto r = (*s)->add_skill(k.text, k.path); !r) return tl::unexpected(r.error());
  return s;
}

expected<std::shared_ptr<llm_resources>> make_llm_resources(const llm::llm_config& config, llm::notice_sink notice,
                                                            std::shared_ptr<llm::llm_client> client) {
  auto r = std::make_shared<llm_resources>();
  r->notice = notice ? std::move(notice) : [](const std::string& m) { std::fprintf(stderr, "kevolve: llm: %s\n", m.c_str()); };
  auto kb = knowledge::knowledge_base::load();
  if (!kb) return tl::unexpected(kb.error());
  for (const auto& k : current_seed_skills())
    if (auto added = kb->add(k.path, k.text); !added) return tl::unexpected(added.error());
  r->kb = std::make_shared<const knowledge::knowledge_base>(std::move(*kb));
  r->prompt_tokens = config.prompt_tokens;
  r->note_chars = config.skill_note_chars;
  if (client) r->client = std::move(client);
  else if (!config.endpoints.empty()) r->client = std::make_shared<llm::http_llm_client>(config, r->notice);
  return r;
}

void set_llm_resources(std::shared_ptr<llm_resources> resources) {
  std::lock_guard<std::mutex> lk(resources_mu);
  process_resources = std::move(resources);
}

expected<std::unique_ptr<synthesizer>> make_synthesizer(const std::string& name) {
  if (name == "builtin") {
    auto s = make_builtin_synthesizer();
    if (!s) return tl::unexpected(s.error());
    return std::unique_ptr<synthesizer>(std::move(*s));
  }
  if (name == "llm") {
    std::shared_ptr<llm_resources> r;
    {
      std::lock_guard<std::mutex> lk(resources_mu);
      if (!process_resources) {
        auto made = make_llm_resources(llm::llm_config{});
        if (!made) return tl::unexpected(made.error());
        process_resources = std::move(*made);
      }
      r = process_resources;
    }
    auto s = llm_synthesizer::create(std::move(r));
    if (!s) return tl::unexpected(s.error());
    return std::unique_ptr<synthesizer>(std::move(*s));
  }
  return make_error(errc::invalid_input, "unknown synthesizer '" + name + "' (this build has: builtin, llm)");
}

}  // namespace kevolve::synth
