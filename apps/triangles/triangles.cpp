#include "triangles/triangles.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "common/bale_styles.hpp"
#include "common/bale_timing.hpp"
#include "common/exstack_rounds.hpp"
#include "spmat/graph_app.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

namespace transit::apps {

namespace {

/// One item of the push styles: is column `w` in local row `row` of the receiving PE? 32-bit
/// fields while the graph has fewer than 2^32 vertices (half the bytes on the wire), else 64.
template <class Index>
struct wedge {
  Index w;
  Index row;
};

/// Local: whether tidy local row `lrow` of `mat` holds column `w`.
bool row_holds(const sparse_matrix& mat, std::int64_t lrow, std::int64_t w) {
  const std::int64_t* begin = mat.nonzero.data() + mat.offset[static_cast<std::size_t>(lrow)];
  const std::int64_t* end = mat.nonzero.data() + mat.offset[static_cast<std::size_t>(lrow) + 1];
  return std::binary_search(begin, end, w);
}

/// Local: the size of the intersection of two ascending lists.
std::int64_t common_count(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
  std::int64_t count = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++count;
      ++i;
      ++j;
    }
  }
  return count;
}

/// Local: bale's push loop, shared by the streamer and exchange styles: for each nonzero L[i][j]
/// of this PE, `push(w, local row of j, PE of j)` for each column w of row i of L below j (alg 0)
/// or each column of row i of U (alg 1). Returns the number pushed.
template <class Push>
std::int64_t push_wedges(const sparse_matrix& lower, const sparse_matrix& upper, int alg, Push&& push) {
  const std::int64_t pes = lower.pes;
  std::int64_t pushed = 0;
  for (std::int64_t li = 0; li < lower.lnumrows; ++li) {
    const std::span<const std::int64_t> row = lower.row(li);
    const std::span<const std::int64_t> sent = alg == 0 ? row : upper.row(li);
    for (const std::int64_t j : row) {
      const int pe = static_cast<int>(j % pes);
      const std::int64_t lj = j / pes;
      for (const std::int64_t w : sent) {
        if (alg == 0 && w >= j) break;  // row j of L holds only columns below j
        push(w, lj, pe);
        ++pushed;
      }
    }
  }
  return pushed;
}

template <class Index>
triangle_count streamer_kernel(context& ctx, const sparse_matrix& lower, const sparse_matrix& upper, int alg) {
  const sparse_matrix& looked_up = alg == 0 ? lower : upper;
  triangle_count result;
  std::int64_t hits = 0;
  streamer<wedge<Index>> stream(ctx, {}, [&looked_up, &hits](const wedge<Index>& item) {
    if (row_holds(looked_up, static_cast<std::int64_t>(item.row), static_cast<std::int64_t>(item.w))) ++hits;
  });
  result.seconds = bale_timed(ctx, [&] {
    result.pushes = push_wedges(lower, upper, alg, [&stream](std::int64_t w, std::int64_t lj, int pe) {
      stream.insert(wedge<Index>{static_cast<Index>(w), static_cast<Index>(lj)}, pe);
    });
    stream.finish();
    ctx.barrier();
  });
  result.triangles = hits;
  return result;
}

template <class Index>
triangle_count exchange_kernel(context& ctx, const sparse_matrix& lower, const sparse_matrix& upper, int alg,
                               std::int64_t buf_cnt) {
  const sparse_matrix& looked_up = alg == 0 ? lower : upper;
  triangle_count result;
  std::int64_t hits = 0;
  sparse_exchange<wedge<Index>> exchange(ctx, exstack_exchange_options());
  exstack_rounds rounds(ctx, exchange, buf_cnt, [&looked_up, &hits](const wedge<Index>& item) {
    if (row_holds(looked_up, static_cast<std::int64_t>(item.row), static_cast<std::int64_t>(item.w))) ++hits;
  });
  result.seconds = bale_timed(ctx, [&] {
    result.pushes = push_wedges(lower, upper, alg, [&rounds](std::int64_t w, std::int64_t lj, int pe) {
      rounds.push(wedge<Index>{static_cast<Index>(w), static_cast<Index>(lj)}, pe);
    });
    rounds.finish();
    ctx.barrier();
  });
  result.triangles = hits;
  return result;
}

/// Whether the 32-bit items can name every vertex and local row (Collective: every PE must
/// choose the same item type).
bool narrow_items(const sparse_matrix& lower) {
  return lower.numrows <= static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max());
}

