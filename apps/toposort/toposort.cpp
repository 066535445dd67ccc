#include "toposort/toposort.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <utility>

#include "common/bale_timing.hpp"
#include "common/exstack_rounds.hpp"
#include "common/gather.hpp"
#include "randperm/randperm.hpp"

namespace transit::apps {

namespace {

using std::int64_t;

/// The item of the streamer and exchange styles, 16 bytes: a matched column on its way to the
/// column's PE (row == matched_tag; col global, level the matched row's), or an elimination on
/// its way to a row's PE (row local there, col global, level the eliminated column's row's).
struct topo_item {
  int64_t col;
  std::uint32_t row;
  std::uint32_t level;
};
constexpr std::uint32_t matched_tag = std::numeric_limits<std::uint32_t>::max();

/// A column's place in the permutation, on its way to the column's PE (col global).
struct cperm_item {
  int64_t pos;
  int64_t col;
};

std::size_t at(int64_t i) { return static_cast<std::size_t>(i); }

/// Throws std::invalid_argument (the same on every PE: the checks are on global sizes) for
/// matrices or spans the kernels cannot take.
void check_arguments(context& ctx, const sparse_matrix& mat, const sparse_matrix& tmat, std::span<std::int64_t> rperm,
                     std::span<std::int64_t> cperm, const char* kernel) {
  const std::string name(kernel);
  if (mat.numrows != mat.numcols || tmat.numrows != mat.numcols || tmat.numcols != mat.numrows)
    throw std::invalid_argument(name + ": a " + std::to_string(mat.numrows) + " x " + std::to_string(mat.numcols) +
                                " matrix with a " + std::to_string(tmat.numrows) + " x " + std::to_string(tmat.numcols) +
                                " transpose, expected a square matrix and its transpose");
  if (mat.pes != ctx.size() || tmat.pes != ctx.size() || mat.pe != ctx.rank() || tmat.pe != ctx.rank())
    throw std::invalid_argument(name + ": matrices spread over " + std::to_string(mat.pes) + " and " +
                                std::to_string(tmat.pes) + " PEs, expected " + std::to_string(ctx.size()));
  // The items carry local rows and levels in 32 bits (levels are below numrows).
  if (mat.numrows >= int64_t{1} << 32)
    throw std::invalid_argument(name + ": a matrix of " + std::to_string(mat.numrows) + " rows, expected fewer than 2^32");
  const int64_t wrong = ctx.allreduce(
      (rperm.size() != at(mat.lnumrows) || cperm.size() != at(mat.lnumrows)) ? int64_t{1} : int64_t{0}, reduce_op::sum);
  if (wrong != 0)
    throw std::invalid_argument(name + ": permutation parts of the wrong size on " + std::to_string(wrong) +
                                " PEs, expected one entry per local row");
}

/// A row's state, in one 16-byte record so that an elimination touches one cache line: the sum
/// and the count of its columns not yet eliminated, and its level so far.
struct row_state {
  int64_t sum;
  std::uint32_t count;
  std::uint32_t level;
};

/// Each PE's rows as bale's kernels start them: the count and the sum of the columns of each
/// row, the rows with one nonzero queued (level 0), and room for the rest.
struct topo_rows {
  std::vector<row_state> state;
  std::vector<int64_t> matched_col, rowqueue;
  std::size_t rownext = 0;

  explicit topo_rows(const sparse_matrix& mat) : state(at(mat.lnumrows)), matched_col(at(mat.lnumrows)) {
    rowqueue.reserve(at(mat.lnumrows));
    for (int64_t i = 0; i < mat.lnumrows; ++i) {
      int64_t sum = 0;
      for (const int64_t c : mat.row(i)) sum += c;
      state[at(i)] = row_state{sum, static_cast<std::uint32_t>(mat.row_count(i)), 0};
      if (mat.row_count(i) == 1) rowqueue.push_back(i);
    }
  }

