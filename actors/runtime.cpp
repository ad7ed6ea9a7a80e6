#include "actors/runtime.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <vector>

#include <caf/all.hpp>

#include "actors/bridge_actor.h"
#include "actors/codec.h"
#include "actors/coordinator_actor.h"
#include "actors/evaluator_actor.h"
#include "actors/messages.h"
#include "actors/rank_actor.h"
#include "actors/store_actor.h"
#include "actors/synthesizer_actor.h"
#include "actors/system_config.h"
#include "common/log.h"
#include "common/paths.h"
#include "eval/backends/registry.h"

namespace kevolve::actors {

expected<sweep::outcome> run_coordinator(coordinator_run run) {
  const spec::sweep_spec spec = run.scheduler->spec();
  const std::string store = run.scheduler->options().store.string();
  std::set<int> remote;
  if (run.link)
    for (int r = 1; r < run.link->size(); ++r) remote.insert(r);
  auto core = std::make_unique<sweep::coordinator>(std::move(run.scheduler), remote);
  // Slow synthesizers write ahead: as many children as the pool can write at once.
  if (spec.synthesizer != "builtin") core->set_synthesis_ahead(run.synthesizers);

  system_config cfg(run.threads);
  caf::actor_system sys{cfg};
  coordinator_wiring w;
  auto pool = spawn_synthesizer_pool(sys, spec.synthesizer, run.synthesizers);
  if (!pool) return tl::unexpected(pool.error());
  w.synthesizers = std::move(*pool);
  if (remote.empty()) {
    // One process: a local evaluator per backend of the sweep, ids 0, -1, ...
    // (their nodes record rank 0: this process), all served by one actor in
    // turn, so that an emulator never runs beside CPU timing.
    auto router = std::make_shared<sweep::backend_router>();
    std::vector<int> ids;
    int id = 0;
    for (const std::string& backend : spec.backends) {
      if (auto ok = sweep::probe_backend(backend); !ok) return tl::unexpected(ok.error());
      core->add_local_evaluator(id, backend, 0);
      router->add(backend, run.make_service(id, backend));
      ids.push_back(id--);
    }
    const caf::actor local = spawn_evaluator_actor(sys, router);
    for (int i : ids) w.local[i] = local;
  } else {
    w.bridge = spawn_bridge(sys, *run.link);
  }
  w.core = std::move(core);
  w.store = spawn_store_actor(sys, store);
  w.on_progress = std::move(run.on_progress);
  w.on_notice = std::move(run.on_notice);
  w.signal = run.signal;
  std::promise<sweep::outcome> done;
  w.done = &done;
  auto finished = done.get_future();
  caf::actor coordinator = spawn_coordinator_actor(sys, &w);
  if (run.link) start_delivery(sys, *run.link, coordinator);
  sweep::outcome result = finished.get();
  if (run.link) {
    // Let the shutdown messages leave; a gone peer cannot take them.
    if (!run.link->stop(std::chrono::seconds(5))) result.finalize = false;
  }
  return result;
}

void stop_evaluator_ranks(transport::transport& link) {
  system_config cfg(1);
  caf::actor_system sys{cfg};
  link.start([](int, std::vector<char>) {});  // hellos that arrive are not needed
  for (int r = 1; r < link.size(); ++r)
    if (auto bytes = encode(sys, caf::make_message(shutdown_msg{true, true}))) link.send(r, std::move(*bytes));
  link.stop(std::chrono::seconds(5));
}

expected<std::string> choose_backend(const spec::sweep_spec& spec, int rank) {
  std::string backend = spec::backend_for_rank(spec.runtime, rank);
  std::string from = "the rank map (runtime.ranks)";
  if (backend.empty())
    if (const char* env = std::getenv("KEVOLVE_BACKEND"); env && *env) {
      backend = env;
      from = "KEVOLVE_BACKEND";
    }
  if (!backend.empty()) {
    if (auto ok = sweep::probe_backend(backend); !ok)
      return make_error(ok.error().code, "given backend '" + backend + "' by " + from + ", but " + ok.error().message);
    return backend;
  }
  // Probing: the sweep's backends this node can serve, device backends first
  // (each in sweep order), taken in turn by evaluator rank: rank r serves
  // the ((r - 1) mod n)-th. Ranks on nodes alike thus cover every backend
  // once there are as many evaluator ranks as backends; the coordinator
  // stops the job before the sweep when one is left without a rank.
  std::string why;
  std::vector<std::string> devices, others;
  for (const std::string& b : spec.backends) {
    auto ok = sweep::probe_backend(b);
    if (!ok) {
      why += (why.empty() ? "" : "; ") + ok.error().message;
      continue;
    }
    const eval::backend_descriptor* d = eval::find_backend(b);
    (d && d->traits.uses_device ? devices : others).push_back(b);
  }
  devices.insert(devices.end(), others.begin(), others.end());
  if (devices.empty()) return make_error(errc::toolchain_error, "can evaluate none of the sweep's backends: " + why);
  return devices[size_t(std::max(0, rank - 1)) % devices.size()];
}

std::pair<int, bool> run_evaluator_rank(evaluator_run run) {
  const int rank = run.link->rank();
  sweep::rank_hello hello;
  hello.rank = rank;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  hello.host = host;
  hello.pid = int32_t(getpid());
  hello.local_rank = run.launch.local_rank;
  hello.kevolve_version = kevolve_version();
  auto backend = choose_backend(*run.spec, rank);
  if (backend) hello.backend = *backend;
  else hello.error = backend.error().message;

  system_config cfg(run.threads);
  caf::actor_system sys{cfg};
  caf::actor bridge = spawn_bridge(sys, *run.link);
  caf::actor evaluator = backend ? spawn_evaluator_actor(sys, run.make_service(rank, *backend)) : caf::actor{};
  rank_config rc;
  rc.hello = hello;
  rc.heartbeat_seconds = run.spec->runtime.heartbeat_seconds;
  rc.silence_seconds = std::max(run.spec->runtime.silence_seconds, run.spec->runtime.hello_seconds) * 2;
  rc.grace_seconds = run.spec->runtime.grace_seconds;
  rc.signal = run.signal;
  std::promise<rank_exit> done;
  auto finished = done.get_future();
  caf::actor agent = spawn_rank_actor(sys, rc, bridge, evaluator, &done);
  start_delivery(sys, *run.link, agent);
  rank_exit how = finished.get();
  if (!how.message.empty()) log::error("rank {}: {}", rank, how.message);
  const bool drained = run.link->stop(std::chrono::seconds(5));
  return {how.status, how.finalize && drained};
}

}  // namespace kevolve::actors