/// A matrix's offsets and columns in global arrays, PE p's block holding PE p's rows, so that
/// any PE can fetch any row (bale's shared offset and nonzero arrays).
class shared_rows {
 public:
  /// Collective.
  shared_rows(context& ctx, const sparse_matrix& mat)
      : pes_(ctx.size()),
        offsets_per_pe_(static_cast<std::size_t>(ctx.allreduce(mat.lnumrows, reduce_op::max)) + 1),
        columns_per_pe_(static_cast<std::size_t>(std::max<std::int64_t>(ctx.allreduce(mat.lnnz, reduce_op::max), 1))),
        offsets_(ctx, offsets_per_pe_ * static_cast<std::size_t>(pes_)),
        columns_(ctx, columns_per_pe_ * static_cast<std::size_t>(pes_)) {
    std::copy(mat.offset.begin(), mat.offset.end(), offsets_.local().begin());
    std::copy(mat.nonzero.begin(), mat.nonzero.end(), columns_.local().begin());
    offsets_.sync();
    columns_.sync();
  }

  /// Local: the columns of global row `j` into `out` (resized); returns the number of elements
  /// fetched (offsets and columns), bale's count of shared references.
  std::int64_t fetch(std::int64_t j, std::vector<std::int64_t>& out) {
    const auto pe = static_cast<std::size_t>(j % pes_);
    const auto lrow = static_cast<std::size_t>(j / pes_);
    std::int64_t range[2];
    offsets_.get(pe * offsets_per_pe_ + lrow, std::span<std::int64_t>(range, 2));
    out.resize(static_cast<std::size_t>(range[1] - range[0]));
    if (!out.empty()) columns_.get(pe * columns_per_pe_ + static_cast<std::size_t>(range[0]), out);
    return 2 + static_cast<std::int64_t>(out.size());
  }

 private:
  int pes_;
  std::size_t offsets_per_pe_, columns_per_pe_;
  global_array<std::int64_t> offsets_;
  global_array<std::int64_t> columns_;
};

}  // namespace

triangle_count triangles_streamer(context& ctx, const sparse_matrix& lower, const sparse_matrix& upper, int alg) {
  return narrow_items(lower) ? streamer_kernel<std::uint32_t>(ctx, lower, upper, alg)
                             : streamer_kernel<std::int64_t>(ctx, lower, upper, alg);
}

triangle_count triangles_exchange(context& ctx, const sparse_matrix& lower, const sparse_matrix& upper, int alg,
                                  std::int64_t buf_cnt) {
  return narrow_items(lower) ? exchange_kernel<std::uint32_t>(ctx, lower, upper, alg, buf_cnt)
                             : exchange_kernel<std::int64_t>(ctx, lower, upper, alg, buf_cnt);
}

triangle_count triangles_global_array(context& ctx, const sparse_matrix& lower, const sparse_matrix& upper, int alg) {
  // Each nonzero L[i][j]: row j (of L, or of U with alg 1) fetched, intersected with row i.
  const sparse_matrix& rows = alg == 0 ? lower : upper;
  shared_rows shared(ctx, rows);
  std::vector<std::int64_t> fetched;
  triangle_count result;
  result.seconds = bale_timed(ctx, [&] {
    for (std::int64_t li = 0; li < lower.lnumrows; ++li) {
      const std::span<const std::int64_t> mine = rows.row(li);
      const std::span<const std::int64_t> row = lower.row(li);
      // alg 0: the smallest column j of row i has nothing below it in common with row i.
      for (std::size_t k = alg == 0 ? 1 : 0; k < row.size(); ++k) {
        result.pushes += shared.fetch(row[k], fetched);
        result.triangles += common_count(mine, fetched);
      }
    }
    ctx.barrier();
  });
  return result;
}

sparse_matrix triangles_transpose(context& ctx, const sparse_matrix& lower) {
  // transpose_matrix's streamer style, outside the timed kernels as bale's transpose_matrix is;
  // its rows come in arrival order, and the kernels need them ascending.
  sparse_matrix upper;
  transpose_streamer(ctx, lower, upper);
  sort_nonzeros(upper);
  return upper;
}

