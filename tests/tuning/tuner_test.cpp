// Online tuning: a streamer with tune = true across 30 steps of a changing workload (item counts,
// destination patterns, steps ended by wait and by quiesce with deliveries that insert, broadcasts)
// delivers every item exactly once while it changes buffer size and grid between steps, settles
// within 25 steps, and every PE reports the same history and final configuration. Also
// buffer_items = 0 and current_options().
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include "own_profile.hpp"
#include "test_support.hpp"
#include "model/tuner.hpp"
#include "transit/profile/profile.hpp"

namespace {

using namespace transit;

struct tagged {
  std::int32_t source;
  std::int32_t step;
  std::int64_t sequence;  // < 0: a broadcast; >= 1 << 40: inserted by a delivery
};

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Destination of item q of `source` in `step`: the pattern changes from step to step.
int destination(int source, int step, std::int64_t q, int pes) {
  const std::uint64_t r = mix(static_cast<std::uint64_t>(source) * 1000003 + static_cast<std::uint64_t>(step) * 7919 +
                              static_cast<std::uint64_t>(q));
  switch (step % 3) {
    case 0: return static_cast<int>(r % static_cast<std::uint64_t>(pes));       // uniform
    case 1: return (source + 1) % pes;                                           // a ring
    default: return static_cast<int>(r % std::max<std::uint64_t>(1, pes / 2));   // half the PEs
  }
}

std::int64_t items_in(int step) { return 50 + 37 * (step % 7); }  // 50 .. 272 per PE

std::uint64_t hash_text(const std::string& s, std::uint64_t h) {
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

/// True on every PE when `value` is the same on all of them.
bool same_everywhere(context& ctx, std::uint64_t value) {
  return ctx.allreduce(value, reduce_op::max) == ctx.allreduce(value, reduce_op::min);
}

TEST(tuning_tuner, thirty_steps_exactly_once_and_settled_alike) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  constexpr int steps = 30;
                  const int pes = ctx.size(), me = ctx.rank();
                  streamer_options o;
                  o.tune = true;
                  o.buffer_items = 16;
                  // Per step: how often each (source, sequence) arrived here, checked at the step's end.
                  std::vector<std::vector<int>> seen;
                  std::int64_t broadcasts = 0, echoes = 0, strays = 0;
                  int current_step = 0;
                  streamer<tagged>* self = nullptr;
                  streamer<tagged> s(ctx, o, [&](const tagged& t) {
                    if (t.step != current_step) ++strays;
                    if (t.sequence < 0) {
                      ++broadcasts;
                    } else if (t.sequence >= (std::int64_t{1} << 40)) {
                      ++echoes;
                    } else {
                      auto& row = seen[static_cast<std::size_t>(t.source)];
                      if (t.sequence < static_cast<std::int64_t>(row.size())) ++row[static_cast<std::size_t>(t.sequence)];
                      else ++strays;
                      // In quiesce steps, every item delivered to an odd PE inserts one more.
                      if (t.step % 2 == 1 && me % 2 == 1)
                        self->insert(tagged{me, t.step, (std::int64_t{1} << 40) + t.sequence}, (me + 1) % pes);
                    }
                  });
                  self = &s;
                  std::set<std::string> grids_tried;
                  std::int64_t expected_echoes = 0;
                  for (int step = 0; step < steps; ++step) {
                    current_step = step;
                    const std::int64_t n = items_in(step);
                    seen.assign(static_cast<std::size_t>(pes), std::vector<int>(static_cast<std::size_t>(n), 0));
                    grids_tried.insert(s.current_options().grid->str());
                    const auto echoes_before = echoes;
                    broadcasts = 0;
                    for (std::int64_t q = 0; q < n; ++q) s.insert(tagged{me, step, q}, destination(me, step, q, pes));
                    if (step % 5 == 2) s.broadcast(tagged{me, step, -1});
                    if (step % 2 == 0) {
                      s.finish();
                    } else {
                      s.quiesce();
                    }
                    // Exactly once: every item meant for this PE, once; nothing else.
                    std::int64_t missing = 0, twice = 0, extra = 0;
                    for (int src = 0; src < pes; ++src) {
                      for (std::int64_t q = 0; q < n; ++q) {
                        const int count = seen[static_cast<std::size_t>(src)][static_cast<std::size_t>(q)];
                        const bool mine = destination(src, step, q, pes) == me;
                        missing += mine && count == 0;
                        twice += count > 1;
                        extra += !mine && count > 0;
                      }
                    }
                    EXPECT_EQ(missing, 0) << "step " << step;
                    EXPECT_EQ(twice, 0) << "step " << step;
                    EXPECT_EQ(extra, 0) << "step " << step;
                    EXPECT_EQ(broadcasts, step % 5 == 2 ? pes : 0) << "step " << step;
                    // Echoes: items delivered to odd PEs in quiesce steps, each inserted once more.
                    if (step % 2 == 1) {
                      std::int64_t to_odd = 0;
                      for (int src = 0; src < pes; ++src)
                        for (std::int64_t q = 0; q < n; ++q) to_odd += destination(src, step, q, pes) % 2 == 1;
                      expected_echoes += to_odd;
                    }
                    (void)echoes_before;
                  }
                  EXPECT_EQ(strays, 0) << "items delivered in another step than their own";
                  EXPECT_EQ(ctx.allreduce(echoes, reduce_op::sum), expected_echoes);

                  const auto st = s.stats();
                  const auto final_options = s.current_options();
                  // Settled within 25 steps: the history stops once settled.
                  EXPECT_LE(st.tuning.size(), 25u);
                  EXPECT_GE(st.tuning.size(), 2u);
                  // Every PE saw the same history and ended on the same configuration.
                  std::uint64_t h = 0xcbf29ce484222325ULL;
                  for (const auto& t : st.tuning)
                    h = hash_text(t.grid + "/" + std::to_string(t.buffer_items) + "/" +
                                      std::string(to_string(t.route)) + "/" + std::to_string(t.items),
                                  h);
                  EXPECT_TRUE(same_everywhere(ctx, h));
                  const std::uint64_t f = hash_text(final_options.grid->str() + "/" +
                                                        std::to_string(final_options.buffer_items) + "/" +
                                                        std::string(to_string(final_options.route)),
                                                    0xcbf29ce484222325ULL);
                  EXPECT_TRUE(same_everywhere(ctx, f));
                  EXPECT_TRUE(final_options.tune);
                  // Tuning did change configuration (the reconfiguration path ran) on jobs with a
                  // choice of grids.
                  std::set<std::size_t> buffers;
                  for (const auto& t : st.tuning) buffers.insert(t.buffer_items);
                  EXPECT_GE(buffers.size(), 2u);
                  if (pes >= 3) {
                    EXPECT_GE(grids_tried.size(), 2u);
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

/// Writes a profile of this run's own (before any PE starts) without calibrated costs, whose 75%
/// bandwidth point is a message of 4112 bytes: buffer_items = 0 means (4112 - 16) / sizeof(T) items.
void write_profile_of_4112_byte_messages() {
  transit::testing::use_own_profile_file();
  const auto path = default_profile_path();
  profile_file file = profile_file::empty(path);
  streamer_profile p;
  p.backend = "local";
  p.pes_per_node = 1;
  p.host = this_host();
  p.pes = 1;
  p.created = "2026-11-22T00:00:00Z";
  p.intra.measured = true;
  p.buffer_bytes_50 = 1024;
  p.buffer_bytes_75 = 4096 + 16;
  p.buffer_bytes_90 = 16384;
  p.peak_bytes_per_second = 1e9;
  for (const char* backend : {"local", "mpi"}) {  // jobs of any PEs per node use the closest entry
    p.backend = backend;
    file.put(p);
  }
  file.save();  // under MPI every rank writes the same bytes; the rename keeps each write whole
}

TEST(tuning_tuner, automatic_buffer_from_the_profile) {
  write_profile_of_4112_byte_messages();
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options o;
              o.buffer_items = 0;
              streamer<std::uint64_t> a(ctx, o, [](const std::uint64_t&) {});
              EXPECT_EQ(a.current_options().buffer_items, 512u);  // (4112 - 16) / 8
              streamer<std::array<std::byte, 64>> b(ctx, o, [](const std::array<std::byte, 64>&) {});
              EXPECT_EQ(b.current_options().buffer_items, 64u);  // (4112 - 16) / 64
              // What was given stays as given.
              o.buffer_items = 77;
              o.flush_period = std::chrono::microseconds(5);
              streamer<std::uint64_t> c(ctx, o, [](const std::uint64_t&) {});
              EXPECT_EQ(c.current_options().buffer_items, 77u);
              EXPECT_EQ(c.current_options().flush_period.count(), 5);
              EXPECT_FALSE(c.current_options().tune);
              EXPECT_EQ(*c.current_options().grid, virtual_grid::node_pe(ctx.machine()));
              for (int i = 0; i < 100; ++i) a.insert(1, i % ctx.size());
              a.finish();
              b.finish();
              c.finish();
            }),
            0);
}

