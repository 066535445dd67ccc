#include "ig/ig.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "common/bale_styles.hpp"
#include "common/bale_timing.hpp"
#include "common/gather.hpp"

namespace transit::apps {

namespace {

void check_target(const ig_requests& requests, std::span<std::int64_t> target, const char* kernel) {
  if (target.size() != requests.places.size())
    throw std::invalid_argument(std::string(kernel) + ": a target of " + std::to_string(target.size()) +
                                " entries, expected one per request (" + std::to_string(requests.places.size()) + ")");
}

}  // namespace

std::int64_t ig_requests_per_pe(const ig_options& options, int pe, int pes) {
  return bale_share(options.requests_per_pe, options.requests_total, pe, pes);
}

ig_requests ig_draw(const ig_options& options, int pe, int pes) {
  return bale_draw_places(options.std.seed, pe, pes, ig_requests_per_pe(options, pe, pes), options.table_per_pe);
}

void ig_fill_table(global_array<std::int64_t>& table) {
  if (table.layout() != array_layout::cyclic)
    throw std::invalid_argument("ig_fill_table: a table of the block layout, expected bale's cyclic one");
  const std::span<std::int64_t> local = table.local();
  for (std::size_t k = 0; k < local.size(); ++k) local[k] = ig_table_value(static_cast<std::int64_t>(table.global_index(k)));
}

double ig_streamer(context& ctx, const ig_requests& requests, global_array<std::int64_t>& table,
                   std::span<std::int64_t> target) {
  check_target(requests, target, "ig_streamer");
  streamer_gather gather(ctx, table.local());
  return bale_timed(ctx, [&] {
    gather.run(requests.places, target);
    ctx.barrier();
  });
}

double ig_exchange(context& ctx, const ig_requests& requests, global_array<std::int64_t>& table,
                   std::span<std::int64_t> target, std::int64_t buf_cnt) {
  check_target(requests, target, "ig_exchange");
  return bale_timed(ctx, [&] {
    exchange_gather(ctx, requests.places, table.local(), target, buf_cnt);
    ctx.barrier();
  });
}

double ig_global_array(context& ctx, const ig_requests& requests, global_array<std::int64_t>& table,
                       std::span<std::int64_t> target) {
  check_target(requests, target, "ig_global_array");
  const std::vector<std::uint64_t> indices(requests.index.begin(), requests.index.end());
  // bale's AGP reads one element at a time and waits for each; here a batch of reads is issued at
  // once and waited for together (reads on the node are done at the call, the others aggregate per
  // owner). The batch bounds the requests in flight. Measured at 2 ranks (BENCHMARKS.md): 1.8x
  // global_array_gather's regions here, while permute_matrix's larger gather is faster as regions.
  constexpr std::size_t batch = 16384;
  return bale_timed(ctx, [&] {
    for (std::size_t first = 0; first < indices.size(); first += batch) {
      const std::size_t count = std::min(batch, indices.size() - first);
      table.get_nb(std::span(indices).subspan(first, count), target.subspan(first, count)).wait();
    }
    ctx.barrier();
  });
}

std::int64_t ig_check_and_zero(std::int64_t style, int pe, std::span<std::int64_t> target, const ig_requests& requests) {
  std::int64_t errors = 0;
  for (std::size_t i = 0; i < target.size(); ++i) {
    const std::int64_t expected = ig_table_value(requests.index[i]);
    if (target[i] != expected && ++errors < 5)
      std::fprintf(stderr, "ERROR: model %" PRId64 ": Thread %d: tgt[%zu] = %" PRId64 " != %" PRId64 ")\n", style, pe, i,
                   target[i], expected);
    target[i] = 0;
  }
  if (errors > 0) std::fprintf(stderr, "ERROR: %" PRId64 ": %" PRId64 " total errors on thread %d\n", style, errors, pe);
  return errors;
}

int ig_main(context& ctx, const ig_options& options, const std::string& command_line) {
  const int pes = ctx.size(), me = ctx.rank();
  if (!bale_table_fits(ctx, options.table_per_pe, "--l_tbl_size (-T)")) return 2;
  bale_report report(ctx, options.std, "ig", command_line);
  if (!report.opened()) return 2;
  const std::int64_t per_pe = ig_requests_per_pe(options, me, pes);
  const std::int64_t total = options.requests_total != 0 ? options.requests_total : options.requests_per_pe * pes;
  report.write_int("num_requests_total", total);
  report.write_int("num_requests_per_pe", per_pe);  // PE 0's, as bale prints it
  report.write_int("table_size_per_pe", options.table_per_pe);
  report.write_std_options();

  global_array<std::int64_t> table(ctx, static_cast<std::size_t>(options.table_per_pe) * static_cast<std::size_t>(pes),
                                   array_layout::cyclic);
  ig_fill_table(table);
  const ig_requests requests = ig_draw(options, me, pes);
  std::vector<std::int64_t> target(requests.places.size());
  const double volume_per_node = 2.0 * 8.0 * static_cast<double>(per_pe) * options.std.cores_per_node * 1.0e-9;
  ctx.barrier();

  std::int64_t errors = 0;
  bale_run_styles(
      ctx, report, options.std, volume_per_node,
      [&](std::int64_t bit) {
        if (bit == agp_style) return ig_global_array(ctx, requests, table, target);
        if (bit == exstack_style) return ig_exchange(ctx, requests, table, target, options.std.buf_cnt);
        return ig_streamer(ctx, requests, table, target);
      },
      [&](std::int64_t bit) { errors += ig_check_and_zero(bit, me, target, requests); });

  const std::int64_t all_errors = ctx.allreduce(errors, reduce_op::sum);
  if (all_errors != 0 && me == 0) std::fprintf(stderr, "YOU FAILED!!!!\n");
  report.finish();
  return all_errors == 0 ? 0 : 1;
}

}  // namespace transit::apps
