// global_array under every routed topology, both progress modes and several node sizes: data
// moves across owners and block boundaries, atomics are atomic, order and fences hold.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "one_sided_checks.hpp"

namespace {

using namespace transit;
using transit::testing::describe;
using transit::testing::for_each_node_size;
using transit::testing::configurations;
using transit::testing::expect_compare_exchange_counts;

// Every PE writes a region that starts inside its own block and runs over the next owners'
// blocks; after sync every PE reads the whole array back, in pieces that straddle boundaries.
TEST(global_array, put_get_round_trips_across_owners_and_blocks) {
  for_each_node_size([](context& ctx) {
    for (auto o : configurations(ctx)) {
      for (const std::size_t buffer : {std::size_t{256}, std::size_t{16384}}) {
        o.buffer_bytes = buffer;  // 256: a region travels in many pieces
        const std::size_t per_pe = 37;
        const std::size_t n = per_pe * static_cast<std::size_t>(ctx.size()) + 5;
        global_array<std::int64_t> a(ctx, n, o);
        const auto value = [](std::size_t i) { return static_cast<std::int64_t>(i * 7 + 3); };
        // Regions [rank * per_pe + 11, + per_pe) tile [11, 11 + P * per_pe) without overlap.
        const std::size_t first = static_cast<std::size_t>(ctx.rank()) * per_pe + 11;
        const std::size_t count = std::min(per_pe, n - first);
        std::vector<std::int64_t> mine(count);
        for (std::size_t k = 0; k < count; ++k) mine[k] = value(first + k);
        a.put(first, mine);
        if (ctx.rank() == 0) {
          std::vector<std::int64_t> head(11);
          for (std::size_t k = 0; k < 11; ++k) head[k] = value(k);
          a.put(0, head);
        }
        a.sync();
        for (std::size_t k = 0; k < a.local().size(); ++k)
          ASSERT_EQ(a.local()[k], value(a.local_begin() + k)) << describe(ctx, o) << " element " << a.local_begin() + k;
        std::vector<std::int64_t> all(n, -1);
        const std::size_t step = 13;  // pieces of 13 cross block boundaries at different places
        for (std::size_t at = 0; at < n; at += step)
          a.get(at, std::span<std::int64_t>(all).subspan(at, std::min(step, n - at)));
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(all[i], value(i)) << describe(ctx, o) << " element " << i;
        std::vector<std::int64_t> whole(n, -1);
        a.get_nb(0, whole).wait();
        ASSERT_EQ(whole, all) << describe(ctx, o);
        a.sync();
      }
    }
  });
}

// Tight flow control: 256-byte buffers hold five requests, links carry two buffers, and every PE
// issues thousands of nonblocking puts and accumulates at once, many through the same forwarders.
// Requests wait in backlogs and on incoming links; all of them must land.
TEST(global_array, thousands_of_requests_through_tight_buffers) {
  for_each_node_size([](context& ctx) {
    for (auto o : configurations(ctx)) {
      o.buffer_bytes = 256;
      const std::size_t p = static_cast<std::size_t>(ctx.size());
      const std::size_t per_pe = 1500;
      global_array<std::int64_t> a(ctx, per_pe * p, o);
      global_array<std::int64_t> hits(ctx, p, o);
      std::vector<std::int64_t> values(per_pe);
      std::vector<request> pending;
      // PE r writes elements r, r + P, r + 2P, ...: every owner, interleaved with the others.
      for (std::size_t k = 0; k < per_pe; ++k) {
        const std::size_t i = static_cast<std::size_t>(ctx.rank()) + k * p;
        values[k] = static_cast<std::int64_t>(3 * i + 1);
        pending.push_back(a.put_nb(i, std::span<const std::int64_t>(&values[k], 1)));
        if (k % 7 == 0) {
          const std::int64_t one = 1;
          hits.accumulate(k % p, std::span<const std::int64_t>(&one, 1), reduce_op::sum);
        }
      }
      for (auto& r : pending) r.wait();
      a.sync();
      hits.sync();
      if (o.topology != request_topology::mpi_rma) {
        // The buffers really ran out of credit (the path under test), yet memory stayed in bound.
        const auto waits = ctx.allreduce(a.stats().credit_waits + hits.stats().credit_waits, reduce_op::sum);
        // Requests travel between nodes only, unless polling PEs whose node shares no memory send
        // them to the node's other PEs too.
        const bool pe_links = o.progress == progress_mode::polling && a.stats().node_memory_shared == 0;
        const int endpoints = pe_links ? ctx.size() : ctx.machine().num_nodes();
        if (endpoints >= 3) {
          EXPECT_GT(waits, 0u) << describe(ctx, o);
        }
        if (o.progress == progress_mode::polling) {
          EXPECT_LE(a.stats().request_buffer_bytes_peak, a.stats().request_buffer_bytes) << describe(ctx, o);
        }
      }
      for (std::size_t k = 0; k < a.local().size(); ++k)
        ASSERT_EQ(a.local()[k], static_cast<std::int64_t>(3 * (a.local_begin() + k) + 1)) << describe(ctx, o);
      for (std::size_t k = 0; k < hits.local().size(); ++k) {
        std::int64_t mine = 0;
        for (std::size_t j = 0; j < per_pe; j += 7) mine += (j % p == hits.local_begin() + k) ? 1 : 0;
        ASSERT_EQ(hits.local()[k], mine * ctx.size()) << describe(ctx, o);
      }
    }
  });
}

// Collective: the old values of all PEs are exactly 0..total-1, each marking its slot once.
void expect_each_once(context& ctx, const one_sided_options& o, const std::vector<std::uint64_t>& old, std::size_t total) {
  global_array<std::uint32_t> seen(ctx, total, o);
  for (const auto v : old) {
    ASSERT_LT(v, total) << describe(ctx, o);
    const std::uint32_t one = 1;
    seen.accumulate(v, std::span<const std::uint32_t>(&one, 1), reduce_op::sum);
  }
  seen.sync();
  for (std::size_t k = 0; k < seen.local().size(); ++k)
    ASSERT_EQ(seen.local()[k], 1u) << describe(ctx, o) << ": old value " << seen.local_begin() + k;
}

// Every PE fetch_adds 1 to one word N times: the old values over all PEs are exactly 0..P*N-1.
void expect_permutation(context& ctx, one_sided_options o, bool nonblocking) {
  constexpr int per_pe = 60;
  const auto total = static_cast<std::size_t>(per_pe * ctx.size());
  global_array<std::uint64_t> counter(ctx, 1, o);
  std::vector<std::uint64_t> old(per_pe);
  if (nonblocking) {
    std::vector<request> pending;
    for (int i = 0; i < per_pe; ++i) pending.push_back(counter.fetch_add_nb(0, 1, &old[i]));
    for (auto& r : pending) r.wait();
  } else {
    for (int i = 0; i < per_pe; ++i) old[i] = counter.fetch_add(0, 1);
  }
  counter.sync();
  if (ctx.rank() == 0) {
    EXPECT_EQ(counter.local()[0], total) << describe(ctx, o);
  }
  expect_each_once(ctx, o, old, total);
}

// docs/one_sided.md, "Inside a node": in both progress modes a PE applies the operations on its
// own node's elements itself, through the node's shared memory: no request and no message. Every
// PE runs every kind of operation on its node's elements only (put, fetch_add, accumulate,
// compare_exchange on each node PE's block, packed region transfers, a get across the node's
// blocks), then checks the values and that its counters show no request and no message. A node
// holding whole ranks (always on the local backend; every test here runs on one host) must share
// memory; one that holds part of a rank's PE threads cannot, and then every operation is a request
// (the request path stays) and the counters must say so.
TEST(global_array, same_node_operations_send_no_message) {
  for_each_node_size([](context& ctx) {
    const machine& m = ctx.machine();
    const int node = m.node_of(ctx.rank());
    const auto first = static_cast<std::size_t>(m.pe_on_node(node, 0));
    const auto pes = static_cast<std::size_t>(m.pes_on_node(node));
    const auto local = static_cast<std::size_t>(m.local_rank(ctx.rank()));
    // transit::testing::helper_runs: the nodes hold whole ranks, so MPI can share their memory.
    const bool shared = transit::testing::helper_runs(ctx);
    for (auto o : configurations(ctx)) {
      if (o.topology == request_topology::mpi_rma) continue;
      constexpr std::size_t per_pe = 8;  // slots 0..2: puts by local rank; 3: regions; 5..7: atomics
      global_array<std::int64_t> a(ctx, per_pe * static_cast<std::size_t>(ctx.size()), o);
      ctx.barrier();
      const one_sided_stats before = a.stats();
      const auto at = [&](std::size_t q, std::size_t slot) { return (first + q) * per_pe + slot; };
      for (std::size_t q = 0; q < pes; ++q) {
        const std::int64_t mine = 100 * ctx.rank() + static_cast<std::int64_t>(q);
        a.put(at(q, local), std::span<const std::int64_t>(&mine, 1));
        a.fetch_add(at(q, 7), 1);
        const std::int64_t plus = ctx.rank() + 1;
        a.accumulate(at(q, 6), std::span<const std::int64_t>(&plus, 1), reduce_op::sum);
        for (std::int64_t seen = 0;;) {
          const std::int64_t was = a.compare_exchange(at(q, 5), seen, seen + 1);
          if (was == seen) break;
          seen = was;
        }
      }
      std::vector<region> slots;
      std::vector<std::int64_t> marks;
      for (std::size_t q = 0; q < pes; ++q) {
        slots.push_back({at(q, 3), 1});
        marks.push_back(1000 + static_cast<std::int64_t>(q));
      }
      if (local == 0) a.put_regions(slots, marks, transfer_protocol::packed);
      const one_sided_stats issued = a.stats();  // the writes alone, before sync and the reads
      a.sync();
      std::vector<std::int64_t> back(pes, -1);
      a.get_regions(slots, back, transfer_protocol::packed);
      std::vector<std::int64_t> all(pes * per_pe, -1);
      a.get(at(0, 0), all);  // one region across the node's blocks
      const one_sided_stats after = a.stats();
      EXPECT_EQ(back, marks) << describe(ctx, o);
      std::int64_t ranks_plus_one = 0;
      for (std::size_t l = 0; l < pes; ++l) ranks_plus_one += static_cast<std::int64_t>(first + l) + 1;
      for (std::size_t q = 0; q < pes; ++q) {
        for (std::size_t l = 0; l < pes; ++l)
          EXPECT_EQ(all[q * per_pe + l], 100 * static_cast<std::int64_t>(first + l) + static_cast<std::int64_t>(q))
              << describe(ctx, o) << " block " << q << " slot " << l;
        EXPECT_EQ(all[q * per_pe + 5], static_cast<std::int64_t>(pes)) << describe(ctx, o);
        EXPECT_EQ(all[q * per_pe + 6], ranks_plus_one) << describe(ctx, o);
        EXPECT_EQ(all[q * per_pe + 7], static_cast<std::int64_t>(pes)) << describe(ctx, o);
      }
      const bool expect_shared = shared || o.progress == progress_mode::helper_thread;
      EXPECT_EQ(after.node_memory_shared, expect_shared ? 1u : 0u) << describe(ctx, o);
      if (expect_shared) {
        // put, fetch_add, accumulate and at least one compare_exchange per node PE; the regions;
        // one get piece per block.
        const std::uint64_t least = 4 * pes + (local == 0 ? 1 : 0) + 1 + pes;
        EXPECT_GE(after.applied_in_node - before.applied_in_node, least) << describe(ctx, o);
        EXPECT_EQ(after.requests_sent, before.requests_sent) << describe(ctx, o);
        EXPECT_EQ(issued.messages_sent, before.messages_sent) << describe(ctx, o);
        EXPECT_EQ(after.messages_sent, before.messages_sent) << describe(ctx, o);
        EXPECT_EQ(after.request_messages_sent, before.request_messages_sent) << describe(ctx, o);
      } else {
        EXPECT_EQ(after.applied_in_node, 0u) << describe(ctx, o);
        EXPECT_GE(after.requests_sent - before.requests_sent, 4 * pes) << describe(ctx, o);
      }
      a.sync();
    }
  });
}

TEST(global_array, fetch_add_old_values_are_a_permutation) {
  for_each_node_size([](context& ctx) {
    for (auto o : configurations(ctx)) {
      for (const bool combine : {true, false}) {
        o.combine = combine;
        expect_permutation(ctx, o, false);
        expect_permutation(ctx, o, true);
      }
    }
  });
}

// The node grid a topology routes over (engine.cpp's make_node_plan).
virtual_grid node_grid(request_topology topology, int nodes) {
  switch (topology) {
    case request_topology::mfcg: return virtual_grid::balanced(nodes, 2);
    case request_topology::cfcg: return virtual_grid::balanced(nodes, 3);
    case request_topology::hypercube: {
      std::vector<int> cube;
      for (int n = nodes; n > 1; n /= 2) cube.push_back(2);
      if (cube.empty()) cube.push_back(1);
      return virtual_grid(cube, nodes);
    }
    default: return virtual_grid::direct(nodes);
  }
}

// A hot spot: every PE fetch_adds, puts (acknowledged) and gets at PE 0. Replies and
// acknowledgements retrace the route, so PE 0's endpoint sends them only to the endpoints its
// requests come in from (its node-grid neighbours' PEs that map onto it), never to each requester
// beyond them; forwarding endpoints pass them on. Every value is still right.
TEST(global_array, replies_retrace_the_route_from_a_hot_spot) {
  for_each_node_size([](context& ctx) {
    const machine& m = ctx.machine();
    const int p = ctx.size();
    for (auto o : configurations(ctx)) {
      if (o.topology == request_topology::mpi_rma) continue;  // MPI carries its replies
      for (const bool combine : {true, false}) {
        o.combine = combine;
        constexpr int per_pe = 40;
        global_array<std::uint64_t> counter(ctx, 1, o);
        // PE 0's block holds elements [0, p): one per PE to put to and get back.
        global_array<std::int64_t> slots(ctx, static_cast<std::size_t>(p) * static_cast<std::size_t>(p), o);
        std::vector<std::uint64_t> old(per_pe);
        std::vector<request> pending;
        for (int i = 0; i < per_pe; ++i) pending.push_back(counter.fetch_add_nb(0, 1, &old[i]));
        const std::int64_t mark = 1000 + ctx.rank();
        slots.put(static_cast<std::size_t>(ctx.rank()), std::span<const std::int64_t>(&mark, 1));
        for (auto& r : pending) r.wait();
        slots.fence();
        std::int64_t back = -1;
        slots.get(static_cast<std::size_t>(ctx.rank()), std::span<std::int64_t>(&back, 1));
        EXPECT_EQ(back, mark) << describe(ctx, o);
        counter.sync();
        slots.sync();

        const one_sided_stats st = counter.stats();
        const one_sided_stats slot_st = slots.stats();
        const int nodes = m.num_nodes();
        const virtual_grid grid = node_grid(o.topology, nodes);
        // The endpoints PE 0's endpoint can receive requests from: polling, the PEs of neighbour
        // nodes whose local rank maps onto PE 0 (and its node's other PEs when the node shares
        // no memory); helper mode, the neighbour nodes' helpers.
        std::uint64_t in_links = 0;
        const bool polling = o.progress == progress_mode::polling;
        for (int n = 1; n < nodes; ++n) {
          if (grid.distance(0, n) != 1) continue;
          if (!polling) {
            ++in_links;
            continue;
          }
          for (int l = 0; l < m.pes_on_node(n); ++l) in_links += l % m.pes_on_node(0) == 0 ? 1 : 0;
        }
        if (polling && st.node_memory_shared == 0) in_links += static_cast<std::uint64_t>(m.pes_on_node(0) - 1);
        if (ctx.rank() == 0) {
          EXPECT_LE(st.reply_peers, in_links) << describe(ctx, o);
          EXPECT_LE(slot_st.reply_peers, in_links) << describe(ctx, o);
        }
        // Without combining, the replies of a requester two or more hops from node 0 are passed
        // on (combined, the combining endpoint splits them instead).
        bool far = false;
        for (int n = 1; n < nodes; ++n) far = far || grid.distance(0, n) >= 2;
        const auto forwarded = ctx.allreduce(st.replies_forwarded + slot_st.replies_forwarded, reduce_op::sum);
        if (!combine && far) {
          EXPECT_GT(forwarded, 0u) << describe(ctx, o);
        }

        if (ctx.rank() == 0) {
          EXPECT_EQ(counter.local()[0], static_cast<std::uint64_t>(per_pe * p)) << describe(ctx, o);
          for (int q = 0; q < p; ++q) EXPECT_EQ(slots.local()[static_cast<std::size_t>(q)], 1000 + q) << describe(ctx, o);
        }
        expect_each_once(ctx, o, old, static_cast<std::size_t>(per_pe * p));
      }
    }
  });
}

// Requests for one word that meet in an open buffer merge into one; the split replies are still
// a permutation. A long flush period keeps the source's buffer open for all of them.
TEST(global_array, combining_merges_requests_and_splits_replies) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  for (auto o : configurations(ctx)) {
                    if (o.topology == request_topology::mpi_rma) continue;  // nothing to combine
                    o.flush_period = std::chrono::seconds(1);
                    global_array<std::int32_t> counter(ctx, 1, o);
                    constexpr int per_pe = 50;
                    std::vector<std::int32_t> old(per_pe, -1);
                    std::vector<request> pending;
                    for (int i = 0; i < per_pe; ++i) pending.push_back(counter.fetch_add_nb(0, 2, &old[i]));
                    for (auto& r : pending) r.wait();
                    // Only requests combine: PE 0's node applies its fetch_adds itself (when it shares memory).
                    const bool requests = ctx.machine().node_of(ctx.rank()) != ctx.machine().node_of(0) ||
                                          counter.stats().node_memory_shared == 0;
                    if (ctx.rank() != 0 && o.progress == progress_mode::polling && requests) {
                      EXPECT_GE(counter.stats().requests_combined, static_cast<std::uint64_t>(per_pe - 1))
                          << describe(ctx, o);
                    }
                    // This PE's old values increase by 2: merged in issue order.
                    for (int i = 1; i < per_pe; ++i) EXPECT_GT(old[i], old[i - 1]) << describe(ctx, o);
                    counter.sync();
                    if (ctx.rank() == 0) {
                      EXPECT_EQ(counter.local()[0], 2 * per_pe * ctx.size()) << describe(ctx, o);
                    }
                    expect_permutation(ctx, o, true);
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

TEST(global_array, accumulate_sums_min_max) {
  for_each_node_size([](context& ctx) {
    for (auto o : configurations(ctx)) {
      const std::size_t n = 5 * static_cast<std::size_t>(ctx.size()) + 3;
      global_array<std::int64_t> sums(ctx, n, o);
      global_array<double> lows(ctx, n, o);
      global_array<std::int32_t> highs(ctx, n, o);
      std::vector<std::int64_t> ones(n);
      std::vector<double> mine(n);
      std::vector<std::int32_t> ranks(n, ctx.rank());
      for (std::size_t i = 0; i < n; ++i) {
        ones[i] = static_cast<std::int64_t>(i) + ctx.rank();
        mine[i] = -static_cast<double>(ctx.rank()) - 0.5;
      }
      for (int round = 0; round < 3; ++round) sums.accumulate(0, ones, reduce_op::sum);
      lows.accumulate(0, mine, reduce_op::min);
      highs.accumulate(1, std::span<const std::int32_t>(ranks).subspan(1), reduce_op::max);
      sums.sync();
      lows.sync();
      highs.sync();
      const std::int64_t p = ctx.size();
      for (std::size_t k = 0; k < sums.local().size(); ++k) {
        const auto i = static_cast<std::int64_t>(sums.local_begin() + k);
        ASSERT_EQ(sums.local()[k], 3 * (p * i + p * (p - 1) / 2)) << describe(ctx, o) << " element " << i;
        ASSERT_EQ(lows.local()[k], -static_cast<double>(p - 1) - 0.5) << describe(ctx, o);
        ASSERT_EQ(highs.local()[k], i == 0 ? 0 : p - 1) << describe(ctx, o);
      }
    }
  });
}

// A lock-free counter: compare_exchange in a retry loop loses no increment.
TEST(global_array, compare_exchange_counter) {
  for_each_node_size([](context& ctx) {
    // Word 2 of 3 is owned by the last PE of three (PE 0 at one PE).
    for (auto o : configurations(ctx)) {
      expect_compare_exchange_counts(ctx, o, 3, 2, 25);
      expect_compare_exchange_counts(ctx, o, 3, 2, 25, true);  // compare_exchange_nb, then wait()
    }
  });
}

// Operations from one PE to one element apply in the order issued; fence() completes them, so a
// flag put after a fence is never seen before the data.
TEST(global_array, order_and_fence) {
  for_each_node_size([](context& ctx) {
    for (auto o : configurations(ctx)) {
      const int p = ctx.size();
      global_array<std::int64_t> a(ctx, 2 * static_cast<std::size_t>(p), o);
      const int next = (ctx.rank() + 1) % p;
      const std::size_t data = static_cast<std::size_t>(next);         // another PE's element...
      const std::size_t flag = static_cast<std::size_t>(p + ctx.rank());  // ...and a flag elsewhere
      for (std::int64_t v = 1; v <= 20; ++v) {
        a.put(data, std::span<const std::int64_t>(&v, 1));
        const std::int64_t delta = 100;
        a.accumulate(data, std::span<const std::int64_t>(&delta, 1), reduce_op::sum);
        std::int64_t back = 0;
        a.get(data, std::span<std::int64_t>(&back, 1));
        ASSERT_EQ(back, v + 100) << describe(ctx, o) << ": put, accumulate, get from one PE out of order";
      }
      const std::int64_t final_value = 4242;
      a.put(data, std::span<const std::int64_t>(&final_value, 1));
      a.fence();
      const std::int64_t raised = 1;
      a.put(flag, std::span<const std::int64_t>(&raised, 1));
      // Wait for the flag of the PE that writes into this PE's data element, then read the data.
      const std::size_t their_flag = static_cast<std::size_t>(p + (ctx.rank() + p - 1) % p);
      std::int64_t seen = 0;
      while (seen == 0) a.get(their_flag, std::span<std::int64_t>(&seen, 1));
      std::int64_t value = 0;
      a.get(static_cast<std::size_t>(ctx.rank()), std::span<std::int64_t>(&value, 1));
      EXPECT_EQ(value, final_value) << describe(ctx, o) << ": flag seen before the data it follows";
      a.sync();
    }
  });
}

// Polling mode: a PE waiting in a collective (or any transit call) still serves; without that,
// PE 0's get would wait forever for PE 1, which waits in the barrier for PE 0.
TEST(global_array, polling_serves_inside_collectives) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.size() < 2) return;
              one_sided_options o;
              o.progress = progress_mode::polling;
              global_array<int> a(ctx, static_cast<std::size_t>(ctx.size()), o);
              a.local()[0] = ctx.rank() + 10;
              ctx.barrier();
              if (ctx.rank() == 0) {
                for (int pe = 1; pe < ctx.size(); ++pe) {
                  int v = 0;
                  a.get(static_cast<std::size_t>(pe), std::span<int>(&v, 1));
                  EXPECT_EQ(v, pe + 10);
                }
              }
              ctx.barrier();
              const int sum = ctx.allreduce(a.fetch_add(0, 1), reduce_op::sum);  // old values 10..10+P-1
              EXPECT_EQ(sum, 10 * ctx.size() + ctx.size() * (ctx.size() - 1) / 2);
            }),
            0);
}

