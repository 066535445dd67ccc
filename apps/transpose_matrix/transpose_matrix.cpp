#include "transpose_matrix/transpose_matrix.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "common/bale_timing.hpp"
#include "common/exstack_rounds.hpp"
#include "spmat/graph_app.hpp"
#include "common/styles.hpp"
#include "spmat/matrix_market.hpp"

namespace transit::apps {

namespace {

/// A nonzero on its way to the PE that holds its column as a row: A's global row, the column's
/// local row there, and (weighted) the value. Two layouts so that a pattern matrix sends 16 bytes.
struct edge_item {
  std::int64_t row;
  std::int64_t lcol;
};
struct weighted_item {
  std::int64_t row;
  std::int64_t lcol;
  double val;
};

/// At's shape on this PE from its column counts: offsets, room for the nonzeros, nnz = A's.
void shape_transpose(context& ctx, const sparse_matrix& a, const std::vector<std::int64_t>& counts, sparse_matrix& at) {
  at = make_matrix(a.numcols, a.numrows, ctx.rank(), ctx.size(), a.weighted);
  for (std::size_t i = 0; i < counts.size(); ++i) at.offset[i + 1] = at.offset[i] + counts[i];
  at.lnnz = at.offset.back();
  at.nonzero.resize(static_cast<std::size_t>(at.lnnz));
  if (a.weighted) at.value.resize(static_cast<std::size_t>(at.lnnz));
  at.nnz = a.nnz;
}

/// bale's closing check: every nonzero arrived and each row got what its count said.
void check_filled(context& ctx, const sparse_matrix& a, const sparse_matrix& at, const std::vector<std::int64_t>& next) {
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < next.size(); ++i) bad += next[i] != at.offset[i + 1] ? 1 : 0;
  if (ctx.allreduce(bad, reduce_op::sum) != 0 || ctx.allreduce(at.lnnz, reduce_op::sum) != a.nnz)
    throw std::logic_error("transpose_matrix: the nonzeros that arrived do not match the column counts");
}

/// What arrives on a PE, kept in buckets of 2^bucket_shift consecutive new rows as it arrives:
/// placing a bucket then writes one short stretch of At's nonzeros (in cache) instead of
/// scattering every item over all of them.
template <class Item>
class arrivals {
 public:
  static constexpr int bucket_shift = 12;
  arrivals(std::int64_t rows, std::int64_t expected)
      : buckets_(static_cast<std::size_t>((rows >> bucket_shift) + 1)) {
    for (auto& b : buckets_) b.reserve(static_cast<std::size_t>(expected) / buckets_.size() + 16);
  }
  void add(const Item& e) { buckets_[static_cast<std::size_t>(e.lcol >> bucket_shift)].push_back(e); }
  const std::vector<std::vector<Item>>& buckets() const { return buckets_; }

 private:
  std::vector<std::vector<Item>> buckets_;
};

/// Local: At from the items that arrived here, in arrival order within each new row (a stable
/// counting sort by the item's local column, bucket after bucket).
template <class Item>
void place_arrived(context& ctx, const sparse_matrix& a, const arrivals<Item>& arrived, sparse_matrix& at) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(cyclic_local_count(a.numcols, ctx.rank(), ctx.size())), 0);
  for (const auto& bucket : arrived.buckets())
    for (const Item& e : bucket) ++counts[static_cast<std::size_t>(e.lcol)];
  shape_transpose(ctx, a, counts, at);
  std::vector<std::int64_t> next(at.offset.begin(), at.offset.end() - 1);
  std::int64_t* place = next.data();
  std::int64_t* nz = at.nonzero.data();
  double* val = at.value.data();
  for (const auto& bucket : arrived.buckets()) {
    for (const Item& e : bucket) {
      const std::int64_t slot = place[e.lcol]++;
      nz[slot] = e.row;
      if constexpr (std::is_same_v<Item, weighted_item>) val[slot] = e.val;
    }
  }
  check_filled(ctx, a, at, next);
}

