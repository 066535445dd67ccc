// phold: the PHOLD discrete-event benchmark (thesis 7.1.3). Each PE hosts --lps-per-pe logical
// processes (LPs), each starting with --events-per-lp events. Handling an event at time t
// schedules one new event at t + lookahead + Exp(mean) for a random LP: on another PE with
// probability --remote-fraction, else on this PE. Events at or past the end time are not
// scheduled; the end time is chosen so that about --items-per-pe events are handled per PE.
//
// The kernel measures PHOLD's communication: events are handled as they arrive (no timestamp-order
// enforcement, no rollback), in deliver callbacks that insert the successor event into the same
// streamer; quiesce() detects the end. Each event carries its own random state, so every event
// chain is deterministic whatever the arrival order: the origin PE replays its chains serially,
// and the global count and checksum of handled events must match the replay.
//
// --api active: the same with active_messages: an event is a call, whose handler calls the
// successor's handler; barrier() detects the end.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench.hpp"

namespace transit::bench {

namespace {

struct event {
  std::uint64_t state;  // the chain's random state
  std::uint32_t time;   // simulated time, in ticks
  std::uint32_t lp;     // LP index on the destination PE
};
static_assert(sizeof(event) == 16);

constexpr double mean_delay = 1000;  // ticks
constexpr std::uint32_t lookahead = 100;

struct model {
  std::uint64_t pes, lps;
  std::uint64_t remote_threshold;  // remote when a draw is below this
  std::uint32_t end_time;

