#pragma once
// bale's triangles on transit: the triangles of an undirected simple graph held as its strictly
// lower-triangular adjacency matrix L (cyclic rows), counted as the sum over nonzeros L[i][j] of
// the size of the intersection of rows i and j: with -a 0 (bale's L & L * U) the columns w < j of
// row i are sent to row j's PE, which looks each up in row j; with -a 1 (L & U * L) the columns
// of row i of U = L^T are sent, and looked up in row j of U. The styles in transit's terms:
// conveyor -> streamer, exstack -> sparse_exchange, AGP -> global_array (row j fetched with
// get). The self-check: a Kronecker graph's count against its closed form, otherwise the styles
// against each other.
#include <cstdint>
#include <string>

#include "common/app_entry.hpp"
#include "common/bale_report.hpp"
#include "spmat/graph_input.hpp"
#include "spmat/spmat.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// triangles' options (bale's names and defaults) beside the standard and graph ones.
struct triangles_options {
  int alg = 0;  ///< -a triangle_alg: 0 L & L * U (push L's row), 1 L & U * L (push U's row)
  bale_std_options std{};
  bale_graph_options graph{.l_numrows = 100000};  ///< bale's triangles sets -n's default to 100000
};

/// What a kernel found on this PE: the triangles it counted and the items it sent (bale's
/// shared references or pushes).
struct triangle_count {
  std::int64_t triangles = 0;
  std::int64_t pushes = 0;
  double seconds = 0;  ///< this PE's wall time between the kernel's barriers
};

// The kernels. Collective; `lower` is L (tidy rows, strictly lower triangular), `upper` its
// transpose U, read only with alg 1. Each returns this PE's share of the count.

/// conveyor -> streamer: (w, local row of j) items to row j's PE, which counts the hits.
triangle_count triangles_streamer(context& ctx, const sparse_matrix& lower, const sparse_matrix& upper, int alg);
/// exstack -> sparse_exchange: the same items in rounds of at most buf_cnt per destination.
triangle_count triangles_exchange(context& ctx, const sparse_matrix& lower, const sparse_matrix& upper, int alg,
                                  std::int64_t buf_cnt);
/// AGP -> global_array: row j's offsets and columns fetched with get, intersected here.
triangle_count triangles_global_array(context& ctx, const sparse_matrix& lower, const sparse_matrix& upper, int alg);

/// Collective: U = L^T with cyclic rows and tidy rows (outside the kernels' time, as bale
/// transposes before timing).
sparse_matrix triangles_transpose(context& ctx, const sparse_matrix& lower);

/// Collective: bale's calculated pushes and pulls of the algorithm (printed before the kernels).
struct push_pull_count {
  std::int64_t pushes = 0;
  std::int64_t pulls = 0;
};
push_pull_count triangles_push_pull(context& ctx, const sparse_matrix& lower, int alg);

/// Collective: the whole triangles program, bale's output included. Returns the exit status:
/// 0, 1 when a style's count differs from the reference (the closed form for Kronecker graphs,
/// else the first style's), 2 for bad input (-l, -d, a bad file or spec; reported once, by PE 0).
int triangles_main(context& ctx, const triangles_options& options, const std::string& command_line);

/// Local: triangles as `transit app triangles` runs it: its option table (bale's names and defaults) bound to
/// options of its own, and its program (triangles_main) with the banner echoing them.
app_entry triangles_app();

}  // namespace transit::apps