/// Local: calls send(item, dest) for each nonzero of A, in storage order.
template <class Item, class Send>
void for_each_item(const sparse_matrix& a, int pes, Send&& send) {
  for (std::int64_t i = 0; i < a.lnumrows; ++i) {
    const std::int64_t row = a.global_row(i);
    for (std::int64_t j = a.offset[static_cast<std::size_t>(i)]; j < a.offset[static_cast<std::size_t>(i) + 1]; ++j) {
      const std::int64_t col = a.nonzero[static_cast<std::size_t>(j)];
      if constexpr (std::is_same_v<Item, weighted_item>)
        send(Item{row, col / pes, a.value[static_cast<std::size_t>(j)]}, static_cast<int>(col % pes));
      else
        send(Item{row, col / pes}, static_cast<int>(col % pes));
    }
  }
}

template <class Item>
void transpose_by_streamer(context& ctx, const sparse_matrix& a, sparse_matrix& at) {
  // About what arrives in a square matrix: as much as leaves.
  arrivals<Item> arrived(cyclic_local_count(a.numcols, ctx.rank(), ctx.size()), a.lnnz);
  {
    streamer<Item> stream(ctx, {}, [&arrived](const Item& e) { arrived.add(e); });
    for_each_item<Item>(a, ctx.size(), [&stream](const Item& e, int dest) { stream.insert(e, dest); });
    stream.finish();
  }
  place_arrived(ctx, a, arrived, at);
}

template <class Item>
void transpose_by_exchange(context& ctx, const sparse_matrix& a, sparse_matrix& at, std::int64_t buf_cnt) {
  arrivals<Item> arrived(cyclic_local_count(a.numcols, ctx.rank(), ctx.size()), a.lnnz);
  sparse_exchange<Item> exchange(ctx);
  exstack_rounds rounds(ctx, exchange, buf_cnt, [&arrived](const Item& e) { arrived.add(e); });
  for_each_item<Item>(a, ctx.size(), [&rounds](const Item& e, int dest) { rounds.push(e, dest); });
  rounds.finish();
  place_arrived(ctx, a, arrived, at);
}

}  // namespace

double transpose_streamer(context& ctx, const sparse_matrix& a, sparse_matrix& at) {
  return bale_timed(ctx, [&] {
    if (a.weighted) transpose_by_streamer<weighted_item>(ctx, a, at);
    else transpose_by_streamer<edge_item>(ctx, a, at);
    ctx.barrier();
  });
}

double transpose_exchange(context& ctx, const sparse_matrix& a, sparse_matrix& at, std::int64_t buf_cnt) {
  return bale_timed(ctx, [&] {
    if (a.weighted) transpose_by_exchange<weighted_item>(ctx, a, at, buf_cnt);
    else transpose_by_exchange<edge_item>(ctx, a, at, buf_cnt);
    ctx.barrier();
  });
}

