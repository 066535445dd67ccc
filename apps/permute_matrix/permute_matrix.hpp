#pragma once
// bale's permute_matrix on transit: the input graph (spmat's get_input_graph) with its rows and
// columns permuted by two of bale's random permutations (rand_perm with seeds s and s + 12345),
// in each style -M selects, the styles checked against each other (as bale does) and, for small
// matrices, against a permutation done on one PE. Each style does what bale's permute_matrix_*
// does: the rows' nonzeros move to their new rows' PEs, then each column is renamed by reading
// the column permutation (an index gather), then each row is sorted. In transit's terms: conveyor
// -> streamer, exstack -> sparse_exchange in rounds of -b, AGP -> global_array puts and gets.
#include <cstdint>
#include <span>
#include <string>

#include "common/app_entry.hpp"
#include "common/bale_report.hpp"
#include "spmat/graph_input.hpp"
#include "spmat/spmat.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

// The styles. Collective. `a` is this PE's part of the matrix (cyclic rows); `rperm` and `cperm`
// are this PE's parts of cyclic arrays (randperm.hpp) of a.numrows and a.numcols entries: row r
// of `a` becomes row rperm[r], column c becomes column cperm[c]. Each returns this PE's part of
// the permuted matrix, rows tidy. Throw std::invalid_argument on every PE when a permutation's
// part has the wrong length on some PE.

/// exstack -> sparse_exchange: the nonzeros to their new rows' PEs in rounds of at most buf_cnt
/// per destination, then exchange_gather of the column permutation.
sparse_matrix permute_matrix_exchange(context& ctx, const sparse_matrix& a, std::span<const std::int64_t> rperm,
                                      std::span<const std::int64_t> cperm, std::int64_t buf_cnt);
/// conveyor -> streamer: each nonzero streamed to its new row's PE, then streamer_gather of the
/// column permutation.
sparse_matrix permute_matrix_streamer(context& ctx, const sparse_matrix& a, std::span<const std::int64_t> rperm,
                                      std::span<const std::int64_t> cperm);
/// AGP -> global_array: the inverse row permutation put in a cyclic global array, each new
/// row's old row read from the old row's PE (its offset and count, then its nonzeros by
/// get_regions), then global_array_gather of the column permutation (cyclic, as bale's).
sparse_matrix permute_matrix_global_array(context& ctx, const sparse_matrix& a, std::span<const std::int64_t> rperm,
                                          std::span<const std::int64_t> cperm);

/// permute_matrix's options: bale's graph options (l_numrows 1000000 by default, as bale's
/// permute_matrix sets it) beside the standard ones.
struct permute_matrix_options {
  bale_graph_options graph = [] {
    bale_graph_options g;
    g.l_numrows = 1000000;
    return g;
  }();
  bale_std_options std{};
};

/// Collective: the whole permute_matrix program, bale's output included (with -D bale's files
/// permute_matrix_inmat.mm, permute_matrix_rperm, permute_matrix_cperm and
/// permute_matrix_outmat.mm). Returns the exit status: 0, 1 when the styles disagree (bale's
/// "permute_matrix does not match") or differ from the one-PE reference, 2 for bad input (a bad
/// file or generator parameters, reported once by PE 0).
int permute_matrix_main(context& ctx, const permute_matrix_options& options, const std::string& command_line);


}  // namespace transit::apps
