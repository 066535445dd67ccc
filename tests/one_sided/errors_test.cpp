// Bad input to the one-sided layer: exceptions of the contract's type whose message names the
// value and what was expected.
#include <stdexcept>
#include <string>

#include "one_sided_checks.hpp"

namespace {

using namespace transit;

template <class Exception, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Exception& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception: ") + e.what();
  }
  return "no exception";
}

// The same errors under either layout.
TEST(one_sided_errors, indices_and_regions_out_of_range) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
            for (const auto layout : {array_layout::block, array_layout::cyclic}) {
              global_array<int> a(ctx, 10, layout);
              int v = 0;
              std::vector<int> three(3);
              EXPECT_EQ(message_of<std::out_of_range>([&] { a.fetch_add(10, 1); }),
                        "global_array::fetch_add: index 10 is outside [0, 10): expected an element of the array");
              EXPECT_EQ(message_of<std::out_of_range>([&] { a.owner(11); }),
                        "global_array::owner: index 11 is outside [0, 10): expected an element of the array");
              EXPECT_EQ(message_of<std::out_of_range>([&] { a.put(8, three); }),
                        "global_array::put: region [8, 8 + 3) runs past the end of the array (size 10)");
              EXPECT_EQ(message_of<std::out_of_range>([&] { a.get(9, three); }),
                        "global_array::get: region [9, 9 + 3) runs past the end of the array (size 10)");
              EXPECT_EQ(message_of<std::out_of_range>([&] { a.get_nb(20, std::span<int>(&v, 1)); }),
                        "global_array::get: region [20, 20 + 1) runs past the end of the array (size 10)");
              EXPECT_EQ(message_of<std::out_of_range>([&] { a.accumulate(10, std::span<const int>(&v, 1), reduce_op::sum); }),
                        "global_array::accumulate: region [10, 10 + 1) runs past the end of the array (size 10)");
              EXPECT_EQ(message_of<std::out_of_range>([&] { a.compare_exchange(10, 0, 1); }),
                        "global_array::compare_exchange: index 10 is outside [0, 10): expected an element of the array");
              EXPECT_EQ(message_of<std::out_of_range>([&] { a.local_offset(10); }),
                        "global_array::local_offset: index 10 is outside [0, 10): expected an element of the array");
              const region past[] = {{2, 3}, {9, 2}};
              EXPECT_EQ(message_of<std::out_of_range>([&] { a.put_regions(past, std::vector<int>(5)); }),
                        "global_array::put_regions: region 1 [9, 9 + 2) runs past the end of the array (size 10)");
              a.put(10, std::span<const int>());  // an empty region at the end is no error
              a.sync();
            }
            }),
            0);
}

TEST(one_sided_errors, mutex_misuse) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              global_mutexes m(ctx, 2);
              const std::string pe = std::to_string(ctx.rank());
              EXPECT_EQ(message_of<std::logic_error>([&] { m.unlock(1); }),
                        "global_mutexes::unlock: PE " + pe + " does not hold mutex 1: expected a mutex this PE locked");
              EXPECT_EQ(message_of<std::out_of_range>([&] { m.lock(2); }),
                        "global_mutexes::lock: mutex 2 is outside [0, 2): expected one of the 2 mutexes");
              EXPECT_EQ(message_of<std::out_of_range>([&] { m.unlock(-1); }),
                        "global_mutexes::unlock: mutex -1 is outside [0, 2): expected one of the 2 mutexes");
              m.lock(0);
              EXPECT_EQ(message_of<std::logic_error>([&] { m.lock(0); }),
                        "global_mutexes::lock: PE " + pe + " already holds mutex 0 (locking it again would wait forever)");
              m.unlock(0);
              EXPECT_EQ(message_of<std::logic_error>([&] { m.unlock(0); }),
                        "global_mutexes::unlock: PE " + pe + " does not hold mutex 0: expected a mutex this PE locked");
              ctx.barrier();
            }),
            0);
}

