#include "actors/coordinator_actor.h"

#include <sys/resource.h>

#include <chrono>

#include <caf/all.hpp>

#include "actors/messages.h"

namespace kevolve::actors {
namespace {

using clock = std::chrono::steady_clock;
constexpr auto kTick = std::chrono::milliseconds(100);

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct coordinator_state {
  coordinator_wiring* w = nullptr;
  clock::time_point epoch;
  size_t next_synthesizer = 0;
  double last_beat = 0;
  bool signalled = false;
  bool finishing = false;  // done: shutting the actors down
};

using self_ptr = caf::stateful_actor<coordinator_state>*;

double now(self_ptr self) { return std::chrono::duration<double>(clock::now() - self->state.epoch).count(); }

void deliver(self_ptr self, sweep::outbox out);

void on_result(self_ptr self, const sweep::eval_result& r) { deliver(self, self->state.w->core->on_result(r, now(self))); }

void deliver(self_ptr self, sweep::outbox out) {
  coordinator_wiring& w = *self->state.w;
  for (auto& [rank, request] : out.evaluations) {
    if (auto local = w.local.find(rank); local != w.local.end())
      self->request(local->second, caf::infinite, std::move(request)).then([=](const sweep::eval_result& r) { on_result(self, r); });
    else
      self->send(w.bridge, route_atom::value, int32_t(rank), caf::make_message(std::move(request)));
  }
  for (auto& job : out.synthesis) {
    const caf::actor& s = w.synthesizers[self->state.next_synthesizer++ % w.synthesizers.size()];
    self->request(s, caf::infinite, synth_request{std::move(job)}).then([=](const synth_reply& r) {
      auto& core = *self->state.w->core;
      deliver(self, r.job.note ? core.on_noted(r.job, r.note, now(self)) : core.on_written(r.job, r.result, now(self)));
    });
  }
  for (auto& [rank, start] : out.starts) self->send(w.bridge, route_atom::value, int32_t(rank), caf::make_message(start));
  if (out.checkpoint) {
    self->request(w.store, caf::infinite, out.checkpoint_sequence, std::move(*out.checkpoint))
        .then([=](const checkpoint_done& d) { deliver(self, self->state.w->core->on_checkpoint_done(d.sequence, d.error, now(self))); });
  }
  for (const auto& n : out.notices)
    if (w.on_notice) w.on_notice(n);
  if (out.progress && w.on_progress) w.on_progress(*w.core);
  for (int rank : out.stops)
    self->send(w.bridge, route_atom::value, int32_t(rank), caf::make_message(shutdown_msg{false, false}));
  for (int rank : out.shutdowns)
    self->send(w.bridge, route_atom::value, int32_t(rank), caf::make_message(shutdown_msg{true, out.finalize}));
  if (w.core->done() && !self->state.finishing) {
    self->state.finishing = true;
    for (auto& [id, a] : w.local) self->send_exit(a, caf::exit_reason::user_shutdown);
    for (auto& a : w.synthesizers) self->send_exit(a, caf::exit_reason::user_shutdown);
    self->send_exit(w.store, caf::exit_reason::user_shutdown);
    if (!w.bridge) {
      w.done->set_value(w.core->result());
      self->quit();
      return;
    }
    // The shutdown messages must be on the transport before it stops.
    self->request(w.bridge, caf::infinite, flush_atom::value).then([=](flush_atom) {
      self->state.w->done->set_value(self->state.w->core->result());
      self->quit();
    });
  }
}

caf::behavior coordinator_actor(self_ptr self, coordinator_wiring* wiring) {
  self->state.w = wiring;
  self->state.epoch = clock::now();
  self->delayed_send(self, kTick, tick_atom::value);
  // CAF runs this function when the actor is first scheduled, possibly after
  // ranks' hellos were queued: the sweep starts here, not by a message behind them.
  deliver(self, self->state.w->core->start(now(self)));
  return {
      [=](const sweep::rank_hello& h) { deliver(self, self->state.w->core->on_hello(h, now(self))); },
      [=](const sweep::eval_result& r) { on_result(self, r); },
      [=](const store::rank_record& beat) { deliver(self, self->state.w->core->on_heartbeat(beat, now(self))); },
      [=](const signal_notice& n) { deliver(self, self->state.w->core->on_signal(n.rank, n.signo, now(self))); },
      [=](const rank_bye& b) { deliver(self, self->state.w->core->on_bye(b.rank, now(self))); },
      [=](const codec_failure& f) { deliver(self, self->state.w->core->on_codec_failure(f.source, f.message, now(self))); },
      [=](tick_atom) {
        auto& st = self->state;
        coordinator_wiring& w = *st.w;
        if (w.core->done()) return;
        const double t = now(self);
        if (w.signal && *w.signal != 0 && !st.signalled) {
          st.signalled = true;
          deliver(self, w.core->on_signal(0, *w.signal, t));
          if (w.core->done()) return;
        }
        if (t - st.last_beat >= 1.0) {
          st.last_beat = t;
          for (const auto& [id, a] : w.local) {
            store::rank_record beat;
            beat.rank = id;
            beat.cpu_seconds = process_cpu_seconds();
            beat.uptime_seconds = t;
            w.core->on_heartbeat(beat, t);
          }
          // Evaluator ranks leave when rank 0 falls silent: tell them it lives.
          if (w.bridge)
            for (const auto& s : w.core->rank_table(t))
              if (w.local.count(s.rank) == 0 && s.state != "retired")
                self->send(w.bridge, route_atom::value, int32_t(s.rank), caf::make_message(store::rank_record{}));
        }
        deliver(self, w.core->on_tick(t));
        if (!w.core->done()) self->delayed_send(self, kTick, tick_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_coordinator_actor(caf::actor_system& sys, coordinator_wiring* wiring) {
  return sys.spawn(coordinator_actor, wiring);
}

}  // namespace kevolve::actors
