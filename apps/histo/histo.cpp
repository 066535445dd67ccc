#include "histo/histo.hpp"

#include <cinttypes>
#include <cstdio>

#include "common/bale_styles.hpp"
#include "common/bale_timing.hpp"
#include "common/exstack_rounds.hpp"

namespace transit::apps {

std::int64_t histo_updates_per_pe(const histo_options& options, int pe, int pes) {
  return bale_share(options.updates_per_pe, options.updates_total, pe, pes);
}

histo_updates histo_draw(const histo_options& options, int pe, int pes) {
  return bale_draw_places(options.std.seed, pe, pes, histo_updates_per_pe(options, pe, pes), options.table_per_pe);
}

double histo_streamer(context& ctx, const histo_updates& updates, global_array<std::int64_t>& counts) {
  const std::span<std::int64_t> table = counts.local();
  streamer<std::int64_t> stream(ctx, {}, [table](const std::int64_t& offset) { ++table[static_cast<std::size_t>(offset)]; });
  return bale_timed(ctx, [&] {
    for (const cyclic_place& p : updates.places) stream.insert(p.offset, p.pe);
    stream.finish();
    ctx.barrier();
  });
}

double histo_exchange(context& ctx, const histo_updates& updates, global_array<std::int64_t>& counts,
                      std::int64_t buf_cnt) {
  const std::span<std::int64_t> table = counts.local();
  sparse_exchange<std::int64_t> exchange(ctx, exstack_exchange_options());
  exstack_rounds rounds(ctx, exchange, buf_cnt,
                        [table](const std::int64_t& offset) { ++table[static_cast<std::size_t>(offset)]; });
  return bale_timed(ctx, [&] {
    for (const cyclic_place& p : updates.places) rounds.push(p.offset, p.pe);
    rounds.finish();
    ctx.barrier();
  });
}

double histo_global_array(context& ctx, const histo_updates& updates, global_array<std::int64_t>& counts) {
  const std::int64_t table_per_pe = static_cast<std::int64_t>(counts.size()) / ctx.size();
  const std::int64_t one = 1;
  return bale_timed(ctx, [&] {
    for (const cyclic_place& p : updates.places)
      counts.accumulate(histo_slot(p, table_per_pe), std::span<const std::int64_t>(&one, 1), reduce_op::sum);
    counts.sync();
  });
}

int histo_main(context& ctx, const histo_options& options, const std::string& command_line) {
  const int pes = ctx.size(), me = ctx.rank();
  if (!bale_table_fits(ctx, options.table_per_pe, "--table_size (-T)")) return 2;
  bale_report report(ctx, options.std, "histo", command_line);
  if (!report.opened()) return 2;
  const std::int64_t per_pe = histo_updates_per_pe(options, me, pes);
  const std::int64_t total = options.updates_total != 0 ? options.updates_total : options.updates_per_pe * pes;
  report.write_int("num_updates_total", total);
  report.write_int("num_updates_per_pe", per_pe);  // PE 0's, as bale prints it
  report.write_int("table_size_per_pe", options.table_per_pe);
  report.write_std_options();

  global_array<std::int64_t> counts(ctx, static_cast<std::size_t>(options.table_per_pe) * static_cast<std::size_t>(pes));
  const histo_updates updates = histo_draw(options, me, pes);
  const double volume_per_node = 8.0 * static_cast<double>(per_pe) * options.std.cores_per_node * 1.0e-9;
  ctx.barrier();

  const std::int64_t styles_run = bale_run_styles(
      ctx, report, options.std, volume_per_node,
      [&](std::int64_t bit) {
        if (bit == agp_style) return histo_global_array(ctx, updates, counts);
        if (bit == exstack_style) return histo_exchange(ctx, updates, counts, options.std.buf_cnt);
        return histo_streamer(ctx, updates, counts);
      },
      [](std::int64_t) {});

  // bale's self-check: every update subtracted back once per style that ran leaves zero.
  const std::int64_t minus = -styles_run;
  for (const cyclic_place& p : updates.places)
    counts.accumulate(histo_slot(p, options.table_per_pe), std::span<const std::int64_t>(&minus, 1), reduce_op::sum);
  counts.sync();
  std::int64_t errors = 0;
  const std::span<const std::int64_t> table = counts.local();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i] == 0) continue;
    if (++errors < 5)
      std::fprintf(stderr, "ERROR: Thread %d error at %zu (= %" PRId64 ")\n", me, i, table[i]);
  }
  const std::int64_t all_errors = ctx.allreduce(errors, reduce_op::sum);
  if (all_errors != 0 && me == 0) std::fprintf(stderr, "FAILED!!!! total errors = %" PRId64 "\n", all_errors);
  report.finish();
  return all_errors == 0 ? 0 : 1;
}

}  // namespace transit::apps
