#pragma once
// bale's sssp on transit: single-source shortest paths in a weighted directed graph (row i of the
// matrix holds the edges out of vertex i, weights drawn in [0, 1)), by Bellman-Ford (rounds relaxing
// the edges of every vertex whose distance changed in the last round) and by delta-stepping
// (Meyer and Sanders: buckets of width delta, light edges relaxed until the bucket stays empty,
// then the heavy ones), each in transit's styles: conveyor -> streamer, exstack ->
// sparse_exchange. Distances are cyclic (vertex i on PE i % P at i / P). bale's self-check: every
// implementation's distances against the first one's.
#include <cstdint>
#include <span>
#include <string>

#include "common/app_entry.hpp"
#include "common/bale_report.hpp"
#include "spmat/graph_input.hpp"
#include "spmat/spmat.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// sssp's options (bale's names and defaults) beside the standard and graph ones.
struct sssp_options {
  int alg = 3;                ///< -a: 1 Bellman-Ford, 2 delta-stepping, 3 both
  double delta_step = 0.0;    ///< -S deltaStep: bucket width in (0, 1]; 0 takes 1 / max degree
  std::int64_t v0 = 0;        ///< -V V0: the source vertex
  bale_std_options std{};
  /// bale's sssp: 100000 rows per PE, directed and weighted.
  bale_graph_options graph{.l_numrows = 100000, .directed = true, .weighted = true};
};

// The kernels. Collective; `mat` is the weighted graph (rows tidy or not), `dist` this PE's
// distances (mat.lnumrows of them, infinity where unreachable), written by the kernel. Each
// returns this PE's wall time, its setup included as bale times it.

/// Bellman-Ford, conveyor -> streamer: (local vertex, candidate distance) to the head's PE.
double sssp_bellman_streamer(context& ctx, const sparse_matrix& mat, std::int64_t v0, std::span<double> dist);
/// Bellman-Ford, exstack -> sparse_exchange: the same items in rounds of at most buf_cnt.
double sssp_bellman_exchange(context& ctx, const sparse_matrix& mat, std::int64_t v0, std::int64_t buf_cnt,
                             std::span<double> dist);
/// Delta-stepping, conveyor -> streamer. `delta_step` as -S.
double sssp_delta_streamer(context& ctx, const sparse_matrix& mat, std::int64_t v0, double delta_step,
                           std::span<double> dist);
/// Delta-stepping, exstack -> sparse_exchange.
double sssp_delta_exchange(context& ctx, const sparse_matrix& mat, std::int64_t v0, double delta_step,
                           std::int64_t buf_cnt, std::span<double> dist);

/// Collective: bale's sssp_answer_diff: the l2 norm of the difference of two distance vectors
/// (entries infinite in both skipped; infinite when one is and the other is not).
double sssp_answer_diff(context& ctx, std::span<const double> a, std::span<const double> b);

/// Collective: the whole sssp program, bale's output included. Returns the exit status: 0, 1
/// when an implementation's distances differ from the first one's (bale leaves "(compares)" off
/// its line), 2 for bad input (-l, an unweighted graph, -V beyond the graph, a bad file or spec;
/// reported once, by PE 0).
int sssp_main(context& ctx, const sssp_options& options, const std::string& command_line);

/// Local: sssp as `transit app sssp` runs it: its option table (bale's names and defaults) bound to
/// options of its own, and its program (sssp_main) with the banner echoing them.
app_entry sssp_app();

}  // namespace transit::apps
