#pragma once
// Exactly-once checking for streamer tests: items carry (source, sequence, destination); every PE
// regenerates every source's stream from the seed, so it knows exactly which items it must get.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace transit::testing {

struct probe {
  std::int32_t source;
  std::int32_t dest;
  std::int64_t sequence;
};

/// Destination of item `sequence` of `source` in a random stream (deterministic per seed).
inline int probe_destination(std::uint64_t seed, int source, std::int64_t sequence, int size) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(source) * 0xBF58476D1CE4E5B9ull +
                    static_cast<std::uint64_t>(sequence) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659D7A5ull;
  x ^= x >> 29;
  return static_cast<int>(x % static_cast<std::uint64_t>(size));
}

/// Records deliveries on one PE and checks them against the regenerated streams.
class delivery_log {
 public:
  delivery_log(int rank, int size, std::int64_t items_per_pe)
      : rank_(rank), size_(size), per_pe_(items_per_pe), seen_(static_cast<std::size_t>(size) * items_per_pe, 0) {}

  void record(const probe& p) {
    ASSERT_EQ(p.dest, rank_) << "item delivered to the wrong PE";
    ASSERT_GE(p.source, 0);
    ASSERT_LT(p.source, size_);
    ASSERT_GE(p.sequence, 0);
    ASSERT_LT(p.sequence, per_pe_);
    ++seen_[static_cast<std::size_t>(p.source) * per_pe_ + p.sequence];
  }

  /// Every item for this PE seen exactly once, and nothing else.
  void check(std::uint64_t seed, const std::string& where) const {
    std::int64_t missing = 0, duplicated = 0, stray = 0;
    for (int s = 0; s < size_; ++s) {
      for (std::int64_t q = 0; q < per_pe_; ++q) {
        const int count = seen_[static_cast<std::size_t>(s) * per_pe_ + q];
        const bool mine = probe_destination(seed, s, q, size_) == rank_;
        if (mine && count == 0) ++missing;
        if (count > 1) ++duplicated;
        if (!mine && count > 0) ++stray;
      }
    }
    EXPECT_EQ(missing, 0) << where << ": items never delivered on PE " << rank_;
    EXPECT_EQ(duplicated, 0) << where << ": items delivered twice on PE " << rank_;
    EXPECT_EQ(stray, 0) << where << ": items delivered that were not for PE " << rank_;
  }

  void reset() { std::fill(seen_.begin(), seen_.end(), 0); }

 private:
  int rank_, size_;
  std::int64_t per_pe_;
  std::vector<int> seen_;
};

// Sweeps of exactly-once checks over grids, buffer sizes and memory bounds, shared by the streamer
// tests and the emulated-cluster tests (tests/cluster).
struct grid_case {
  std::string name;
  std::function<std::optional<virtual_grid>(const context&)> make;
};

// Grids for the grid router: whatever the PE count, these are full or partially populated.
inline std::vector<grid_case> grid_router_cases() {
  return {
      {"default", [](const context&) { return std::nullopt; }},
      {"direct", [](const context& c) { return virtual_grid::direct(c.size()); }},
      {"2d", [](const context& c) { return virtual_grid::balanced(c.size(), 2); }},
      {"3d", [](const context& c) { return virtual_grid::balanced(c.size(), 3); }},
      {"4d", [](const context& c) { return virtual_grid::balanced(c.size(), 4); }},
      {"skewed-partial",
       [](const context& c) {
         return virtual_grid({2, (c.size() + 2) / 2 + 1}, c.size());  // always has empty slots
       }},
      {"node-pe", [](const context& c) { return virtual_grid::node_pe(c.machine()); }},
  };
}

// Node-aware grids: rows are nodes (emulated with --transit-pes-per-node, or the hosts of an
// emulated cluster, tests/cluster).
inline std::vector<grid_case> node_aware_cases() {
  return {
      {"node-pe", [](const context& c) { return virtual_grid::node_pe(c.machine()); }},
      {"3d-nodes",
       [](const context& c) {
         const auto& m = c.machine();
         const int nodes = m.num_nodes();
         const int a = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(nodes))));
         return virtual_grid({a, (nodes + a - 1) / a, m.max_pes_per_node()}, c.size());
       }},
  };
}

