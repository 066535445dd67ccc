#pragma once
// bale's transpose_matrix on transit: the transpose of a distributed sparse matrix (cyclic rows)
// in each style -M selects, checked as bale checks it (the transpose of the transpose is the
// input) and against a local reference transpose. The styles in transit's terms: conveyor ->
// streamer, exstack -> sparse_exchange (bale's rounds of -b items), AGP -> global_array.
// bale's kernels make two passes (count each column's nonzeros where it will be a row, then send
// every nonzero there into its place); the streamer and sparse_exchange styles here make one:
// every nonzero (row, column / P[, value]) goes once to the PE of its column, which then places
// what arrived by a local counting sort (half the traffic and one termination fewer). The
// global_array style keeps bale's two passes, a fetch_add per nonzero finding its place.
#include <cstdint>
#include <string>

#include "common/app_entry.hpp"
#include "common/bale_report.hpp"
#include "spmat/graph_input.hpp"
#include "spmat/spmat.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// transpose_matrix's options: bale's standard ones and its graph options (-n default 500000).
struct transpose_options {
  bale_std_options std{};
  bale_graph_options graph{.l_numrows = 500000};
};

// The kernels. Collective; each builds `at`, the transpose of `a` (rows of a column in the order
// they arrive, not sorted, as bale leaves them), and returns this PE's wall time between a barrier
// before and a barrier after, as bale's apps time their kernels. Throw std::logic_error when the
// counts do not add up (bale's own checks).

/// conveyor -> streamer: the (row, column / P[, value]) items streamed, then placed.
double transpose_streamer(context& ctx, const sparse_matrix& a, sparse_matrix& at);
/// exstack -> sparse_exchange: the same items in bale's rounds of at most buf_cnt items per
/// destination, then placed.
double transpose_exchange(context& ctx, const sparse_matrix& a, sparse_matrix& at, std::int64_t buf_cnt);
/// AGP -> global_array: an atomic add per nonzero for the counts, a fetch_add per nonzero for its
/// place in its new row, and a put of the row (and value) there.
double transpose_global_array(context& ctx, const sparse_matrix& a, sparse_matrix& at);

/// Collective: the whole transpose_matrix program, bale's output included: the banner, the graph
/// and standard options, the input matrix, each style's time, -D's files (transpose_inmat,
/// transpose_outmat). Returns the exit status: 0, 1 when a check fails ("ERROR: transpose of
/// transpose does not match!"), 2 for bad input (a bad file, the geometric model, an edge
/// probability outside (0, 1]; reported once, by PE 0). `command_line` is echoed in the banner.
int transpose_matrix_main(context& ctx, const transpose_options& options, const std::string& command_line);


}  // namespace transit::apps