TEST(one_sided_errors, bad_options) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              one_sided_options small;
              small.buffer_bytes = 100;
              EXPECT_EQ(message_of<std::invalid_argument>([&] { global_array<int> a(ctx, 4, small); }),
                        "one_sided_options.buffer_bytes: got '100', expected between 256 and 2^30 bytes");
              struct big {
                char bytes[200];
              };
              small.buffer_bytes = 300;
              EXPECT_EQ(message_of<std::invalid_argument>([&] { global_array<big> a(ctx, 4, small); }),
                        "one_sided_options.buffer_bytes: got '300', expected room for a request of two 200-byte "
                        "elements (at least 440 bytes)");
              one_sided_options negative;
              negative.flush_period = std::chrono::microseconds(-1);
              EXPECT_EQ(message_of<std::invalid_argument>([&] { global_array<int> a(ctx, 4, negative); }),
                        "one_sided_options.flush_period: got '-1 us', expected 0 or more");
              EXPECT_EQ(message_of<std::invalid_argument>([&] { global_mutexes m(ctx, 0); }),
                        "global_mutexes count: got '0', expected at least 1");
              if (ctx.backend() == "local") {
                one_sided_options rma;
                rma.topology = request_topology::mpi_rma;
                EXPECT_EQ(message_of<std::invalid_argument>([&] { global_array<int> a(ctx, 4, rma); }),
                          "one_sided_options.topology: got 'mpi-rma', expected fcg, mfcg, cfcg or hypercube on the "
                          "local backend (MPI windows need the mpi backend)");
              }
              EXPECT_EQ(message_of<std::invalid_argument>([&] { parse_request_topology("torus"); }),
                        "request topology: got 'torus', expected 'fcg', 'mfcg', 'cfcg', 'hypercube' or 'mpi-rma'");
              EXPECT_EQ(message_of<std::invalid_argument>([&] { parse_progress_mode("interrupts"); }),
                        "progress mode: got 'interrupts', expected 'polling' or 'helper'");
              for (const auto t : {request_topology::fcg, request_topology::mfcg, request_topology::cfcg,
                                   request_topology::hypercube, request_topology::mpi_rma})
                EXPECT_EQ(parse_request_topology(to_string(t)), t);
              EXPECT_EQ(parse_progress_mode(to_string(progress_mode::helper_thread)), progress_mode::helper_thread);
            }),
            0);
}

// A helper thread calls MPI from a thread of its own: below MPI_THREAD_MULTIPLE helper mode
// refuses, unless a communication thread makes MPI's calls (and runs the helper). A node's helper
// serves whole ranks. Registered on mpi at the default level (it works), with
// --transit-mpi-threads=funneled (refused at one PE per rank, served by the communication thread
// with PE threads), and with PE threads and a node per PE (refused). Polling mode beside it shares
// its nodes' memory at every level, except where a node holds part of a rank.
TEST(one_sided_errors, helper_mode_needs_mpi_thread_multiple) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              one_sided_options o;
              o.progress = progress_mode::helper_thread;
              const int threads = ctx.options().threads_per_rank;
              const bool mpi = ctx.backend() == "mpi";
              const int first_node_pes = ctx.machine().pes_on_node(0);
              if (mpi && !ctx.options().mpi_thread_multiple && !runs_comm_thread(ctx.options())) {
                EXPECT_EQ(message_of<std::invalid_argument>([&] { global_array<int> a(ctx, 4, o); }),
                          "MPI thread level for progress_mode::helper_thread: got 'MPI_THREAD_FUNNELED', expected "
                          "MPI_THREAD_MULTIPLE: its helper thread calls MPI; start the job with "
                          "TRANSIT_MPI_THREADS=multiple (or --transit-mpi-threads=multiple)");
              } else if (mpi && first_node_pes % threads != 0) {
                EXPECT_EQ(message_of<std::invalid_argument>([&] { global_array<int> a(ctx, 4, o); }),
                          detail::concat("one_sided_options.progress: got 'helper', expected polling, or nodes of whole "
                                         "ranks: node 0 holds ",
                                         first_node_pes, first_node_pes == 1 ? " PE" : " PEs", " from PE 0, and a rank holds ",
                                         threads, " PE threads (give --transit-pes-per-node a multiple of ", threads,
                                         ")"));
              } else {
                global_array<int> a(ctx, 4, o);
                EXPECT_GE(a.fetch_add(0, 1), 0);
                a.sync();
                int first = 0;
                a.get(0, std::span<int>(&first, 1));
                EXPECT_EQ(first, ctx.size());
              }
              // Polling mode runs no helper: it shares its node's memory at any MPI thread level,
              // wherever the nodes hold whole ranks (MPI shares memory between ranks), and sends
              // requests elsewhere (docs/one_sided.md, "Inside a node").
              const machine& m = ctx.machine();
              bool whole_ranks = true;
              for (int n = 0; n < m.num_nodes(); ++n)
                whole_ranks = whole_ranks && m.pe_on_node(n, 0) % threads == 0 && m.pes_on_node(n) % threads == 0;
              global_array<int> polled(ctx, 4);
              EXPECT_EQ(polled.stats().node_memory_shared, (!mpi || whole_ranks) ? 1u : 0u);
              EXPECT_GE(polled.fetch_add(0, 1), 0);
              polled.sync();
              int total = 0;
              polled.get(0, std::span<int>(&total, 1));
              EXPECT_EQ(total, ctx.size());
              polled.sync();
              if (mpi && threads > 1) {
                one_sided_options rma;
                rma.topology = request_topology::mpi_rma;
                EXPECT_EQ(message_of<std::invalid_argument>([&] { global_array<int> a(ctx, 4, rma); }),
                          detail::concat("one_sided_options.topology: got 'mpi-rma', expected fcg, mfcg, cfcg or hypercube "
                                         "with ",
                                         threads, " PE threads per rank (MPI windows here hold one PE per rank)"));
              }
            }),
            0);
}

}  // namespace
