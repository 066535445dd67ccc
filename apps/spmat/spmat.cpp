#include "spmat/spmat.hpp"

#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <utility>

namespace transit::apps {

namespace {

/// bale's spmat_are_eq_doubles, the right way round: true when a and b are close enough.
bool close_enough(double a, double b) {
  if (a == 0.0) return std::fabs(b) < 1e-8;
  return std::fabs(a - b) / std::fabs(a) < FLT_EPSILON;
}

/// The kept nonzeros of a filter over each row (tril / triu), in place; returns how many stayed.
template <class Keep>
std::int64_t filter_rows(sparse_matrix& mat, Keep keep) {
  std::int64_t pos = 0, start = 0;
  for (std::int64_t i = 0; i < mat.lnumrows; ++i) {
    const std::int64_t row = mat.global_row(i);
    const std::int64_t end = mat.offset[static_cast<std::size_t>(i) + 1];
    for (std::int64_t j = start; j < end; ++j) {
      const std::int64_t col = mat.nonzero[static_cast<std::size_t>(j)];
      if (!keep(row, col)) continue;
      mat.nonzero[static_cast<std::size_t>(pos)] = col;
      if (mat.weighted) mat.value[static_cast<std::size_t>(pos)] = mat.value[static_cast<std::size_t>(j)];
      ++pos;
    }
    start = end;
    mat.offset[static_cast<std::size_t>(i) + 1] = pos;
  }
  mat.nonzero.resize(static_cast<std::size_t>(pos));
  if (mat.weighted) mat.value.resize(static_cast<std::size_t>(pos));
  return pos;
}

/// Counts (above or below the diagonal, missing diagonals) for the triangular checks.
template <class Wrong>
bool triangular(context& ctx, const sparse_matrix& mat, bool unit_diagonal, Wrong wrong, const char* where) {
  std::int64_t err[2] = {0, 0};
  for (std::int64_t i = 0; i < mat.lnumrows; ++i) {
    const std::int64_t row = mat.global_row(i);
    bool pivot = false;
    for (const std::int64_t col : mat.row(i)) {
      if (wrong(row, col)) ++err[0];
      else if (col == row) pivot = true;
    }
    if (!pivot) ++err[1];
  }
  ctx.allreduce(std::span<std::int64_t>(err), reduce_op::sum);
  if (!unit_diagonal) err[1] = 0;
  if ((err[0] != 0 || err[1] != 0) && ctx.rank() == 0 && where != nullptr)
    std::printf("\nThere are %" PRId64 " nz %s diag. and %" PRId64 " missing pivots.\n", err[0], where, err[1]);
  return err[0] == 0 && err[1] == 0;
}

}  // namespace

sparse_matrix matrix_from_entries(std::int64_t numrows, std::int64_t numcols, int pe, int pes, bool weighted,
                                  std::span<const matrix_entry> entries) {
  sparse_matrix mat = make_matrix(numrows, numcols, pe, pes, weighted);
  for (const matrix_entry& e : entries) {
    if (e.row < 0 || e.row >= numrows || e.row % pes != pe || e.col < 0 || e.col >= numcols)
      throw std::invalid_argument("matrix_from_entries: entry (" + std::to_string(e.row) + ", " + std::to_string(e.col) +
                                  ") is not in PE " + std::to_string(pe) + "'s rows of the " + std::to_string(numrows) +
                                  " x " + std::to_string(numcols) + " matrix");
    ++mat.offset[static_cast<std::size_t>(e.row / pes) + 1];
  }
  std::partial_sum(mat.offset.begin(), mat.offset.end(), mat.offset.begin());
  std::vector<std::int64_t> next(mat.offset.begin(), mat.offset.end() - 1);
  mat.nonzero.assign(entries.size(), 0);
  if (weighted) mat.value.assign(entries.size(), 0.0);
  for (const matrix_entry& e : entries) {
    const auto slot = static_cast<std::size_t>(next[static_cast<std::size_t>(e.row / pes)]++);
    mat.nonzero[slot] = e.col;
    if (weighted) mat.value[slot] = e.val;
  }
  mat.lnnz = static_cast<std::int64_t>(entries.size());
  return mat;
}

sparse_matrix make_matrix(std::int64_t numrows, std::int64_t numcols, int pe, int pes, bool weighted,
                          std::int64_t lnnz_reserve) {
  if (numrows < 0 || numcols < 0 || lnnz_reserve < 0)
    throw std::invalid_argument("make_matrix: negative size (numrows " + std::to_string(numrows) + ", numcols " +
                                std::to_string(numcols) + ")");
  if (pes < 1 || pe < 0 || pe >= pes)
    throw std::invalid_argument("make_matrix: PE " + std::to_string(pe) + " outside [0, " + std::to_string(pes) + ")");
  sparse_matrix mat;
  mat.numrows = numrows;
  mat.numcols = numcols;
  mat.lnumrows = cyclic_local_count(numrows, pe, pes);
  mat.pe = pe;
  mat.pes = pes;
  mat.weighted = weighted;
  mat.offset.assign(static_cast<std::size_t>(mat.lnumrows) + 1, 0);
  mat.nonzero.reserve(static_cast<std::size_t>(lnnz_reserve));
  if (weighted) mat.value.reserve(static_cast<std::size_t>(lnnz_reserve));
  return mat;
}

void finish_matrix(context& ctx, sparse_matrix& mat) {
  const auto count = static_cast<std::size_t>(mat.offset.back());
  if (mat.offset.size() != static_cast<std::size_t>(mat.lnumrows) + 1 || mat.offset.front() != 0 ||
      mat.nonzero.size() != count || (mat.weighted && mat.value.size() != count) ||
      (!mat.weighted && !mat.value.empty()))
    throw std::logic_error("finish_matrix: offsets, nonzeros and values disagree");
  mat.lnnz = static_cast<std::int64_t>(count);
  mat.nnz = ctx.allreduce(mat.lnnz, reduce_op::sum);
}

void sort_nonzeros(sparse_matrix& mat) {
  if (!mat.weighted) {
    for (std::int64_t i = 0; i < mat.lnumrows; ++i)
      std::sort(mat.nonzero.begin() + mat.offset[static_cast<std::size_t>(i)],
                mat.nonzero.begin() + mat.offset[static_cast<std::size_t>(i) + 1]);
    return;
  }
  std::vector<std::pair<std::int64_t, double>> row;
  for (std::int64_t i = 0; i < mat.lnumrows; ++i) {
    const auto begin = static_cast<std::size_t>(mat.offset[static_cast<std::size_t>(i)]);
    const auto end = static_cast<std::size_t>(mat.offset[static_cast<std::size_t>(i) + 1]);
    row.clear();
    for (std::size_t j = begin; j < end; ++j) row.emplace_back(mat.nonzero[j], mat.value[j]);
    // Stable on the column alone: equal columns (only in files) keep their order and values.
    std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t j = begin; j < end; ++j) {
      mat.nonzero[j] = row[j - begin].first;
      mat.value[j] = row[j - begin].second;
    }
  }
}

