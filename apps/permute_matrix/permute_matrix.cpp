#include "permute_matrix/permute_matrix.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/bale_styles.hpp"
#include "common/bale_timing.hpp"
#include "common/exstack_rounds.hpp"
#include "common/gather.hpp"
#include "spmat/graph_app.hpp"
#include "spmat/matrix_market.hpp"
#include "randperm/randperm.hpp"

namespace transit::apps {

namespace {

/// Collective: throws on every PE when some PE's parts of the permutations have the wrong length.
void check_perms(context& ctx, const sparse_matrix& a, std::span<const std::int64_t> rperm,
                 std::span<const std::int64_t> cperm, const char* style) {
  const bool mine = static_cast<std::int64_t>(rperm.size()) == cyclic_local_count(a.numrows, ctx.rank(), ctx.size()) &&
                    static_cast<std::int64_t>(cperm.size()) == cyclic_local_count(a.numcols, ctx.rank(), ctx.size());
  if (ctx.allreduce(mine ? 0 : 1, reduce_op::sum) != 0)
    throw std::invalid_argument(std::string(style) + ": a permutation's part has the wrong length on some PE (expected " +
                                "this PE's share of " + std::to_string(a.numrows) + " rows and " +
                                std::to_string(a.numcols) + " columns)");
}

/// Local: each nonzero of `a` with its new row, in a's order, handed to `f(dest PE, entry)`.
template <class F>
void for_each_moved(const sparse_matrix& a, std::span<const std::int64_t> rperm, int pes, F&& f) {
  for (std::int64_t i = 0; i < a.lnumrows; ++i) {
    const std::int64_t row = rperm[static_cast<std::size_t>(i)];
    const auto begin = static_cast<std::size_t>(a.offset[static_cast<std::size_t>(i)]);
    const auto end = static_cast<std::size_t>(a.offset[static_cast<std::size_t>(i) + 1]);
    for (std::size_t j = begin; j < end; ++j)
      f(static_cast<int>(row % pes), matrix_entry{row, a.nonzero[j], a.weighted ? a.value[j] : 0.0});
  }
}

/// Local: the places of `mat`'s columns in the cyclic column permutation.
std::vector<cyclic_place> column_places(const sparse_matrix& mat, int pes) {
  std::vector<cyclic_place> places;
  places.reserve(mat.nonzero.size());
  for (const std::int64_t col : mat.nonzero) places.push_back(cyclic_place_of(col, pes));
  return places;
}

/// Collective: the matrix of the moved nonzeros, with its columns renamed by `rename(places,
/// target)` (a gather of the column permutation) and its rows sorted.
template <class Rename>
sparse_matrix finish_permuted(context& ctx, const sparse_matrix& a, std::span<const matrix_entry> entries, Rename&& rename) {
  sparse_matrix p = matrix_from_entries(a.numrows, a.numcols, ctx.rank(), ctx.size(), a.weighted, entries);
  finish_matrix(ctx, p);
  const std::vector<cyclic_place> places = column_places(p, ctx.size());
  rename(std::span<const cyclic_place>(places), std::span<std::int64_t>(p.nonzero));
  sort_nonzeros(p);
  return p;
}

}  // namespace

sparse_matrix permute_matrix_exchange(context& ctx, const sparse_matrix& a, std::span<const std::int64_t> rperm,
                                      std::span<const std::int64_t> cperm, std::int64_t buf_cnt) {
  check_perms(ctx, a, rperm, cperm, "permute_matrix_exchange");
  if (buf_cnt < 1) throw std::invalid_argument("permute_matrix_exchange: buf_cnt " + std::to_string(buf_cnt) + ", expected >= 1");
  std::vector<matrix_entry> arrived;
  sparse_exchange<matrix_entry> exchange(ctx, exstack_exchange_options());
  exstack_rounds rounds(ctx, exchange, buf_cnt, [&arrived](const matrix_entry& e) { arrived.push_back(e); });
  for_each_moved(a, rperm, ctx.size(), [&rounds](int pe, const matrix_entry& e) { rounds.push(e, pe); });
  rounds.finish();
  return finish_permuted(ctx, a, arrived, [&](std::span<const cyclic_place> places, std::span<std::int64_t> target) {
    exchange_gather(ctx, places, cperm, target, buf_cnt);
  });
}

sparse_matrix permute_matrix_streamer(context& ctx, const sparse_matrix& a, std::span<const std::int64_t> rperm,
                                      std::span<const std::int64_t> cperm) {
  check_perms(ctx, a, rperm, cperm, "permute_matrix_streamer");
  std::vector<matrix_entry> arrived;
  {
    streamer<matrix_entry> moves(ctx, {}, [&arrived](const matrix_entry& e) { arrived.push_back(e); });
    for_each_moved(a, rperm, ctx.size(), [&](int pe, const matrix_entry& e) { moves.insert(e, pe); });
    moves.finish();
  }
  streamer_gather gather(ctx, cperm);
  return finish_permuted(ctx, a, arrived, [&](std::span<const cyclic_place> places, std::span<std::int64_t> target) {
    gather.run(places, target);
  });
}

sparse_matrix permute_matrix_global_array(context& ctx, const sparse_matrix& a, std::span<const std::int64_t> rperm,
                                          std::span<const std::int64_t> cperm) {
  check_perms(ctx, a, rperm, cperm, "permute_matrix_global_array");
  const int pes = ctx.size(), me = ctx.rank();
  const auto rows = static_cast<std::size_t>(a.numrows);
  // bale's SHARED arrays, cyclic like the rows; the nonzeros in blocks of the largest lnnz, PE p's
  // block holding PE p's.
  const auto nz_block = std::max<std::size_t>(static_cast<std::size_t>(ctx.allreduce(a.lnnz, reduce_op::max)), 1);
  global_array<std::int64_t> old_row(ctx, rows, array_layout::cyclic);  // bale's rperminv
  global_array<std::int64_t> starts(ctx, rows, array_layout::cyclic), counts(ctx, rows, array_layout::cyclic);
  global_array<std::int64_t> nonzeros(ctx, nz_block * static_cast<std::size_t>(pes));
  std::optional<global_array<double>> values;
  if (a.weighted) values.emplace(ctx, nz_block * static_cast<std::size_t>(pes));
  global_array<std::int64_t> col_perm(ctx, static_cast<std::size_t>(a.numcols), array_layout::cyclic);
  for (std::int64_t i = 0; i < a.lnumrows; ++i) {
    starts.local()[static_cast<std::size_t>(i)] = a.offset[static_cast<std::size_t>(i)];
    counts.local()[static_cast<std::size_t>(i)] = a.row_count(i);
  }
  std::copy(a.nonzero.begin(), a.nonzero.end(), nonzeros.local().begin());
  if (values) std::copy(a.value.begin(), a.value.end(), values->local().begin());
  std::copy(cperm.begin(), cperm.end(), col_perm.local().begin());
  {
    const std::vector<std::uint64_t> to(rperm.begin(), rperm.end());
    std::vector<std::int64_t> from(static_cast<std::size_t>(a.lnumrows));
    for (std::int64_t i = 0; i < a.lnumrows; ++i) from[static_cast<std::size_t>(i)] = a.global_row(i);
    old_row.put(to, from);
  }
  old_row.sync();

  // Each new row's old row: its start and count on its PE, then its nonzeros (and values).
  const std::vector<std::uint64_t> old(old_row.local().begin(), old_row.local().end());
  std::vector<std::int64_t> start(old.size()), count(old.size());
  starts.get_nb(old, start).wait();
  counts.get_nb(old, count).wait();
  sparse_matrix p = make_matrix(a.numrows, a.numcols, me, pes, a.weighted);
  std::vector<region> rows_at;
  rows_at.reserve(old.size());
  for (std::size_t i = 0; i < old.size(); ++i) {
    rows_at.push_back({(old[i] % static_cast<std::uint64_t>(pes)) * nz_block + static_cast<std::size_t>(start[i]),
                       static_cast<std::size_t>(count[i])});
    p.offset[i + 1] = p.offset[i] + count[i];
  }
  p.nonzero.resize(static_cast<std::size_t>(p.offset.back()));
  nonzeros.get_regions(rows_at, p.nonzero);
  if (values) {
    p.value.resize(p.nonzero.size());
    values->get_regions(rows_at, p.value);
  }
  finish_matrix(ctx, p);
  const std::vector<std::uint64_t> columns(p.nonzero.begin(), p.nonzero.end());
  global_array_gather(col_perm, columns, p.nonzero);
  ctx.barrier();  // every PE's gets served before the arrays go
  sort_nonzeros(p);
  return p;
}

namespace {

/// Collective: `a` permuted on one PE (gathered, permuted, dealt out again): the reference the
/// styles are checked against for small matrices.
sparse_matrix permute_reference(context& ctx, const sparse_matrix& a, std::span<const std::int64_t> rperm,
                                std::span<const std::int64_t> cperm) {
  const int pes = ctx.size(), me = ctx.rank();
  const auto whole = [&](std::span<const std::int64_t> part, std::int64_t n) {
    std::vector<std::int64_t> all(static_cast<std::size_t>(n), 0);
    for (std::size_t i = 0; i < part.size(); ++i) all[i * static_cast<std::size_t>(pes) + static_cast<std::size_t>(me)] = part[i];
    ctx.allreduce(std::span<std::int64_t>(all), reduce_op::sum);
    return all;
  };
  const std::vector<std::int64_t> r = whole(rperm, a.numrows), c = whole(cperm, a.numcols);
  const sparse_matrix local = gather_matrix(ctx, a);
  std::vector<matrix_entry> entries;
  for (std::int64_t i = 0; i < local.lnumrows; ++i) {
    const auto begin = static_cast<std::size_t>(local.offset[static_cast<std::size_t>(i)]);
    const auto end = static_cast<std::size_t>(local.offset[static_cast<std::size_t>(i) + 1]);
    for (std::size_t j = begin; j < end; ++j)
      entries.push_back({r[static_cast<std::size_t>(i)], c[static_cast<std::size_t>(local.nonzero[j])],
                         local.weighted ? local.value[j] : 0.0});
  }
  sparse_matrix p = matrix_from_entries(local.numrows, local.numcols, 0, 1, local.weighted, entries);
  p.nnz = p.lnnz;
  sort_nonzeros(p);
  return distribute_local(p, me, pes);
}

/// PE 0 writes a permutation one entry a line, as bale's -D does.
void dump_perm(context& ctx, std::span<const std::int64_t> part, std::int64_t n, const char* path) {
  const int pes = ctx.size(), me = ctx.rank();
  std::vector<std::int64_t> all(static_cast<std::size_t>(n), 0);
  for (std::size_t i = 0; i < part.size(); ++i) all[i * static_cast<std::size_t>(pes) + static_cast<std::size_t>(me)] = part[i];
  ctx.allreduce(std::span<std::int64_t>(all), reduce_op::sum);
  if (me != 0) return;
  std::FILE* file = std::fopen(path, "w");
  if (file == nullptr) throw input_error(std::string("-D: got '") + path + "', expected a file that can be written");
  for (const std::int64_t v : all) std::fprintf(file, "%" PRId64 "\n", v);
  std::fclose(file);
}

}  // namespace

int permute_matrix_main(context& ctx, const permute_matrix_options& options, const std::string& command_line) {
  const int me = ctx.rank();
  const bale_graph_options graph = resolve_graph_options(options.graph, ctx.size());
  bale_report report(ctx, options.std, "permute_matrix", command_line);
  if (!report.opened()) return 2;
  std::optional<sparse_matrix> input =
      graph_app_input(ctx, report, options.std, graph, "permute_matrix_inmat", [](const sparse_matrix&) {});
  if (!input) return 2;
  const sparse_matrix& in = *input;
  // bale's permutations: rand_permp with the same seed on every PE.
  const std::vector<std::int64_t> rperm = rand_perm(ctx, in.numrows, options.std.seed);
  const std::vector<std::int64_t> cperm = rand_perm(ctx, in.numcols, options.std.seed + 12345);
  int failed_io = 0;
  if (options.std.dump_files) {
    try {
      dump_perm(ctx, rperm, in.numrows, "permute_matrix_rperm");
      dump_perm(ctx, cperm, in.numcols, "permute_matrix_cperm");
    } catch (const input_error& e) {
      if (me == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
      failed_io = 1;
    }
    if (ctx.allreduce(failed_io, reduce_op::max) != 0) return 2;
  }

  // The one-PE reference, for inputs small enough to gather on every PE.
  constexpr std::int64_t reference_limit = 1 << 20;
  std::optional<sparse_matrix> reference;
  if (in.nnz <= reference_limit) reference = permute_reference(ctx, in, rperm, cperm);

  std::optional<sparse_matrix> first;  // bale checks every style against the first one run
  sparse_matrix out;
  std::int64_t errors = 0;
  bale_run_styles(
      ctx, report, options.std, -1.0,
      [&](std::int64_t bit) {
        return bale_timed(ctx, [&] {
          if (bit == agp_style) out = permute_matrix_global_array(ctx, in, rperm, cperm);
          else if (bit == exstack_style) out = permute_matrix_exchange(ctx, in, rperm, cperm, options.std.buf_cnt);
          else out = permute_matrix_streamer(ctx, in, rperm, cperm);
        });
      },
      [&](std::int64_t bit) {
        if (first) {
          if (!compare_matrix(ctx, *first, out)) {
            if (me == 0) std::fprintf(stderr, "ERROR: permute_matrix does not match!\n");
            ++errors;
          }
          return;
        }
        first = std::move(out);
        if (reference && !compare_matrix(ctx, *first, *reference)) {
          if (me == 0) std::fprintf(stderr, "ERROR: style %" PRId64 ": the permuted matrix is not the one-PE reference!\n", bit);
          ++errors;
        }
      });
  if (options.std.dump_files && first) {
    try {
      write_matrix_mm(ctx, *first, "permute_matrix_outmat");
    } catch (const input_error& e) {
      if (me == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
      return 2;
    }
  }
  report.finish();
  return errors == 0 ? 0 : 1;
}

}  // namespace transit::apps
