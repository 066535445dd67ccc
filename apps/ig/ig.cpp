#include "ig/ig.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "common/bale_styles.hpp"
#include "common/bale_timing.hpp"

namespace transit::apps {

namespace {

/// A request of the streamer style: the entry's offset on its PE, and where the reply goes (the
/// requester's slot and PE, packed as slot * P + PE).
struct ig_request {
  std::int64_t offset;
  std::int64_t ticket;
};
/// A reply: the entry's value and the requester's slot.
struct ig_reply {
  std::int64_t value;
  std::int64_t slot;
};

/// Where bale's cyclic place lives in a block-distributed table of `per_pe` entries per PE.
std::size_t table_slot(const cyclic_place& place, std::size_t per_pe) {
  return static_cast<std::size_t>(place.pe) * per_pe + static_cast<std::size_t>(place.offset);
}

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

void ig_fill_table(context& ctx, global_array<std::int64_t>& table) {
  const auto pes = static_cast<std::size_t>(ctx.size());
  if (table.size() % pes != 0)
    throw std::invalid_argument("ig_fill_table: a table of " + std::to_string(table.size()) + " entries, expected a multiple of " +
                                std::to_string(pes) + " (the same number on every PE)");
  const std::span<std::int64_t> local = table.local();
  for (std::size_t i = 0; i < local.size(); ++i)
    local[i] = ig_table_value(static_cast<std::int64_t>(i * pes) + ctx.rank());
}

double ig_streamer(context& ctx, const ig_requests& requests, global_array<std::int64_t>& table,
                   std::span<std::int64_t> target) {
  check_target(requests, target, "ig_streamer");
  const std::span<const std::int64_t> local = table.local();
  const std::int64_t pes = ctx.size(), me = ctx.rank();
  streamer<ig_reply> replies(ctx, {}, [target](const ig_reply& r) { target[static_cast<std::size_t>(r.slot)] = r.value; });
  streamer<ig_request> asks(ctx, {}, [&replies, local, pes](const ig_request& q) {
    replies.insert(ig_reply{local[static_cast<std::size_t>(q.offset)], q.ticket / pes}, static_cast<int>(q.ticket % pes));
  });
  return bale_timed(ctx, [&] {
    const std::size_t n = requests.places.size();
    for (std::size_t i = 0; i < n; ++i) {
      const cyclic_place& p = requests.places[i];
      asks.insert(ig_request{p.offset, static_cast<std::int64_t>(i) * pes + me}, p.pe);
      // Replies are inserted by the requests' callbacks: this PE serves its share of them while
      // it still has requests to send, rather than all at the end.
      if ((i & 255) == 255) replies.progress();
    }
    asks.finish();  // every request delivered, so every reply inserted
    replies.finish();
    ctx.barrier();
  });
}

double ig_exchange(context& ctx, const ig_requests& requests, global_array<std::int64_t>& table,
                   std::span<std::int64_t> target, std::int64_t buf_cnt) {
  check_target(requests, target, "ig_exchange");
  const std::span<const std::int64_t> local = table.local();
  const auto pes = static_cast<std::size_t>(ctx.size());
  const auto limit = static_cast<std::size_t>(buf_cnt);
  sparse_exchange<std::int64_t> exchange(ctx);
  std::vector<const std::int64_t*> reply_from(pes);  // per PE, its next reply of the round
  return bale_timed(ctx, [&] {
    std::size_t next = 0;
    const std::size_t total = requests.places.size();
    for (;;) {
      // One exstack round: push requests until some destination's buffer is full, exchange,
      // answer each request in place, exchange the answers back, and retrace the round's requests
      // to take each answer in order from its PE.
      const std::size_t first = next;
      std::vector<parcel<std::int64_t>> outgoing(pes);
      for (std::size_t pe = 0; pe < pes; ++pe) outgoing[pe].peer = static_cast<int>(pe);
      for (; next < total; ++next) {
        const cyclic_place& p = requests.places[next];
        auto& items = outgoing[static_cast<std::size_t>(p.pe)].items;
        if (items.size() == limit) break;
        items.push_back(p.offset);
      }
      const bool mine_sent = next == total;
      std::vector<parcel<std::int64_t>> asked = exchange.run(std::move(outgoing));
      for (auto& in : asked)
        for (std::int64_t& item : in.items) item = local[static_cast<std::size_t>(item)];
      const std::vector<parcel<std::int64_t>> answers = exchange.run(std::move(asked));
      for (const auto& in : answers) reply_from[static_cast<std::size_t>(in.peer)] = in.items.data();
      for (std::size_t j = first; j < next; ++j) target[j] = *reply_from[static_cast<std::size_t>(requests.places[j].pe)]++;
      if (ctx.allreduce(mine_sent ? 0 : 1, reduce_op::sum) == 0) break;  // every PE has sent all
    }
    ctx.barrier();
  });
}

double ig_global_array(context& ctx, const ig_requests& requests, global_array<std::int64_t>& table,
                       std::span<std::int64_t> target) {
  check_target(requests, target, "ig_global_array");
  const std::size_t per_pe = table.size() / static_cast<std::size_t>(ctx.size());
  // bale's ig_agp lets the compiler defer each get's completion (Cray's defer_sync); transit
  // defers them by reading a batch of entries in one call, which aggregates the batch per owner.
  constexpr std::size_t batch = 16384;  // 1024 was 4x slower on 2 PEs (a round trip per batch)
  std::vector<region> sources;
  sources.reserve(batch);
  return bale_timed(ctx, [&] {
    const std::size_t n = requests.places.size();
    for (std::size_t first = 0; first < n; first += batch) {
      const std::size_t count = std::min(batch, n - first);
      sources.clear();
      for (std::size_t i = first; i < first + count; ++i) sources.push_back({table_slot(requests.places[i], per_pe), 1});
      table.get_regions(sources, target.subspan(first, count));
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

  global_array<std::int64_t> table(ctx, static_cast<std::size_t>(options.table_per_pe) * static_cast<std::size_t>(pes));
  ig_fill_table(ctx, table);
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