std::int64_t tril(context& ctx, sparse_matrix& mat, std::int64_t k) {
  filter_rows(mat, [k](std::int64_t row, std::int64_t col) { return col - row <= k; });
  const std::int64_t before = mat.nnz;
  finish_matrix(ctx, mat);
  return before - mat.nnz;
}

std::int64_t triu(context& ctx, sparse_matrix& mat, std::int64_t k) {
  filter_rows(mat, [k](std::int64_t row, std::int64_t col) { return col - row >= k; });
  const std::int64_t before = mat.nnz;
  finish_matrix(ctx, mat);
  return before - mat.nnz;
}

bool is_lower_triangular(context& ctx, const sparse_matrix& mat, bool unit_diagonal) {
  return triangular(ctx, mat, unit_diagonal, [](std::int64_t row, std::int64_t col) { return col > row; }, "above");
}

bool is_upper_triangular(context& ctx, const sparse_matrix& mat, bool unit_diagonal) {
  // bale's is_upper_triangular prints nothing (its message is commented out).
  return triangular(ctx, mat, unit_diagonal, [](std::int64_t row, std::int64_t col) { return col < row; }, nullptr);
}

bool compare_matrix(context& ctx, const sparse_matrix& l, const sparse_matrix& r) {
  const int me = ctx.rank();
  auto differ = [&]() -> bool {
    if (l.numrows != r.numrows) {
      std::fprintf(stderr, "PE %d: lmat->numrows = %" PRId64 " != rmat->numrows = %" PRId64 "\n", me, l.numrows, r.numrows);
      return true;
    }
    if (l.lnumrows != r.lnumrows) {
      std::fprintf(stderr, "PE %d: lmat->lnumrows = %" PRId64 " != rmat->lnumrows = %" PRId64 "\n", me, l.lnumrows,
                   r.lnumrows);
      return true;
    }
    if (l.numcols != r.numcols) {
      std::fprintf(stderr, "lmat->numcols = %" PRId64 " != rmat->numcols = %" PRId64 "\n", l.numcols, r.numcols);
      return true;
    }
    if (l.nnz != r.nnz) {
      std::fprintf(stderr, "lmat->nnz = %" PRId64 " != rmat->nnz = %" PRId64 "\n", l.nnz, r.nnz);
      return true;
    }
    if (l.lnnz != r.lnnz) {
      std::fprintf(stderr, "PE %d: lmat->lnnz = %" PRId64 " != rmat->lnnz = %" PRId64 "\n", me, l.lnnz, r.lnnz);
      return true;
    }
    for (std::size_t i = 0; i < l.offset.size(); ++i) {
      if (l.offset[i] != r.offset[i]) {
        std::fprintf(stderr, "PE %d: lmat->loffset[%zu] = %" PRId64 " != rmat->loffset[%zu] = %" PRId64 "\n", me, i,
                     l.offset[i], i, r.offset[i]);
        return true;
      }
    }
    for (std::size_t j = 0; j < l.nonzero.size(); ++j) {
      if (l.nonzero[j] != r.nonzero[j]) {
        std::fprintf(stderr, "PE %d: lmat->lnonzero[%zu] = %" PRId64 " != rmat->lnonzero[%zu] = %" PRId64 "\n", me, j,
                     l.nonzero[j], j, r.nonzero[j]);
        return true;
      }
    }
    if (l.weighted != r.weighted) {
      std::fprintf(stderr, "ERROR: compare_matrix: both matrices need to be weighted or unweighted\n");
      return true;
    }
    for (std::size_t j = 0; j < l.value.size(); ++j) {
      if (!close_enough(l.value[j], r.value[j])) {
        std::fprintf(stderr, "PE %d: lmat->lvalue[%zu] = %lf != rmat->lvalue[%zu] = %lf\n", me, j, l.value[j], j,
                     r.value[j]);
        return true;
      }
    }
    return false;
  };
  return ctx.allreduce(differ() ? 1 : 0, reduce_op::max) == 0;
}

