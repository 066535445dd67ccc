#pragma once
// bale's toposort on transit: given a matrix that is a row and column permutation of an upper
// triangular matrix with unit diagonal (bale's "morally" unit upper triangular), find row and
// column permutations that make it upper triangular again. A row with one nonzero left is
// matched with that column (its last column is the sum of its columns less the ones eliminated,
// bale's "cool trick"), the column is then eliminated from every row holding it (the transpose's
// row), and so on. Each row gets a level (one more than the largest level among the rows whose
// columns it held, bale's rule), and rows are placed by level (bale's rperm), each column where
// its matched row went (cperm). The styles in transit's terms: conveyor -> one streamer in one
// quiesce() step (deliveries insert the next items), exstack -> sparse_exchange rounds, AGP ->
// global_array (fetch_add on the pivot counter, the row counts and sums).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/app_entry.hpp"
#include "common/bale_report.hpp"
#include "spmat/graph_input.hpp"
#include "spmat/spmat.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// toposort's options: bale's graph options with its defaults (-n 500000 rows per PE; loops
/// always, an undirected graph) beside the standard ones.
struct toposort_options {
  bale_graph_options graph = [] {
    bale_graph_options g;
    g.l_numrows = 500000;
    g.loops = true;
    return g;
  }();
  bale_std_options std{};
};

/// What a style returns: this PE's kernel time (between bale's barriers) and the number of
/// levels bale prints ("num levels = ...").
struct toposort_result {
  double seconds = 0;
  std::int64_t num_levels = 0;
};

// The kernels. Collective; `mat` is the permuted matrix (cyclic rows over the ctx's PEs) and
// `tmat` its transpose; each writes this PE's part of the row and the column permutations (cyclic
// arrays: entry g at local offset g / P, mat.lnumrows entries each): row g goes to rperm[g],
// column g to cperm[g]. Throw std::invalid_argument on every PE for spans of another size, a
// matrix that is not square, or a matrix that is no permutation of a unit upper triangular one
// (some row never left with a single nonzero). The streamer and exchange styles give the same
// permutations, whatever the message order (a row's level is a maximum, its place follows from
// the levels), computed by bale's exstack and conveyor rules (the number of levels is checked
// against bale's; bale prints no permutation to compare); the AGP style, as bale's, places rows
// in the order PEs claim their pivots.

/// conveyor -> streamer: one quiesce() step; a row left with one nonzero sends its column to the
/// column's PE, whose delivery streams the column's elimination to every row of it (tmat's row),
/// whose delivery may match that row in turn. Then rperm from the levels and cperm by a second
/// streamer ((position, column) to the column's PE).
toposort_result toposort_streamer(context& ctx, const sparse_matrix& mat, const sparse_matrix& tmat,
                                  std::span<std::int64_t> rperm, std::span<std::int64_t> cperm);
/// exstack -> sparse_exchange: bale's toposort_exstack rounds (the matched columns pushed, then
/// the eliminations, until a destination holds buf_cnt items; exchange; apply), then cperm in
/// rounds of buf_cnt.
toposort_result toposort_exchange(context& ctx, const sparse_matrix& mat, const sparse_matrix& tmat,
                                  std::span<std::int64_t> rperm, std::span<std::int64_t> cperm, std::int64_t buf_cnt);
/// AGP -> global_array: bale's toposort_agp, level by level: each row of the queue claims a
/// pivot (fetch_add), puts its positions, reads its column's rows from tmat and fetch_adds their
/// counts and sums; a row left with one nonzero is put on its PE's queue for the next level.
toposort_result toposort_global_array(context& ctx, const sparse_matrix& mat, const sparse_matrix& tmat,
                                      std::span<std::int64_t> rperm, std::span<std::int64_t> cperm);

/// Collective: bale's generate_toposort_input: `tri` (unit upper or lower triangular; a lower
/// one is transposed) permuted by bale's rand_permp(numrows, seed) for the rows and
/// rand_permp(numrows, seed + 12345) for the columns, then bale's permute_matrix (its exstack
/// version). Throws std::invalid_argument on every PE when `tri` is neither.
sparse_matrix toposort_input(context& ctx, const sparse_matrix& tri, std::int64_t seed);

/// Collective: bale's check_is_triangle: both are permutations, and `mat` permuted by them is
/// upper triangular with unit diagonal. PE 0 says what failed (bale's messages).
bool toposort_check(context& ctx, const sparse_matrix& mat, std::span<const std::int64_t> rperm,
                    std::span<const std::int64_t> cperm);

/// Collective: the whole toposort program, bale's output included (graph options, the input
/// matrix, "num levels = L" and each style's time). Returns the exit status: 0, 1 when a style
/// fails the check, 2 for bad input (-d, a file that is not triangular: reported once, by PE
/// 0). `command_line` is echoed in the banner.
int toposort_main(context& ctx, const toposort_options& options, const std::string& command_line);


}  // namespace transit::apps