  /// An elimination of column `col`, from a row of level `from_level`, arrived at local row
  /// `row`; returns whether the row is now left with one nonzero (bale's rule: its level is
  /// at least one more than from_level; a matched row receives its own column too).
  bool eliminate(std::size_t row, int64_t col, std::uint32_t from_level, int64_t& max_level) {
    row_state& r = state[row];
    r.sum -= col;
    if (from_level + 1 > r.level) {
      r.level = from_level + 1;
      max_level = std::max<int64_t>(max_level, r.level);
    }
    return --r.count == 1;
  }
};

/// Collective: throws std::invalid_argument on every PE when some row was never matched.
void check_all_matched(context& ctx, int64_t matched, int64_t numrows, const char* kernel) {
  const int64_t total = ctx.allreduce(matched, reduce_op::sum);
  if (total != numrows)
    throw std::invalid_argument(std::string(kernel) + ": " + std::to_string(total) + " of " + std::to_string(numrows) +
                                " rows matched, expected a permutation of an upper triangular matrix with unit diagonal");
}

/// Collective: bale's rperm from the levels: rows by level, the highest level first from the
/// last position down (rperm = numrows - 1 - the row's place), within a level PE 0's rows first,
/// each PE's in local order. Returns bale's number of levels (the largest level plus one).
int64_t rperm_from_levels(context& ctx, std::span<const row_state> rows, int64_t max_level, int64_t numrows,
                          std::span<int64_t> rperm) {
  const int64_t num_levels = ctx.allreduce(max_level, reduce_op::max) + 1;
  const auto levels = at(num_levels);
  const auto pes = static_cast<std::size_t>(ctx.size()), me = static_cast<std::size_t>(ctx.rank());
  // Every PE's count per level in one allreduce (bale: a prior_add and a reduce_add per level).
  std::vector<int64_t> counts(pes * levels);
  for (const row_state& r : rows) ++counts[me * levels + r.level];
  ctx.allreduce(std::span<int64_t>(counts), reduce_op::sum);
  std::vector<int64_t> start(levels);
  int64_t total = 0;
  for (std::size_t l = 0; l < levels; ++l) {
    int64_t prior = 0, all = 0;
    for (std::size_t q = 0; q < pes; ++q) {
      if (q < me) prior += counts[q * levels + l];
      all += counts[q * levels + l];
    }
    start[l] = total + prior;
    total += all;
  }
  for (std::size_t i = 0; i < rows.size(); ++i) rperm[i] = (numrows - 1) - start[rows[i].level]++;
  return num_levels;
}

/// Collective, once every row is matched (else throws as check_all_matched): rperm from the
/// levels, and each row's place sent to its column's PE by `send(item, pe)`. Returns bale's
/// number of levels.
template <class Send>
int64_t place_rows(context& ctx, const topo_rows& rows, int64_t matched, int64_t max_level, int64_t numrows,
                   const char* kernel, std::span<int64_t> rperm, Send&& send) {
  check_all_matched(ctx, matched, numrows, kernel);
  const int64_t num_levels = rperm_from_levels(ctx, rows.state, max_level, numrows, rperm);
  const int64_t pes = ctx.size();
  for (std::size_t i = 0; i < rperm.size(); ++i) {
    const int64_t col = rows.matched_col[i];
    send(cperm_item{rperm[i], col}, static_cast<int>(col % pes));
  }
  return num_levels;
}

}  // namespace

toposort_result toposort_streamer(context& ctx, const sparse_matrix& mat, const sparse_matrix& tmat,
                                  std::span<std::int64_t> rperm, std::span<std::int64_t> cperm) {
  check_arguments(ctx, mat, tmat, rperm, cperm, "toposort_streamer");
  const int64_t pes = ctx.size();
  topo_rows rows(mat);
  int64_t max_level = 0, matched = 0;
  streamer<topo_item>* self = nullptr;
  streamer<topo_item> topo(ctx, {}, [&](const topo_item& item) {
    if (item.row == matched_tag) {
      // The column's PE: eliminate the column from each of its rows (tmat's row).
      for (const int64_t r : tmat.row(item.col / pes))
        self->insert(topo_item{item.col, static_cast<std::uint32_t>(r / pes), item.level}, static_cast<int>(r % pes));
      return;
    }
    const std::size_t row = item.row;
    if (rows.eliminate(row, item.col, item.level, max_level)) {
      const int64_t col = rows.state[row].sum;
      rows.matched_col[row] = col;
      ++matched;
      self->insert(topo_item{col, matched_tag, rows.state[row].level}, static_cast<int>(col % pes));
    }
  });
  self = &topo;
  streamer<cperm_item> places(ctx, {}, [&](const cperm_item& item) { cperm[at(item.col / pes)] = item.pos; });

  toposort_result result;
  result.seconds = bale_timed(ctx, [&] {
    for (const int64_t row : rows.rowqueue) {
      const int64_t col = rows.state[at(row)].sum;
      rows.matched_col[at(row)] = col;
      ++matched;
      topo.insert(topo_item{col, matched_tag, 0}, static_cast<int>(col % pes));
    }
    topo.quiesce();
    result.num_levels = place_rows(ctx, rows, matched, max_level, mat.numrows, "toposort_streamer", rperm,
                                   [&](const cperm_item& item, int pe) { places.insert(item, pe); });
    places.finish();
    ctx.barrier();
  });
  return result;
}

toposort_result toposort_exchange(context& ctx, const sparse_matrix& mat, const sparse_matrix& tmat,
                                  std::span<std::int64_t> rperm, std::span<std::int64_t> cperm, std::int64_t buf_cnt) {
  check_arguments(ctx, mat, tmat, rperm, cperm, "toposort_exchange");
  if (buf_cnt < 1) throw std::invalid_argument("toposort_exchange: buf_cnt " + std::to_string(buf_cnt) + ", expected at least 1");
  const int64_t pes = ctx.size(), me = ctx.rank();
  const auto limit = static_cast<std::size_t>(buf_cnt);
  topo_rows rows(mat);
  // The columns matched here, with their rows' levels, and where the current column's
  // eliminations stand (bale's colqueue, colstart, colend).
  std::vector<int64_t> colqueue, colqueue_level;
  colqueue.reserve(at(tmat.lnumrows));
  colqueue_level.reserve(at(tmat.lnumrows));
  std::size_t colnext = 0;
  int64_t colstart = 0, colend = 0, col_level = 0, current_col = 0;
  int64_t max_level = 0, matched = 0;
  sparse_exchange<topo_item> exchange(ctx);
  sparse_exchange<cperm_item> place_exchange(ctx);
  std::vector<std::vector<topo_item>> spare;  // buffers of earlier rounds, for reuse

  toposort_result result;
  result.seconds = bale_timed(ctx, [&] {
    // bale's exstack loop, with work that arrives after a PE has run out of its own (so not
    // exstack_rounds, whose finish() ends the pushing for good): a round pushes the matched
    // columns, then the eliminations, until some destination holds buf_cnt items, exchanges, and
    // applies what arrived; the rounds end when no PE has anything left to push.
    for (;;) {
      std::vector<parcel<topo_item>> out(at(pes));
      for (std::size_t pe = 0; pe < out.size(); ++pe) {
        out[pe].peer = static_cast<int>(pe);
        if (!spare.empty()) {
          out[pe].items = std::move(spare.back());
          spare.pop_back();
        }
      }
      bool full = false;
      while (rows.rownext < rows.rowqueue.size()) {
        const std::size_t row = at(rows.rowqueue[rows.rownext]);
        const int64_t col = rows.state[row].sum;
        auto& items = out[at(col % pes)].items;
        if (items.size() == limit) {
          full = true;
          break;
        }
        items.push_back(topo_item{col, matched_tag, rows.state[row].level});
        rows.matched_col[row] = col;
        ++matched;
        ++rows.rownext;
      }
      while (!full) {
        if (colstart == colend) {
          if (colnext == colqueue.size()) break;
          current_col = colqueue[colnext];
          col_level = colqueue_level[colnext++];
          colstart = tmat.offset[at(current_col)];
          colend = tmat.offset[at(current_col) + 1];
          continue;
        }
        const int64_t r = tmat.nonzero[at(colstart)];
        auto& items = out[at(r % pes)].items;
        if (items.size() == limit) break;
        items.push_back(topo_item{current_col * pes + me, static_cast<std::uint32_t>(r / pes),
                                  static_cast<std::uint32_t>(col_level)});
        ++colstart;
      }
      std::vector<parcel<topo_item>> incoming = exchange.run(std::move(out));
      for (parcel<topo_item>& in : incoming) {
        for (const topo_item& item : in.items) {
          if (item.row == matched_tag) {
            colqueue.push_back(item.col / pes);
            colqueue_level.push_back(item.level);
          } else if (rows.eliminate(item.row, item.col, item.level, max_level)) {
            rows.rowqueue.push_back(item.row);
          }
        }
        in.items.clear();
        spare.push_back(std::move(in.items));
      }
      // New work only comes from what arrives, so once no PE has any left, nothing is in flight.
      const bool busy = rows.rownext < rows.rowqueue.size() || colstart < colend || colnext < colqueue.size();
      if (ctx.allreduce(busy ? int64_t{1} : int64_t{0}, reduce_op::sum) == 0) break;
    }
    auto deliver = [&](const cperm_item& item) { cperm[at(item.col / pes)] = item.pos; };
    exstack_rounds<cperm_item, decltype(deliver)> places(ctx, place_exchange, buf_cnt, deliver);
    result.num_levels = place_rows(ctx, rows, matched, max_level, mat.numrows, "toposort_exchange", rperm,
                                   [&](const cperm_item& item, int pe) { places.push(item, pe); });
    places.finish();
    ctx.barrier();
  });
  return result;
}

toposort_result toposort_global_array(context& ctx, const sparse_matrix& mat, const sparse_matrix& tmat,
                                      std::span<std::int64_t> rperm, std::span<std::int64_t> cperm) {
  check_arguments(ctx, mat, tmat, rperm, cperm, "toposort_global_array");
  const auto pes = static_cast<std::size_t>(ctx.size());
  const auto me = static_cast<std::size_t>(ctx.rank());
  const int64_t nr = mat.numrows;
  // bale's shared arrays are cyclic (entry g on PE g % P at g / P); here each PE's block holds
  // its cyclic part: entry g at slot (g % P) * per_pe + g / P.
  const std::size_t per_pe = at(std::max<int64_t>(cyclic_local_count(nr, 0, ctx.size()), 1));
  const auto slot = [&](int64_t g) { return at(g) % pes * per_pe + at(g) / pes; };
  global_array<int64_t> queue(ctx, pes * per_pe), rowsum(ctx, pes * per_pe), rowcnt(ctx, pes * per_pe);
  global_array<int64_t> rperm_g(ctx, pes * per_pe), cperm_g(ctx, pes * per_pe);
  global_array<int64_t> queue_end(ctx, pes), pivots(ctx, pes);
  // tmat where every PE can read it: its offsets (lnumrows + 1 per PE) and its nonzeros.
  const std::size_t offsets_per_pe = per_pe + 1;
  const std::size_t nonzeros_per_pe = at(std::max<int64_t>(ctx.allreduce(tmat.lnnz, reduce_op::max), 1));
  global_array<int64_t> t_offset(ctx, pes * offsets_per_pe), t_nonzero(ctx, pes * nonzeros_per_pe);
  std::copy(tmat.offset.begin(), tmat.offset.end(), t_offset.local().begin());
  std::copy(tmat.nonzero.begin(), tmat.nonzero.end(), t_nonzero.local().begin());

  std::size_t start = 0, end = 0;
  {
    const std::span<int64_t> lqueue = queue.local(), lsum = rowsum.local(), lcnt = rowcnt.local();
    for (int64_t i = 0; i < mat.lnumrows; ++i) {
      lcnt[at(i)] = mat.row_count(i);
      int64_t sum = 0;
      for (const int64_t c : mat.row(i)) sum += c;
      lsum[at(i)] = sum;
      if (lcnt[at(i)] == 1) lqueue[end++] = i;
    }
    queue_end.local()[0] = static_cast<int64_t>(end);
  }
  ctx.barrier();

  toposort_result result;
  int64_t level = 0;
  std::vector<int64_t> column;
  result.seconds = bale_timed(ctx, [&] {
    int64_t work = ctx.allreduce(static_cast<int64_t>(end - start), reduce_op::sum);
    while (work != 0) {
      ++level;
      while (start < end) {
        const int64_t lrow = queue.local()[start++];
        const int64_t col = rowsum.local()[at(lrow)];  // the row's last column
        const int64_t pos = nr - 1 - pivots.fetch_add(0, 1);
        rperm_g.put(slot(lrow * static_cast<int64_t>(pes) + static_cast<int64_t>(me)), std::span<const int64_t>(&pos, 1));
        cperm_g.put(slot(col), std::span<const int64_t>(&pos, 1));
        // The column's rows: tmat's row `col`, on PE col % P.
        const std::size_t owner = at(col) % pes, lcol = at(col) / pes;
        int64_t bounds[2];
        t_offset.get(owner * offsets_per_pe + lcol, std::span<int64_t>(bounds, 2));
        column.resize(at(bounds[1] - bounds[0]));
        if (!column.empty()) t_nonzero.get(owner * nonzeros_per_pe + at(bounds[0]), std::span<int64_t>(column));
        for (const int64_t r : column) {
          int64_t old_cnt = 0, old_sum = 0;
          request counted = rowcnt.fetch_add_nb(slot(r), -1, &old_cnt);
          request summed = rowsum.fetch_add_nb(slot(r), -col, &old_sum);
          counted.wait();
          summed.wait();
          if (old_cnt == 2) {
            const std::size_t rpe = at(r) % pes;
            const int64_t place = queue_end.fetch_add(rpe, 1);
            const int64_t lr = r / static_cast<int64_t>(pes);
            queue.put(rpe * per_pe + at(place), std::span<const int64_t>(&lr, 1));
          }
        }
      }
      queue.fence();
      ctx.barrier();
      end = at(queue_end.local()[0]);
      work = ctx.allreduce(static_cast<int64_t>(end - start), reduce_op::sum);
    }
    rperm_g.fence();
    cperm_g.fence();
    ctx.barrier();
  });
  const int64_t pivots_taken = ctx.broadcast(me == 0 ? pivots.local()[0] : int64_t{0}, 0);
  if (pivots_taken != nr)
    throw std::invalid_argument("toposort_global_array: " + std::to_string(pivots_taken) + " of " + std::to_string(nr) +
                                " rows matched, expected a permutation of an upper triangular matrix with unit diagonal");
  std::copy_n(rperm_g.local().begin(), rperm.size(), rperm.begin());
  std::copy_n(cperm_g.local().begin(), cperm.size(), cperm.begin());
  result.num_levels = ctx.allreduce(level, reduce_op::max) + 1;
  return result;
}

bool toposort_check(context& ctx, const sparse_matrix& mat, std::span<const std::int64_t> rperm,
                    std::span<const std::int64_t> cperm) {
  const bool rows_ok = is_perm(ctx, rperm, mat.numrows), cols_ok = is_perm(ctx, cperm, mat.numrows);
  if (!rows_ok || !cols_ok) {
    if (ctx.rank() == 0)
      std::fprintf(stderr, "ERROR: check_is_triangle is_perm(rperm) = %d is_perm(cperm) = %d\n", rows_ok ? 1 : 0,
                   cols_ok ? 1 : 0);
    return false;
  }
  // Row i goes to rperm[i] and column c to cperm[c]: the permuted matrix is upper triangular with
  // unit diagonal when each row's columns go to rperm[i] or beyond, one of them to rperm[i]
  // (bale builds the permuted matrix and checks it; the column places gathered say the same).
  const int pes = ctx.size();
  std::vector<cyclic_place> places(mat.nonzero.size());
  for (std::size_t k = 0; k < places.size(); ++k)
    places[k] = cyclic_place{static_cast<int>(mat.nonzero[k] % pes), mat.nonzero[k] / pes};
  std::vector<int64_t> new_col(places.size());
  exchange_gather(ctx, places, cperm, new_col, 1024);
  int64_t bad = 0;
  for (int64_t i = 0; i < mat.lnumrows; ++i) {
    const int64_t new_row = rperm[at(i)];
    int64_t diagonal = 0;
    for (int64_t k = mat.offset[at(i)]; k < mat.offset[at(i) + 1]; ++k) {
      if (new_col[at(k)] < new_row) ++bad;
      if (new_col[at(k)] == new_row) ++diagonal;
    }
    if (diagonal != 1) ++bad;
  }
  if (ctx.allreduce(bad, reduce_op::sum) == 0) return true;
  if (ctx.rank() == 0) std::fprintf(stderr, "ERROR: check_is_triangle fails\n");
  return false;
}

}  // namespace transit::apps