/// One event of a PHOLD in small: a chain of `hops_left` more hops (-1: an item of a static
/// step), started by `origin`.
struct chain_event {
  std::int32_t origin;
  std::int32_t hops_left;
  std::uint64_t state;  // where the next hop goes
};

TEST(tuning_tuner, automatic_buffers_are_sent_at_an_eighth_in_dynamic_steps) {
  // Each PE starts 400 chains of 8 hops, and a delivery inserts its chain's next hop at a
  // pseudo-random PE (PHOLD: each event makes the next). Once a deliver callback has inserted,
  // automatic buffers (256 items here) are sent at 32 items, so no message of the step carries
  // more; fixed buffers of the same size are not. A next step whose deliveries do not insert
  // sends full automatic buffers again. On a direct grid every message is delivered as one run,
  // so the runs are the messages.
  write_profile_of_4112_byte_messages();
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  constexpr int chains = 400, hops = 8;
                  constexpr std::uint32_t capacity = 4096 / sizeof(chain_event);  // automatic, and fixed alike
                  const int pes = ctx.size(), me = ctx.rank();
                  for (const std::size_t buffer_items : {std::size_t{0}, std::size_t{capacity}}) {
                    streamer_options o;
                    o.buffer_items = buffer_items;
                    o.grid = virtual_grid::direct(pes);
                    std::int64_t events = 0, items = 0;
                    std::uint32_t largest_dynamic = 0, largest_static = 0;  // items in one message
                    streamer<chain_event>* self = nullptr;
                    streamer<chain_event> s(
                        ctx, o, detail::batch_deliver{[&](const chain_event* run, std::uint32_t& cursor, std::uint32_t n) {
                          // Messages that start with a seed may be sent before any delivery
                          // inserted (the first is full); the others, after.
                          if (cursor == 0 && run[0].hops_left < 0) largest_static = std::max(largest_static, n);
                          if (cursor == 0 && run[0].hops_left >= 0 && run[0].hops_left < hops - 1)
                            largest_dynamic = std::max(largest_dynamic, n);
                          while (cursor < n) {
                            const chain_event& e = run[cursor++];
                            if (e.hops_left < 0) {
                              ++items;
                              continue;
                            }
                            ++events;
                            if (e.hops_left == 0) continue;
                            const std::uint64_t next = mix(e.state);
                            self->insert(chain_event{e.origin, e.hops_left - 1, next},
                                         static_cast<int>(next % static_cast<std::uint64_t>(pes)));
                          }
                        }});
                    self = &s;
                    ASSERT_EQ(s.current_options().buffer_items, capacity);
                    for (int c = 0; c < chains; ++c)
                      s.insert(chain_event{me, hops - 1, mix(static_cast<std::uint64_t>(me) * 1000 + c)}, me);
                    s.quiesce();
                    EXPECT_EQ(ctx.allreduce(events, reduce_op::sum), std::int64_t{pes} * chains * hops);
                    EXPECT_EQ(s.current_options().buffer_items, capacity);  // what it holds at most
                    const std::uint32_t most = ctx.allreduce(largest_dynamic, reduce_op::max);
                    if (buffer_items == 0) {
                      EXPECT_EQ(most, capacity / 8);
                    } else {
                      EXPECT_GT(most, capacity / 8);
                    }
                    // A static step: 300 items to the next PE, two messages, the first full.
                    for (int i = 0; i < 300; ++i) s.insert(chain_event{me, -1, 0}, (me + 1) % pes);
                    s.finish();
                    EXPECT_EQ(ctx.allreduce(items, reduce_op::sum), std::int64_t{pes} * 300);
                    EXPECT_EQ(largest_static, capacity);
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

TEST(tuning_tuner, automatic_buffer_from_calibrated_costs) {
  // With calibrated costs, buffer_items = 0 is the smallest buffer whose per-message cost is at
  // most 2% of an item's: g = (alpha + 16 beta) / (0.02 (per_item + item bytes x beta)).
  const std::string path = transit::testing::use_own_profile_file() + ".costs";
  setenv("TRANSIT_PROFILE", path.c_str(), 1);
  profile_file file = profile_file::empty(path);
  streamer_profile p;
  p.pes_per_node = 1;
  p.host = this_host();
  p.pes = 1;
  p.created = "2026-11-22T00:00:00Z";
  p.intra.measured = true;
  p.intra.costs = {1e-6, 0.25e-9, 4e-9};  // shaped like the mpi backend's here
  p.buffer_bytes_50 = 1024;
  p.buffer_bytes_75 = 4096 + 16;
  p.buffer_bytes_90 = 16384;
  p.peak_bytes_per_second = 1e9;
  for (const char* backend : {"local", "mpi"}) {
    p.backend = backend;
    file.put(p);
  }
  file.save();
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options o;
              o.buffer_items = 0;
              streamer<std::uint64_t> a(ctx, o, [](const std::uint64_t&) {});
              EXPECT_EQ(a.current_options().buffer_items, 8367u);  // 1.004 us / (0.02 x 6 ns), rounded up
              streamer<std::array<std::byte, 64>> b(ctx, o, [](const std::array<std::byte, 64>&) {});
              EXPECT_EQ(b.current_options().buffer_items, 2510u);  // 1.004 us / (0.02 x 20 ns)
              for (int i = 0; i < 100; ++i) a.insert(1, i % ctx.size());
              a.finish();
              b.finish();
            }),
            0);
}

}  // namespace

