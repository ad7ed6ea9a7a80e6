#include "actors/rank_actor.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>

#include <caf/all.hpp>

#include "actors/messages.h"
#include "eval/backends/registry.h"

namespace kevolve::actors {
namespace {

using clock = std::chrono::steady_clock;
constexpr auto kTick = std::chrono::milliseconds(100);

double seconds_since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct rank_state {
  rank_config config;
  caf::actor bridge, evaluator;
  std::promise<rank_exit>* done = nullptr;
  clock::time_point started, last_heartbeat, heard_from_coordinator, signalled_at;
  int queued = 0;
  bool signalled = false;
  bool stopping = false;  // asked to stop, waiting for the final word
  clock::time_point stopping_since;
  bool exited = false;
};

using self_ptr = caf::stateful_actor<rank_state>*;

void to_coordinator(self_ptr self, caf::message m) { self->send(self->state.bridge, route_atom::value, int32_t(0), std::move(m)); }

void leave(self_ptr self, rank_exit how) {
  if (self->state.exited) return;
  self->state.exited = true;
  self->send_exit(self->state.evaluator, caf::exit_reason::user_shutdown);
  self->request(self->state.bridge, caf::infinite, flush_atom::value).then([=](flush_atom) {
    self->state.done->set_value(how);
    self->quit();
  });
}

caf::behavior rank_actor(self_ptr self, rank_config config, caf::actor bridge, caf::actor evaluator, std::promise<rank_exit>* done) {
  auto& s = self->state;
  s.config = std::move(config);
  s.bridge = std::move(bridge);
  s.evaluator = std::move(evaluator);
  s.done = done;
  s.started = s.heard_from_coordinator = clock::now();
  s.last_heartbeat = s.started - std::chrono::hours(1);  // the first tick reports
  to_coordinator(self, caf::make_message(s.config.hello));
  self->delayed_send(self, kTick, tick_atom::value);
  return {
      [=](const sweep::rank_start& start) {
        self->state.heard_from_coordinator = clock::now();
        // Pin this rank's GPU before its first evaluation starts a GPU worker.
        if (start.device_index >= 0) {
          const std::string index = std::to_string(start.device_index);
          const eval::backend_descriptor* d = eval::find_backend(self->state.config.hello.backend);
          if (d && !d->device_env.empty() && !std::getenv(d->device_env.c_str()))
            setenv(d->device_env.c_str(), index.c_str(), 1);
        }
      },
      [=](const sweep::eval_request& r) {
        auto& st = self->state;
        st.heard_from_coordinator = clock::now();
        ++st.queued;
        self->request(st.evaluator, caf::infinite, r)
            .then([=](const sweep::eval_result& result) {
              --self->state.queued;
              to_coordinator(self, caf::make_message(result));
            });
      },
      [=](const store::rank_record&) { self->state.heard_from_coordinator = clock::now(); },
      [=](const shutdown_msg& m) {
        auto& st = self->state;
        st.heard_from_coordinator = clock::now();
        if (m.final_word) {
          leave(self, rank_exit{m.finalize, st.config.hello.error.empty() ? 0 : 2, ""});
          return;
        }
        // Stop evaluating; say we are alive; wait for the final word.
        st.stopping = true;
        st.stopping_since = clock::now();
        self->send_exit(st.evaluator, caf::exit_reason::user_shutdown);
        to_coordinator(self, caf::make_message(rank_bye{st.config.hello.rank}));
      },
      [=](tick_atom) {
        auto& st = self->state;
        if (st.exited) return;
        if (st.config.signal && *st.config.signal != 0 && !st.signalled) {
          st.signalled = true;
          st.signalled_at = clock::now();
          to_coordinator(self, caf::make_message(signal_notice{st.config.hello.rank, *st.config.signal}));
        }
        if (st.signalled && seconds_since(st.signalled_at) > st.config.grace_seconds) {
          leave(self, rank_exit{false, 1, "rank 0 did not stop the sweep within the grace period after a signal"});
          return;
        }
        if (st.stopping && seconds_since(st.stopping_since) > 30) {
          leave(self, rank_exit{false, 0, "no final word from rank 0 within 30 s of its stop: leaving without MPI_Finalize"});
          return;
        }
        if (seconds_since(st.heard_from_coordinator) > st.config.silence_seconds) {
          leave(self, rank_exit{false, 1, "rank 0 has not been heard from for " +
                                              std::to_string(int(st.config.silence_seconds)) + " s: leaving"});
          return;
        }
        if (seconds_since(st.last_heartbeat) >= st.config.heartbeat_seconds) {
          st.last_heartbeat = clock::now();
          store::rank_record beat;
          beat.rank = st.config.hello.rank;
          beat.cpu_seconds = process_cpu_seconds();
          beat.uptime_seconds = seconds_since(st.started);
          beat.queue_depth = st.queued;
          to_coordinator(self, caf::make_message(beat));
        }
        self->delayed_send(self, kTick, tick_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_rank_actor(caf::actor_system& sys, rank_config config, caf::actor bridge, caf::actor evaluator,
                            std::promise<rank_exit>* done) {
  return sys.spawn(rank_actor, std::move(config), std::move(bridge), std::move(evaluator), done);
}

}  // namespace kevolve::actors