double transpose_global_array(context& ctx, const sparse_matrix& a, sparse_matrix& at) {
  const int pes = ctx.size(), me = ctx.rank();
  // bale's cyclic arrays as blocks of `per_pe` (the most any PE holds): PE p's block is its part.
  const auto per_pe_cols = static_cast<std::size_t>(cyclic_local_count(a.numcols, 0, pes));
  auto slot = [pes](std::int64_t index, std::size_t per_pe) {
    return static_cast<std::size_t>(index % pes) * per_pe + static_cast<std::size_t>(index / pes);
  };
  return bale_timed(ctx, [&] {
    global_array<std::int64_t> place(ctx, per_pe_cols * static_cast<std::size_t>(pes));
    const std::int64_t one = 1;
    for (const std::int64_t col : a.nonzero) place.accumulate(slot(col, per_pe_cols), std::span<const std::int64_t>(&one, 1), reduce_op::sum);
    place.sync();
    const std::span<std::int64_t> mine = place.local();
    const std::vector<std::int64_t> counts(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(cyclic_local_count(a.numcols, me, pes)));
    shape_transpose(ctx, a, counts, at);
    // Each column's counter now holds the next free place in its new row (local to its PE).
    for (std::size_t i = 0; i < counts.size(); ++i) mine[i] = at.offset[i];
    const auto per_pe_nnz = static_cast<std::size_t>(ctx.allreduce(at.lnnz, reduce_op::max));
    global_array<std::int64_t> rows(ctx, per_pe_nnz * static_cast<std::size_t>(pes));
    std::optional<global_array<double>> values;
    if (a.weighted) values.emplace(ctx, per_pe_nnz * static_cast<std::size_t>(pes));
    place.sync();
    for (std::int64_t i = 0; i < a.lnumrows; ++i) {
      const std::int64_t row = a.global_row(i);
      for (std::int64_t j = a.offset[static_cast<std::size_t>(i)]; j < a.offset[static_cast<std::size_t>(i) + 1]; ++j) {
        const std::int64_t col = a.nonzero[static_cast<std::size_t>(j)];
        const std::int64_t pos = place.fetch_add(slot(col, per_pe_cols), 1);
        const std::size_t target = static_cast<std::size_t>(col % pes) * per_pe_nnz + static_cast<std::size_t>(pos);
        rows.put(target, std::span<const std::int64_t>(&row, 1));
        if (values) values->put(target, std::span<const double>(&a.value[static_cast<std::size_t>(j)], 1));
      }
    }
    rows.sync();
    if (values) values->sync();
    const auto n = static_cast<std::ptrdiff_t>(at.lnnz);
    std::copy(rows.local().begin(), rows.local().begin() + n, at.nonzero.begin());
    if (values) std::copy(values->local().begin(), values->local().begin() + n, at.value.begin());
    std::vector<std::int64_t> next(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(counts.size()));
    check_filled(ctx, a, at, next);
    ctx.barrier();
  });
}

int transpose_matrix_main(context& ctx, const transpose_options& options, const std::string& command_line) {
  const int me = ctx.rank();
  const bale_graph_options graph = resolve_graph_options(options.graph, ctx.size());
  bale_report report(ctx, options.std, "transpose_matrix", command_line);
  if (!report.opened()) return 2;
  std::optional<sparse_matrix> input =
      graph_app_input(ctx, report, options.std, graph, "transpose_inmat", [](const sparse_matrix&) {});
  if (!input) return 2;
  const sparse_matrix& in = *input;

  // The reference the styles are also checked against: the whole matrix transposed locally
  // (only for inputs small enough to gather on every PE).
  constexpr std::int64_t reference_limit = 1 << 20;
  std::optional<sparse_matrix> reference;
  if (in.nnz <= reference_limit)
    reference = distribute_local(transpose_local(gather_matrix(ctx, in)), me, ctx.size());

  bool written = false;
  std::int64_t errors = 0;
  int status = 0;
  for_each_style(report, options.std.models_mask, [&](std::int64_t style, const char* name) {
    if (status != 0) return;
    sparse_matrix out;
    const double seconds = style == agp_style       ? transpose_global_array(ctx, in, out)
                           : style == exstack_style ? transpose_exchange(ctx, in, out, options.std.buf_cnt)
                                                    : transpose_streamer(ctx, in, out);
    report.write_time(name, mean_over_pes(ctx, seconds));

    // bale's check: the transpose of the transpose (its library transpose, then sorted) is the
    // input. And transit's: the transpose, sorted, is the local reference's.
    sparse_matrix back;
    transpose_exchange(ctx, out, back, 512);
    sort_nonzeros(back);
    bool ok = compare_matrix(ctx, back, in);
    if (!ok && me == 0) std::fprintf(stderr, "ERROR: transpose of transpose does not match!\n");
    if (reference) {
      sparse_matrix sorted = out;
      sort_nonzeros(sorted);
      if (!compare_matrix(ctx, sorted, *reference)) {
        if (me == 0) std::fprintf(stderr, "ERROR: %s: the transpose does not match the local reference!\n", name);
        ok = false;
      }
    }
    if (!ok) ++errors;
    if (!written && errors == 0 && options.std.dump_files) {
      try {
        write_matrix_mm(ctx, out, "transpose_outmat");
      } catch (const input_error& e) {
        if (me == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
        status = 2;
      }
      written = true;
    }
  });
  if (status != 0) return status;
  report.finish();
  return errors == 0 ? 0 : 1;
}

}  // namespace transit::apps
