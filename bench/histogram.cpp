// histogram: every PE increments random slots of a table distributed over all PEs (--table-slots
// per PE). An item is the 8-byte slot index on its home PE. Verified by the global sum of the
// table, which must equal the number of increments sent.
//
// --api active: the same with active_messages, a call per increment: async(home PE, handler,
// slot) with the 4-byte slot (the call's record is then 8 bytes, the handler id and the slot, as
// many as the streamer's item), barrier() at the end.
#include <string>
#include <vector>

#include "bench.hpp"
#include "cli.hpp"

namespace transit::bench {

namespace {

std::uint64_t table_slots = 1000;  // --table-slots
std::string api = "streamer";      // --api

// The table of this PE, for the active handler (captureless: it finds the table here).
thread_local std::vector<std::uint64_t>* active_table = nullptr;

measurement run_histogram(context& ctx, const setup& s) {
  const std::uint64_t slots = table_slots;
  const std::uint64_t n = s.items_per_pe;
  const auto pes = static_cast<std::uint64_t>(ctx.size());
  std::vector<std::uint64_t> table(slots, 0);
  rng random(pe_seed(s.opt, ctx.rank(), 0x4157));
  progress_bar bar(ctx, "histogram", n);
  measurement m;

  if (api == "active") {
    active_table = &table;
    active_messages am(ctx, s.stream);
    m.seconds = measure(ctx, [&] {
      for (std::uint64_t i = 0; i < n; ++i) {
        const table_entry e = random_entry(random, pes, slots);
        am.async(static_cast<int>(e.pe), [](active_messages&, std::uint32_t slot) { ++(*active_table)[slot]; }, e.slot);
        if (poll_due(i)) am.progress();
        bar.update(i);
      }
      am.barrier();
    });
    m.stats = am.stats();
    m.buffer_bytes_bound = buffer_bound(ctx, s.stream, 2 * sizeof(std::uint32_t));
  } else {
    streamer<std::uint64_t> stream(ctx, s.stream, [&](const std::uint64_t& slot) { ++table[slot]; });
    m.seconds = measure(ctx, [&] {
      for (std::uint64_t i = 0; i < n; ++i) {
        const table_entry e = random_entry(random, pes, slots);
        stream.insert(e.slot, static_cast<int>(e.pe));
        if (poll_due(i)) stream.progress();
        bar.update(i);
      }
      stream.finish();
    });
    m.stats = stream.stats();
    m.buffer_bytes_bound = buffer_bound(ctx, s.stream, sizeof(std::uint64_t));
  }

  std::uint64_t sum = 0;
  for (const auto c : table) sum += c;
  const std::uint64_t total = ctx.allreduce(sum, reduce_op::sum);
  m.items_per_pe = static_cast<double>(n);
  m.verified = total == n * pes;
  m.extra["api"] = api;
  m.extra["table_slots"] = slots;
  return m;
}

const bool registered = register_kernel({
    .name = "histogram",
    .summary = "increments of random slots of a distributed table",
    .item_sizes = {sizeof(std::uint64_t)},
    .run = run_histogram,
    .add_options =
        [](CLI::App& sub) {
          add_table_slots_option(sub, table_slots);
          add_api_option(sub, api);
        },
    .default_items = [] { return std::uint64_t{1} << 22; },
});

}  // namespace

}  // namespace transit::bench