// The grids round also measures the grid of the most dimensions (the fewest links per PE, the
// cheapest end of a near-empty step): on a machine of 64 PEs, 16 per node, that is 2^6, which the
// model's candidates (at most 4 dimensions) never include. The machine is given as values, larger
// than the job the test runs in; step outcomes are made up (every step 1 ms), so nothing is timed.
TEST(tuning_tuner, the_grids_round_measures_the_grid_with_the_fewest_links) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              using namespace transit::detail;
              const machine big = machine::uniform(64, 16);
              const step_configuration initial{virtual_grid::node_pe(big), routing::grid, 1024};
              auto tuner = make_step_tuner(big, physical_topology::switched(4, 16), nullptr,
                                           local_tuning_seed(ctx, 8), initial, 8);
              const virtual_grid fewest = virtual_grid::balanced(64, 6);
              bool tried = false;
              step_configuration current = initial;
              std::uint32_t step = 0;
              for (; step < 30 && !tuner->settled(); ++step) {
                tried |= current.grid == fewest && current.route == routing::grid;
                const step_outcome outcome{step, 1000000, 1000 * 64, 10, 64};
                current = tuner->next(outcome, current);
              }
              EXPECT_TRUE(tuner->settled());
              EXPECT_TRUE(tried) << fewest.str() << " (grid routing) was never measured in " << step << " steps";
            }),
            0);
}

