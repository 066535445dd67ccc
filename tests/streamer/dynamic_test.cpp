// Dynamic work and step structure: deliveries that insert (quiesce), a dependency chain that only
// completes through periodic flushing, consecutive steps, two streamers at once, and the
// hold-and-wait trap (a small max_buffered_items under all-to-all traffic).
#include <algorithm>
#include <atomic>

#include "streamer_checks.hpp"

namespace {

using namespace transit;
using transit::detail::context_access;

struct task {
  std::int32_t depth;
  std::int32_t origin;
  std::uint64_t id;
};

int scatter(std::uint64_t id, int size) { return static_cast<int>((id * 0x9E3779B97F4A7C15ull >> 17) % size); }

// Each delivered task of depth < max_depth spawns `fanout` tasks: per root, 1 + k + k^2 + ... + k^D.
void spawn_tree(context& ctx, routing route, std::size_t buffer, std::size_t bound) {
  constexpr int fanout = 3, max_depth = 5, roots = 4;
  streamer_options o;
  o.route = route;
  o.buffer_items = buffer;
  o.max_buffered_items = bound;
  streamer<task>* self = nullptr;
  std::uint64_t spawned = 0;
  streamer<task> s(ctx, o, [&](const task& t) {
    if (t.depth == max_depth) return;
    for (int c = 0; c < fanout; ++c) {
      const std::uint64_t id = t.id * fanout + static_cast<std::uint64_t>(c) + 1;
      ++spawned;
      self->insert(task{t.depth + 1, t.origin, id}, scatter(id, ctx.size()));  // re-entrant insert
    }
  });
  self = &s;
  for (int r = 0; r < roots; ++r) {
    const std::uint64_t id = static_cast<std::uint64_t>(ctx.rank()) * 1000 + r;
    s.insert(task{0, ctx.rank(), id}, scatter(id, ctx.size()));
  }
  s.quiesce();
  std::uint64_t per_root = 0, level = 1;
  for (int d = 0; d <= max_depth; ++d, level *= fanout) per_root += level;
  const auto delivered = ctx.allreduce<std::uint64_t>(s.stats().items_delivered, reduce_op::sum);
  EXPECT_EQ(delivered, per_root * roots * static_cast<std::uint64_t>(ctx.size()))
      << to_string(route) << " buffer " << buffer << " bound " << bound;
  const auto inserted = ctx.allreduce<std::uint64_t>(s.stats().items_inserted, reduce_op::sum);
  EXPECT_EQ(inserted, delivered);
  EXPECT_EQ(ctx.allreduce<std::uint64_t>(spawned, reduce_op::sum), delivered - roots * std::uint64_t(ctx.size()));
  if (bound > 0) {
    EXPECT_LE(s.stats().items_buffered_peak, bound);
  }
  // The streamer is ready for another step, here a done()/wait() step.
  s.insert(task{max_depth, ctx.rank(), 0}, (ctx.rank() + 1) % ctx.size());
  s.finish();
  EXPECT_EQ(ctx.allreduce<std::uint64_t>(s.stats().items_delivered, reduce_op::sum),
            delivered + static_cast<std::uint64_t>(ctx.size()));
}

TEST(streamer_dynamic, quiesce_counts_items_inserted_by_deliveries) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  for (const routing route : {routing::grid, routing::node_aware, routing::node_aware_advanced}) {
                    for (const std::size_t buffer : {std::size_t{1}, std::size_t{7}, std::size_t{1024}}) {
                      spawn_tree(ctx, route, buffer, 0);
                    }
                    spawn_tree(ctx, route, 64, 16);
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

// With automatic buffers, a step in which a deliver callback inserts is dynamic: buffers opened
// from then on hold an eighth of the capacity, so that its items leave early. Seen from the runs
// the batch callback gets: a message of this PE's own items arrives as one run. The same items
// inserted at the top level travel in one buffer.
TEST(streamer_dynamic, a_delivery_that_inserts_makes_later_buffers_smaller) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.size() == 1) return;  // the trigger below would open the PE's own link
              streamer_options o;
              o.buffer_items = 0;  // automatic
              streamer<int>* self = nullptr;
              std::size_t quarter = 0;           // a quarter of a buffer
              std::uint32_t longest_run = 0;     // of this PE's own items (>= 0)
              streamer<int> s(ctx, o, detail::batch_deliver{[&](const int* items, std::uint32_t& cursor, std::uint32_t n) {
                                if (items[cursor] >= 0) longest_run = std::max(longest_run, n - cursor);
                                for (; cursor < n; ++cursor) {
                                  if (items[cursor] >= 0) continue;
                                  // The trigger: a quarter of a buffer to this PE, a link no insert has opened.
                                  for (std::size_t i = 0; i < quarter; ++i) self->insert(static_cast<int>(i), ctx.rank());
                                }
                              }});
              self = &s;
              const std::size_t capacity = s.current_options().buffer_items;
              ASSERT_GE(capacity, 64u);
              quarter = capacity / 4;

              for (std::size_t i = 0; i < quarter; ++i) s.insert(static_cast<int>(i), ctx.rank());
              s.finish();
              EXPECT_EQ(longest_run, quarter) << "a static step, capacity " << capacity;