push_pull_count triangles_push_pull(context& ctx, const sparse_matrix& lower, int alg) {
  // Column counts of L (bale's fetch-and-increment per nonzero into a shared array).
  const auto pes = static_cast<std::size_t>(ctx.size());
  const auto per_pe = static_cast<std::size_t>(std::max<std::int64_t>(ctx.allreduce(lower.lnumrows, reduce_op::max), 1));
  global_array<std::int64_t> column_counts(ctx, per_pe * pes);
  const std::int64_t one = 1;
  for (const std::int64_t c : lower.nonzero)
    column_counts.accumulate(static_cast<std::size_t>(c) % pes * per_pe + static_cast<std::size_t>(c) / pes,
                             std::span<const std::int64_t>(&one, 1), reduce_op::sum);
  column_counts.sync();
  const std::span<const std::int64_t> cc = column_counts.local();
  std::int64_t row_times_col = 0, row_choose_2 = 0, col_choose_2 = 0;
  for (std::int64_t li = 0; li < lower.lnumrows; ++li) {
    const std::int64_t deg = lower.row_count(li);
    const std::int64_t col = cc[static_cast<std::size_t>(li)];
    row_times_col += deg * col;
    row_choose_2 += deg * (deg - 1) / 2;
    col_choose_2 += col * (col - 1) / 2;
  }
  push_pull_count count;
  if (alg == 0) {
    count.pulls = ctx.allreduce(row_times_col, reduce_op::sum);
    count.pushes = ctx.allreduce(row_choose_2, reduce_op::sum);
  } else {
    count.pushes = ctx.allreduce(row_times_col, reduce_op::sum);
    count.pulls = ctx.allreduce(col_choose_2, reduce_op::sum);
  }
  return count;
}

int triangles_main(context& ctx, const triangles_options& options, const std::string& command_line) {
  const int me = ctx.rank();
  // As bale: -l and -d are overridden with a warning each.
  bale_graph_options graph_options = options.graph;
  override_graph_option(ctx, graph_options.loops, "triangles", "a graph without loops", "-l");
  override_graph_option(ctx, graph_options.directed, "triangles", "an undirected graph", "-d");
  bale_report report(ctx, options.std, "triangles", command_line);
  if (!report.opened()) return 2;
  const bale_graph_options graph = resolve_graph_options(graph_options, ctx.size());
  bool lower_triangular = true;
  const std::optional<sparse_matrix> input =
      graph_app_input(ctx, report, options.std, graph, "triangle_inmat", [&](sparse_matrix& mat) {
        if (graph.readfile()) {
          if (tril(ctx, mat, -1) != 0)
            report.note("WARNING: input graph was not lower-triangular with zero diagonal. Removing illegal nonzeros.");
        } else {
          lower_triangular = is_lower_triangular(ctx, mat, false);
        }
      });
  if (!input) return 2;
  if (!lower_triangular) {  // a generator's fault, not the user's: bale's exit(1)
    if (me == 0) std::fprintf(stderr, "ERROR: L is not lower triangular!\n");
    return 1;
  }
  const sparse_matrix& lower = *input;

  std::int64_t correct = -1;
  bool wrote_count = false;
  if (graph.model == graph_model::kronecker && !graph.readfile()) {
    correct = calc_num_tri_kron_graph(graph.kron);
    report.write_int("num_triangles", correct);
    wrote_count = true;
  }
  const sparse_matrix upper = options.alg == 1 ? triangles_transpose(ctx, lower) : sparse_matrix{};
  const push_pull_count calculated = triangles_push_pull(ctx, lower, options.alg);
  if (options.std.json_output.empty() && me == 0)
    std::fprintf(stderr, "Calculated: Pulls = %" PRId64 "\n            Pushes = %" PRId64 "\n\n", calculated.pulls,
                 calculated.pushes);
  ctx.barrier();

  int status = 0;
  std::int64_t total = 0;
  bale_run_styles(
      ctx, report, options.std, -1.0,
      [&](std::int64_t bit) {
        triangle_count count;
        if (bit == agp_style) count = triangles_global_array(ctx, lower, upper, options.alg);
        if (bit == exstack_style) count = triangles_exchange(ctx, lower, upper, options.alg, options.std.buf_cnt);
        if (bit == conveyor_style) count = triangles_streamer(ctx, lower, upper, options.alg);
        total = ctx.allreduce(count.triangles, reduce_op::sum);
        if (!wrote_count) {  // bale's line before the first time
          report.write_int("triangles", total);
          wrote_count = true;
        }
        return count.seconds;
      },
      [&](std::int64_t) {
        if (correct == -1) {
          correct = total;  // the first style's count is the others' reference
        } else if (total != correct) {
          if (me == 0)
            std::fprintf(stderr, "ERROR: Triangle: total_tri_cnt (%" PRId64 ") != (%" PRId64 ")\n", total, correct);
          status = 1;
        }
      });
  ctx.barrier();
  report.finish();
  return status;
}

}  // namespace transit::apps