// The choice is made in the confirm round, where the finalists are measured as often and in
// neighbouring steps: a configuration whose one screening step was lucky (1 ms, then 3 ms every
// time) loses to one that always takes 2 ms. Step outcomes are made up, so nothing is timed.
TEST(tuning_tuner, the_confirm_round_decides) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              using namespace transit::detail;
              const step_configuration lucky{virtual_grid::node_pe(ctx.machine()), routing::grid, 1024};
              auto tuner = make_step_tuner(ctx, local_tuning_seed(ctx, 8), lucky, 8);
              std::optional<step_configuration> steady;  // the first other configuration tried
              const auto same = [](const step_configuration& a, const step_configuration& b) {
                return a.grid == b.grid && a.route == b.route && a.buffer_items == b.buffer_items;
              };
              int lucky_measured = 0, steady_measured = 0;
              step_configuration current = lucky;
              std::uint32_t step = 0;
              for (; step < 30 && !tuner->settled(); ++step) {
                if (!same(current, lucky) && !steady) steady = current;
                double ms = 4;
                if (same(current, lucky)) ms = lucky_measured++ == 0 ? 1 : 3;
                if (steady && same(current, *steady)) {
                  ms = 2;
                  ++steady_measured;
                }
                const step_outcome outcome{step, static_cast<std::uint64_t>(ms * 1e6),
                                           1000 * static_cast<std::uint64_t>(ctx.size()), 10, ctx.size()};
                current = tuner->next(outcome, current);
              }
              ASSERT_TRUE(tuner->settled());
              EXPECT_LE(step, 25u);
              ASSERT_TRUE(steady.has_value());
              EXPECT_TRUE(same(current, *steady)) << "settled on " << current.grid.str() << " with "
                                                  << current.buffer_items << " items";
              EXPECT_EQ(lucky_measured, 3);   // screening, then twice in the confirm round
              EXPECT_EQ(steady_measured, 3);
            }),
            0);
}