              longest_run = 0;
              s.insert(-1, (ctx.rank() + 1) % ctx.size());
              s.quiesce();
              EXPECT_EQ(longest_run, capacity / 8) << "the callback's items, capacity " << capacity;
              EXPECT_EQ(s.stats().items_inserted, 2 * quarter + 1);
            }),
            0);
}

TEST(streamer_dynamic, dependency_chain_completes_with_periodic_flushing) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              // A token travels the ring: each PE sends it on only after it was delivered. With
              // 1024-item buffers, only the flush timer ever sends the lone token.
              constexpr int laps = 3;
              const int hops = laps * ctx.size();
              streamer_options o;
              o.grid = virtual_grid::balanced(ctx.size(), 2);
              o.flush_period = std::chrono::microseconds(200);
              int seen = 0;
              streamer<int>* self = nullptr;
              streamer<int> s(ctx, o, [&](const int& hop_count) {
                ++seen;
                if (hop_count < hops) self->insert(hop_count + 1, (ctx.rank() + 1) % ctx.size());
              });
              self = &s;
              if (ctx.rank() == 0) s.insert(1, 1 % ctx.size());
              // Hop h is delivered on PE h % size.
              int mine = 0;
              for (int h = 1; h <= hops; ++h) mine += h % ctx.size() == ctx.rank() ? 1 : 0;
              context_access::wait_until(
                  ctx, [&] {
                    s.progress();
                    return seen == mine ? detail::step_result::done : detail::step_result::idle;
                  },
                  "token ring");
              s.quiesce();
              EXPECT_EQ(seen, mine);
              if (ctx.size() > 1) {
                EXPECT_GT(s.stats().flushes_timer, 0u);
              }
            }),
            0);
}

TEST(streamer_steps, consecutive_steps_and_two_streamers_of_different_types) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              const int p = ctx.size();
              std::int64_t sum_a = 0;
              double sum_b = 0;
              streamer_options oa;
              oa.buffer_items = 5;
              oa.grid = virtual_grid::balanced(p, 3);
              streamer<std::int64_t> a(ctx, oa, [&](const std::int64_t& v) { sum_a += v; });
              streamer<double> b(ctx, {}, [&](const double& v) { sum_b += v; });
              for (int step = 1; step <= 4; ++step) {
                for (int d = 0; d < p; ++d) {
                  for (int i = 0; i < 10; ++i) {
                    a.insert(step, d);
                    b.insert(0.5 * step, (d + step) % p);
                  }
                }
                // Finish them in opposite orders on alternate steps.
                if (step % 2 == 0) {
                  a.finish();
                  b.finish();
                } else {
                  b.done();
                  a.finish();
                  b.wait();
                }
                const std::int64_t expect_a = 10LL * p * step * (step + 1) / 2;
                EXPECT_EQ(sum_a, expect_a) << "step " << step;
                EXPECT_DOUBLE_EQ(sum_b, 0.5 * static_cast<double>(expect_a));
              }
            }),
            0);
}

TEST(streamer_stress, small_buffer_bound_with_all_to_all_traffic_finishes_on_every_router) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  for (const routing route : {routing::grid, routing::node_aware, routing::node_aware_advanced}) {
                    streamer_options o;
                    o.route = route;
                    o.buffer_items = 32;
                    o.max_buffered_items = 16;
                    std::uint64_t got = 0;
                    streamer<std::uint64_t> s(ctx, o, [&](const std::uint64_t& v) { got += v; });
                    constexpr int rounds = 200;
                    for (int r = 0; r < rounds; ++r)
                      for (int d = 0; d < ctx.size(); ++d) s.insert(static_cast<std::uint64_t>(ctx.rank() + 1), d);
                    s.finish();
                    const std::uint64_t p = ctx.size();
                    EXPECT_EQ(got, rounds * p * (p + 1) / 2) << to_string(route);
                    EXPECT_LE(s.stats().items_buffered_peak, 16u) << to_string(route);
                    if (ctx.size() > 2) {
                      EXPECT_GT(s.stats().flushes_bound, 0u) << to_string(route);
                    }
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

TEST(streamer_stress, bound_sends_full_sized_messages) {
  // One busy link with 8-item buffers under a bound of 64 items: every message is full. (A
  // regression: the item that filled a buffer was once not counted, the count drifted below
  // zero and every later item was sent alone.)
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options o;
              o.grid = virtual_grid::direct(ctx.size());
              o.buffer_items = 8;
              o.max_buffered_items = 64;
              std::uint64_t got = 0;
              streamer<std::uint64_t> s(ctx, o, [&](const std::uint64_t&) { ++got; });
              constexpr int count = 10000;
              for (int i = 0; i < count; ++i) s.insert(1, (ctx.rank() + 1) % ctx.size());
              s.finish();
              EXPECT_EQ(got, static_cast<std::uint64_t>(count));
              EXPECT_LE(s.stats().items_buffered_peak, 64u);
              if (ctx.size() > 1) {
                EXPECT_LE(s.stats().messages_sent, static_cast<std::uint64_t>(count / 8 + ctx.size()));  // + final markers
              }
            }),
            0);
}

}  // namespace
