// toposort's program: bale's input (get_input_graph with loops, generate_toposort_input), its
// transpose, each style -M selects with bale's "num levels" and time, and bale's check.
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <vector>

#include "common/bale_styles.hpp"
#include "spmat/graph_app.hpp"
#include "permute_matrix/permute_matrix.hpp"
#include "randperm/randperm.hpp"
#include "spmat/matrix_market.hpp"
#include "toposort/toposort.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

namespace transit::apps {

namespace {

/// Collective: bale's transpose_matrix (its exstack version with buffers of 512, rows sorted).
sparse_matrix transposed(context& ctx, const sparse_matrix& mat) {
  sparse_matrix t;
  transpose_exchange(ctx, mat, t, 512);
  sort_nonzeros(t);
  return t;
}

/// Collective: whether `mat` is triangular with unit diagonal, upper or lower, as toposort_input
/// takes it.
bool unit_triangular(context& ctx, const sparse_matrix& mat) {
  return is_upper_triangular(ctx, mat, true) || is_lower_triangular(ctx, mat, true);
}

/// PE 0 prints bale's "num levels = L " before the style's time.
void print_levels(context& ctx, std::int64_t num_levels) {
  if (ctx.rank() == 0) std::fprintf(stderr, "num levels = %" PRId64 " ", num_levels);
}

}  // namespace

sparse_matrix toposort_input(context& ctx, const sparse_matrix& tri, std::int64_t seed) {
  std::optional<sparse_matrix> upper;
  if (!is_upper_triangular(ctx, tri, true)) {
    if (!is_lower_triangular(ctx, tri, true))
      throw std::invalid_argument("toposort_input: a matrix that is not triangular with unit diagonal");
    upper = transposed(ctx, tri);
  }
  const sparse_matrix& mat = upper ? *upper : tri;
  const std::vector<std::int64_t> rperm = rand_perm(ctx, mat.numrows, seed);
  const std::vector<std::int64_t> cperm = rand_perm(ctx, mat.numrows, seed + 12345);
  return permute_matrix_exchange(ctx, mat, rperm, cperm, 512);  // bale's permute_matrix
}

int toposort_main(context& ctx, const toposort_options& options, const std::string& command_line) {
  // As bale: -d is overridden with a warning, loops are always on.
  bale_graph_options graph_options = options.graph;
  override_graph_option(ctx, graph_options.directed, "toposort", "undirected graph input", "-d");
  graph_options.loops = true;
  bale_report report(ctx, options.std, "toposort", command_line);
  if (!report.opened()) return 2;
  const bale_graph_options graph = resolve_graph_options(graph_options, ctx.size());
  const std::optional<sparse_matrix> input =
      graph_app_input(ctx, report, options.std, graph, "topo_inmat", [&](sparse_matrix& m) {
        // Generated with loops, the graph is lower triangular with unit diagonal; a file or a
        // Kronecker graph may not be.
        if (unit_triangular(ctx, m)) return;
        if (graph.readfile())
          throw input_error("--readfile (-f): got '" + graph.filename +
                            "', expected a triangular matrix with unit diagonal (toposort)");
        throw input_error("--kronecker (-K): got '" + graph.kron_string +
                          "', expected a graph with a loop at every vertex (toposort takes a triangular matrix with "
                          "unit diagonal)");
      });
  if (!input) return 2;
  const sparse_matrix mat = toposort_input(ctx, *input, options.std.seed + 23456);
  const sparse_matrix tmat = transposed(ctx, mat);
  if (options.std.dump_files) write_matrix_mm(ctx, mat, "topo_permuted_mat");
  ctx.barrier();

  std::vector<std::int64_t> rperm(static_cast<std::size_t>(mat.lnumrows)), cperm(rperm.size());
  int status = 0;
  bale_run_styles(
      ctx, report, options.std, -1.0,
      [&](std::int64_t bit) {
        toposort_result result;
        if (bit == agp_style) result = toposort_global_array(ctx, mat, tmat, rperm, cperm);
        if (bit == exstack_style) result = toposort_exchange(ctx, mat, tmat, rperm, cperm, options.std.buf_cnt);
        if (bit == conveyor_style) result = toposort_streamer(ctx, mat, tmat, rperm, cperm);
        print_levels(ctx, result.num_levels);
        return result.seconds;
      },
      [&](std::int64_t) {
        if (!toposort_check(ctx, mat, rperm, cperm)) {
          if (ctx.rank() == 0) std::fprintf(stderr, "\nERROR: After toposort_matrix_upc: mat2 is not upper-triangular!\n");
          status = 1;
        }
      });
  report.finish();
  return status;
}

}  // namespace transit::apps