// `with_sources`: the callback takes each item's source, which must be the PE that inserted it.
inline void run_case(context& ctx, const streamer_options& options, std::uint64_t seed, std::int64_t per_pe,
              const std::string& where, bool with_sources = false) {
  delivery_log log(ctx.rank(), ctx.size(), per_pe);
  std::int64_t wrong_sources = 0;
  std::optional<streamer<probe>> made;
  if (with_sources) {
    made.emplace(ctx, options, [&](const probe& p, int source) {
      wrong_sources += source != p.source;
      log.record(p);
    });
  } else {
    made.emplace(ctx, options, [&](const probe& p) { log.record(p); });
  }
  streamer<probe>& s = *made;
  for (int step = 0; step < 2; ++step) {  // two steps on one streamer
    log.reset();
    const std::uint64_t step_seed = seed + 1000 * step;
    for (std::int64_t q = 0; q < per_pe; ++q) {
      const int dest = probe_destination(step_seed, ctx.rank(), q, ctx.size());
      s.insert(probe{ctx.rank(), dest, q}, dest);
    }
    s.finish();
    log.check(step_seed, where + " step " + std::to_string(step));
    EXPECT_EQ(wrong_sources, 0) << where << " step " << step << ": items delivered with a wrong source";
  }
  const auto st = s.stats();
  EXPECT_EQ(st.items_inserted, static_cast<std::uint64_t>(2 * per_pe));
  if (options.max_buffered_items > 0) {
    EXPECT_LE(st.items_buffered_peak, options.max_buffered_items) << where;
  }
  // Aggregation memory stays within one buffer per link to a peer, plus one for this PE's own
  // items (which holds at least own_buffer_min_items).
  const std::uint64_t peers = s.route_plan().out_links(ctx.rank()).size();
  const std::uint64_t per_item = sizeof(probe) + sizeof(std::int32_t) * (with_sources ? 2 : 1);
  const std::uint64_t per_buffer = 16 + options.buffer_items * per_item + 4;
  const auto own_items =
      transit::detail::streamer_core::own_capacity(static_cast<std::uint32_t>(options.buffer_items), sizeof(probe));
  const std::uint64_t own_buffer = 16 + std::uint64_t{own_items} * per_item + 4;
  EXPECT_LE(st.buffer_bytes_peak, peers * per_buffer + own_buffer) << where;
  // Messages to other nodes are counted as such: exactly the sends on links to another node.
  EXPECT_LE(st.inter_node_messages, st.messages_sent) << where;
  if (ctx.machine().num_nodes() == 1) {
    EXPECT_EQ(st.inter_node_messages, 0u) << where;
  }
  const auto delivered = ctx.allreduce<std::uint64_t>(st.items_delivered, reduce_op::sum);
  EXPECT_EQ(delivered, static_cast<std::uint64_t>(2 * per_pe * ctx.size())) << where;
}

inline void sweep(routing route, const std::vector<grid_case>& grids, context& ctx, bool with_sources = false) {
  const std::size_t buffers[] = {1, 7, 1024};
  int variant = 0;
  for (const auto& g : grids) {
    for (const std::size_t buffer : buffers) {
      for (const std::size_t bound : {std::size_t{0}, std::size_t{16}}) {
        streamer_options o;
        o.grid = g.make(ctx);
        o.route = route;
        o.buffer_items = buffer;
        o.max_buffered_items = bound;
        const std::uint64_t seed = 17 + static_cast<std::uint64_t>(variant++);
        const std::string where = std::string(to_string(route)) + " grid " + g.name + " (" +
                                  (o.grid ? o.grid->str() : std::string("node_pe")) + ") buffer " +
                                  std::to_string(buffer) + " bound " + std::to_string(bound) + " seed " +
                                  std::to_string(seed);
        run_case(ctx, o, seed, 300, where, with_sources);
      }
    }
  }
}

}  // namespace transit::testing