sparse_matrix direct_undirected_graph(context& ctx, const sparse_matrix& lower, knuth_ranf& rng) {
  const int pes = ctx.size();
  std::vector<matrix_entry> mine;
  std::vector<parcel<matrix_entry>> outgoing(static_cast<std::size_t>(pes));
  for (int pe = 0; pe < pes; ++pe) outgoing[static_cast<std::size_t>(pe)].peer = pe;
  // bale pushes the flipped edges through an exstack of 128 items per destination; a push into
  // a full buffer fails, ends the round, and the same edge is drawn for again in the next round.
  // The draws are what must match, so the rounds are counted here, and everything is sent at once.
  constexpr std::int64_t round_capacity = 128;
  std::vector<std::int64_t> in_round(static_cast<std::size_t>(pes), 0);
  std::int64_t lrow = 0;
  for (std::int64_t i = 0; i < lower.lnnz;) {
    while (lrow < lower.lnumrows && i >= lower.offset[static_cast<std::size_t>(lrow) + 1]) ++lrow;
    const std::int64_t row = lower.global_row(lrow);
    const std::int64_t col = lower.nonzero[static_cast<std::size_t>(i)];
    const double val = lower.weighted ? lower.value[static_cast<std::size_t>(i)] : 0.0;
    if (rng.next_double() < 0.5) {
      mine.push_back({row, col, val});
      ++i;
      continue;
    }
    const auto dest = static_cast<std::size_t>(col % pes);
    if (in_round[dest] == round_capacity) {  // bale's failed push: a new round, the draw is lost
      std::fill(in_round.begin(), in_round.end(), 0);
      continue;
    }
    ++in_round[dest];
    outgoing[dest].items.push_back({col, row, val});
    ++i;
  }
  sparse_exchange<matrix_entry> exchange(ctx);
  for (const auto& in : exchange.run(std::move(outgoing))) mine.insert(mine.end(), in.items.begin(), in.items.end());
  sparse_matrix a = matrix_from_entries(lower.numrows, lower.numcols, ctx.rank(), pes, lower.weighted, mine);
  sort_nonzeros(a);
  finish_matrix(ctx, a);
  return a;
}