  /// The successor of `e` handled on PE `pe`: sets `next` and its PE; false when past the end.
  bool successor(const event& e, std::uint64_t pe, event& next, std::uint64_t& next_pe) const {
    std::uint64_t state = e.state;
    const std::uint64_t a = rng::mix(state += 0x9e3779b97f4a7c15ULL);
    const std::uint64_t b = rng::mix(state += 0x9e3779b97f4a7c15ULL);
    const std::uint64_t c = rng::mix(state += 0x9e3779b97f4a7c15ULL);
    const double u = (static_cast<double>(a >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
    const double time = e.time + lookahead + -std::log(u) * mean_delay;
    if (time >= end_time) return false;
    next_pe = pe;
    if (pes > 1 && (c >> 1) < remote_threshold)
      next_pe = (pe + 1 + rng::below(static_cast<std::uint32_t>(b >> 32), pes - 1)) % pes;
    next = event{state, static_cast<std::uint32_t>(time), rng::below(static_cast<std::uint32_t>(b), lps)};
    return true;
  }
  static std::uint64_t checksum(const event& e, std::uint64_t pe) {
    return rng::mix(e.state ^ (std::uint64_t{e.time} << 32) ^ (pe << 20) ^ e.lp);
  }
};

double remote_fraction = 0.5;     // --remote-fraction
std::uint64_t lps_per_pe = 1000;   // --lps-per-pe: logical processes per PE
std::uint64_t events_per_lp = 16;  // --events-per-lp: initial events per LP (the event population)
std::string api = "streamer";      // --api

/// One PE's side of the simulation: handles an event and says what it schedules.
struct logical_processes {
  const model& sim;
  std::uint64_t rank;
  progress_bar& bar;
  std::vector<std::uint64_t> handled_per_lp;
  std::uint64_t handled = 0, handled_sum = 0;

  /// Handles `e`; true (with the successor and its PE) when it schedules another event.
  bool handle(const event& e, event& next, std::uint64_t& pe) {
    ++handled;
    ++handled_per_lp[e.lp];
    handled_sum += model::checksum(e, rank);
    bar.update(handled);
    return sim.successor(e, rank, next, pe);
  }
};

// --api active: an event is a call; its handler makes the call of the successor. Captureless,
// the handler finds this PE's logical processes here.
pe_pointer<logical_processes> active_lps;
void handle_event(active_messages& am, const event& e);
constexpr auto on_event = [](active_messages& am, const event& e) { handle_event(am, e); };
void handle_event(active_messages& am, const event& e) {
  event next;
  std::uint64_t pe;
  if (active_lps.get(am.ctx()).handle(e, next, pe)) am.async(static_cast<int>(pe), on_event, next);
}

measurement run_phold(context& ctx, const setup& s) {
  const auto pes = static_cast<std::uint64_t>(ctx.size());
  const auto rank = static_cast<std::uint64_t>(ctx.rank());
  const std::uint64_t lps = lps_per_pe, population = lps * events_per_lp;
  // A chain handles its first event at time 0, then one per lookahead + mean_delay on average.
  const double per_chain = static_cast<double>(s.items_per_pe) / static_cast<double>(population);
  const double end = std::min(4.0e9, std::max(0.5, per_chain - 1) * (lookahead + mean_delay));
  const model sim{pes, lps, static_cast<std::uint64_t>(remote_fraction * 0x1.0p63),
                  static_cast<std::uint32_t>(end)};

  std::vector<event> initial(population);
  for (std::uint64_t i = 0; i < population; ++i)
    initial[i] = event{pe_seed(s.opt, ctx.rank(), 0xf01d + i), 0, static_cast<std::uint32_t>(i % lps)};

  // The replay: the count and checksum every correct run must reproduce.
  std::uint64_t expected = 0, expected_sum = 0;
  for (const event& first : initial) {
    event e = first, next;
    std::uint64_t pe = rank;
    for (;;) {
      ++expected;
      expected_sum += model::checksum(e, pe);
      if (!sim.successor(e, pe, next, pe)) break;
      e = next;
    }
  }
  expected = ctx.allreduce(expected, reduce_op::sum);
  expected_sum = ctx.allreduce(expected_sum, reduce_op::sum);

  const auto steps = static_cast<std::uint64_t>(s.steps);
  progress_bar bar(ctx, "phold", expected / pes * steps);
  logical_processes here{sim, rank, bar, std::vector<std::uint64_t>(lps, 0)};
  std::vector<double> step_seconds;
  // Each step replays the same simulation: seed the initial events, then wait for the end.
  auto run_steps = [&](auto&& seed, auto&& end_step) {
    return measure_steps(ctx, steps, step_seconds, [&](std::uint64_t) {
      for (const event& e : initial) seed(e);
      end_step();
    });
  };
  measurement m;
  // Collective: the events handled, counted before add_step_fields, which rates the steps by them.
  std::uint64_t total = 0;
  const auto count_events = [&] {
    total = ctx.allreduce(here.handled, reduce_op::sum);
    m.verified = total == expected * steps && ctx.allreduce(here.handled_sum, reduce_op::sum) == expected_sum * steps;
    m.items_per_pe = static_cast<double>(total) / static_cast<double>(pes);
  };
  if (api == "active") {
    active_lps.set(ctx, &here);
    active_messages am(ctx, s.stream);
    m.seconds = run_steps([&](const event& e) { am.async(ctx.rank(), on_event, e); }, [&] { am.barrier(); });
    m.stats = am.stats();
    m.buffer_bytes_bound = buffer_bound(ctx, s.stream, sizeof(std::uint32_t) + sizeof(event));
    count_events();
  } else {
    streamer<event>* self = nullptr;
    streamer<event> stream(ctx, s.stream, [&](const event& e) {
      event next;
      std::uint64_t pe;
      if (here.handle(e, next, pe)) self->insert(next, static_cast<int>(pe));
    });
    self = &stream;
    m.seconds = run_steps([&](const event& e) { stream.insert(e, ctx.rank()); }, [&] { stream.quiesce(); });
    m.stats = stream.stats();
    m.buffer_bytes_bound = buffer_bound(ctx, stream.current_options(), stream.stats(), sizeof(event));
    count_events();
    add_step_fields(ctx, s, stream, step_seconds, m);
  }

  m.extra["api"] = api;
  m.extra["remote_fraction"] = remote_fraction;
  m.extra["lps_per_pe"] = lps;
  m.extra["events_per_lp"] = events_per_lp;
  m.extra["events"] = total;
  return m;
}

const bool registered = register_kernel({
    .name = "phold",
    .summary = "PHOLD discrete-event simulation, events handled as they arrive",
    .item_sizes = {sizeof(event)},
    .run = run_phold,
    .own_options =
        {
          {.names = "--remote-fraction",
           .help = "share of events sent to another PE (default 0.5)",
           .target = &remote_fraction,
           .check = apps::real_range{0.0, 1.0, "a number in [0, 1]"},
           .type_name = "f"},
          positive_count_option("--lps-per-pe", "logical processes per PE (default 1000)", &lps_per_pe, "L"),
          integer_option("--events-per-lp", "initial events per LP (default 16)", &events_per_lp, 1, 1 << 20, "E"),
          api_option(api),
        },
    .steps = true,
    .workload =
        [](const context&, const setup& s) {
          step_workload w;  // an event stays on its PE or goes to a uniformly random other one
          w.item_bytes = sizeof(event);
          w.items_per_pe = static_cast<double>(s.items_per_pe);
          w.pattern = destinations::self_others;
          w.self_fraction = 1 - remote_fraction;
          return w;
        },
});

}  // namespace

}  // namespace transit::bench