// Any trivially copyable element: value-initialised (default member initialisers included), and
// moved by put and get across owners.
struct particle {
  std::int32_t id = -7;
  double x = 0.25;
  char tag[5] = {'n', 'o', 'n', 'e', 0};
};

TEST(global_array, structs_are_value_initialised_and_travel_whole) {
  for_each_node_size([](context& ctx) {
    for (auto o : configurations(ctx)) {
      o.buffer_bytes = 256;  // a few particles per request piece
      const std::size_t n = 9 * static_cast<std::size_t>(ctx.size()) + 2;
      global_array<particle> a(ctx, n, o);
      for (const auto& p : a.local()) ASSERT_TRUE(p.id == -7 && p.x == 0.25 && p.tag[0] == 'n') << describe(ctx, o);
      a.sync();
      if (ctx.rank() == 0) {
        std::vector<particle> all(n);
        for (std::size_t i = 0; i < n; ++i) {
          all[i].id = static_cast<std::int32_t>(i);
          all[i].x = 0.5 * static_cast<double>(i);
          all[i].tag[0] = static_cast<char>('a' + i % 26);
        }
        a.put(0, all);
      }
      a.sync();
      std::vector<particle> back(n);
      a.get(0, back);
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_TRUE(back[i].id == static_cast<std::int32_t>(i) && back[i].x == 0.5 * static_cast<double>(i) &&
                    back[i].tag[0] == static_cast<char>('a' + i % 26) && back[i].tag[1] == 'o')
            << describe(ctx, o) << " element " << i;
      a.sync();
    }
  });
}

TEST(global_array, hypercube_needs_a_power_of_two_node_count) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  one_sided_options o;
                  o.topology = request_topology::hypercube;
                  const int nodes = ctx.machine().num_nodes();
                  if (transit::testing::power_of_two(nodes)) {
                    global_array<int> a(ctx, 4, o);
                    EXPECT_LT(a.fetch_add(3, 1), ctx.size());
                    return;
                  }
                  try {
                    global_array<int> a(ctx, 4, o);
                    ADD_FAILURE() << "hypercube accepted " << nodes << " nodes";
                  } catch (const std::invalid_argument& e) {
                    EXPECT_EQ(std::string(e.what()),
                              "number of nodes for request_topology::hypercube: got '" + std::to_string(nodes) +
                                  "', expected a power of two (use fcg, mfcg or cfcg for other node counts)");
                  }
                },
                {"--transit-pes-per-node=1"}),
            0);
}

}  // namespace
