#pragma once
// Shared by the one-sided tests: the configurations every behaviour is checked under.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "transit/transit.hpp"

namespace transit::testing {

/// A readable name for a configuration, for failure messages.
inline std::string describe(const context& ctx, const one_sided_options& o) {
  return std::string(to_string(o.topology)) + "/" + std::string(to_string(o.progress)) + (o.combine ? "" : "/no-combine") +
         "/" + std::to_string(o.buffer_bytes) + "B" +
         " on " + std::to_string(ctx.size()) + " PEs in " + std::to_string(ctx.machine().num_nodes()) + " nodes";
}

inline bool power_of_two(int n) { return (n & (n - 1)) == 0; }

/// mpi_rma's MPI window holds one PE per rank: with PE threads in the ranks
/// (--transit-threads-per-rank) it refuses.
inline bool mpi_one_pe_per_rank(const context& ctx) {
  return ctx.backend() == "mpi" && ctx.options().threads_per_rank == 1;
}
/// A node's helper serves whole ranks: with PE threads in the ranks, helper mode refuses nodes
/// that hold part of a rank (--transit-pes-per-node not a multiple of the threads).
inline bool helper_runs(const context& ctx) {
  const int threads = ctx.options().threads_per_rank;
  if (ctx.backend() != "mpi" || threads == 1) return true;
  const machine& m = ctx.machine();
  for (int node = 0; node < m.num_nodes(); ++node)
    if (m.pe_on_node(node, 0) % threads != 0 || m.pes_on_node(node) % threads != 0) return false;
  return true;
}

/// Every routed topology the job's node count allows, in both progress modes, and on the mpi
/// backend the mpi_rma baseline.
inline std::vector<one_sided_options> configurations(const context& ctx, bool helper_too = true) {
  std::vector<one_sided_options> out;
  if (mpi_one_pe_per_rank(ctx)) {
    one_sided_options rma;
    rma.topology = request_topology::mpi_rma;
    out.push_back(rma);
  }
  for (const auto topology : {request_topology::fcg, request_topology::mfcg, request_topology::cfcg,
                              request_topology::hypercube}) {
    if (topology == request_topology::hypercube && !power_of_two(ctx.machine().num_nodes())) continue;
    for (const auto progress : {progress_mode::polling, progress_mode::helper_thread}) {
      if (progress == progress_mode::helper_thread && (!helper_too || !helper_runs(ctx))) continue;
      one_sided_options o;
      o.topology = topology;
      o.progress = progress;
      out.push_back(o);
    }
  }
  return out;
}

/// A lock-free counter: every PE adds 1 `per_pe` times to `word` of an array of `elements` with
/// compare_exchange in a retry loop; no increment may be lost.
inline void expect_compare_exchange_counts(context& ctx, const one_sided_options& o, std::size_t elements,
                                           std::size_t word, int per_pe, bool nonblocking = false) {
  global_array<std::int64_t> counter(ctx, elements, o);
  for (int i = 0; i < per_pe; ++i) {
    std::int64_t seen = 0;
    for (;;) {
      std::int64_t before = -1;
      if (nonblocking) {
        counter.compare_exchange_nb(word, seen, seen + 1, &before).wait();
      } else {
        before = counter.compare_exchange(word, seen, seen + 1);
      }
      if (before == seen) break;
      seen = before;
    }
  }
  counter.sync();
  std::int64_t final_value = -1;
  counter.get(word, std::span<std::int64_t>(&final_value, 1));
  EXPECT_EQ(final_value, per_pe * ctx.size()) << describe(ctx, o);
  counter.sync();
}

/// Runs `body` once per emulated node size: one PE per node (the most forwarding), nodes of 2
/// and of 3 (uneven on most PE counts).
template <class Body>
void for_each_node_size(Body&& body) {
  for (const char* option : {"--transit-pes-per-node=1", "--transit-pes-per-node=2", "--transit-pes-per-node=3"})
    EXPECT_EQ(run_spmd(body, {option}), 0) << option;
}

}  // namespace transit::testing