sparse_matrix transpose_local(const sparse_matrix& m) {
  if (m.pes != 1) throw std::invalid_argument("transpose_local: the matrix is spread over " + std::to_string(m.pes) + " PEs, expected a local one");
  sparse_matrix t = make_matrix(m.numcols, m.numrows, 0, 1, m.weighted);
  for (const std::int64_t col : m.nonzero) ++t.offset[static_cast<std::size_t>(col) + 1];
  std::partial_sum(t.offset.begin(), t.offset.end(), t.offset.begin());
  std::vector<std::int64_t> next(t.offset.begin(), t.offset.end() - 1);
  t.nonzero.assign(m.nonzero.size(), 0);
  if (m.weighted) t.value.assign(m.nonzero.size(), 0.0);
  for (std::int64_t row = 0; row < m.lnumrows; ++row) {  // rows ascending: the result is tidy
    for (std::int64_t j = m.offset[static_cast<std::size_t>(row)]; j < m.offset[static_cast<std::size_t>(row) + 1]; ++j) {
      const auto slot = static_cast<std::size_t>(next[static_cast<std::size_t>(m.nonzero[static_cast<std::size_t>(j)])]++);
      t.nonzero[slot] = row;
      if (m.weighted) t.value[slot] = m.value[static_cast<std::size_t>(j)];
    }
  }
  t.lnnz = t.nnz = static_cast<std::int64_t>(t.nonzero.size());
  return t;
}

sparse_matrix gather_matrix(context& ctx, const sparse_matrix& mat) {
  std::vector<matrix_entry> rows;
  rows.reserve(mat.nonzero.size());
  for (std::int64_t i = 0; i < mat.lnumrows; ++i)
    for (std::int64_t j = mat.offset[static_cast<std::size_t>(i)]; j < mat.offset[static_cast<std::size_t>(i) + 1]; ++j)
      rows.push_back({mat.global_row(i), mat.nonzero[static_cast<std::size_t>(j)],
                      mat.weighted ? mat.value[static_cast<std::size_t>(j)] : 0.0});
  std::vector<parcel<matrix_entry>> outgoing;
  for (int pe = 0; pe < ctx.size(); ++pe) outgoing.push_back({pe, rows});
  sparse_exchange<matrix_entry> exchange(ctx);
  std::vector<matrix_entry> all;
  for (const auto& in : exchange.run(std::move(outgoing))) all.insert(all.end(), in.items.begin(), in.items.end());
  sparse_matrix whole = matrix_from_entries(mat.numrows, mat.numcols, 0, 1, mat.weighted, all);
  whole.nnz = whole.lnnz;
  return whole;
}

sparse_matrix distribute_local(const sparse_matrix& local, int pe, int pes) {
  sparse_matrix part = make_matrix(local.numrows, local.numcols, pe, pes, local.weighted);
  for (std::int64_t i = 0; i < part.lnumrows; ++i) {
    const std::int64_t row = part.global_row(i);
    const auto begin = static_cast<std::size_t>(local.offset[static_cast<std::size_t>(row)]);
    const auto end = static_cast<std::size_t>(local.offset[static_cast<std::size_t>(row) + 1]);
    part.nonzero.insert(part.nonzero.end(), local.nonzero.begin() + static_cast<std::ptrdiff_t>(begin),
                        local.nonzero.begin() + static_cast<std::ptrdiff_t>(end));
    if (local.weighted)
      part.value.insert(part.value.end(), local.value.begin() + static_cast<std::ptrdiff_t>(begin),
                        local.value.begin() + static_cast<std::ptrdiff_t>(end));
    part.offset[static_cast<std::size_t>(i) + 1] = static_cast<std::int64_t>(part.nonzero.size());
  }
  part.lnnz = static_cast<std::int64_t>(part.nonzero.size());
  part.nnz = local.nnz;
  return part;
}

std::uint64_t spmat_hash(std::int64_t row, std::int64_t col) {
  std::uint64_t z = (static_cast<std::uint64_t>(row) << 32) + static_cast<std::uint64_t>(col);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

matrix_checksum_t matrix_checksum(context& ctx, const sparse_matrix& mat) {
  std::uint64_t structure = 0;
  double values = 0;
  for (std::int64_t i = 0; i < mat.lnumrows; ++i) {
    const std::int64_t row = mat.global_row(i);
    for (const std::int64_t col : mat.row(i)) structure += spmat_hash(row, col);
  }
  for (const double v : mat.value) values += v;
  matrix_checksum_t sum;
  sum.structure = ctx.allreduce(structure, reduce_op::sum);
  sum.nnz = ctx.allreduce(mat.lnnz, reduce_op::sum);
  sum.value_sum = ctx.allreduce(values, reduce_op::sum);
  return sum;
}

}  // namespace transit::apps
