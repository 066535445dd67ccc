// histogram: every PE increments random slots of a table distributed over all PEs (--table-slots
// per PE). An item is the 8-byte slot index on its home PE. Verified by the global sum of the
// table, which must equal the number of increments sent.
#include <vector>

#include "bench.hpp"
#include "cli.hpp"

namespace transit::bench {

namespace {

std::uint64_t table_slots = 1000;  // --table-slots

measurement run_histogram(context& ctx, const setup& s) {
  const std::uint64_t slots = table_slots;
  const std::uint64_t n = s.items_per_pe;
  const auto pes = static_cast<std::uint64_t>(ctx.size());
  std::vector<std::uint64_t> table(slots, 0);
  streamer<std::uint64_t> stream(ctx, s.stream, [&](const std::uint64_t& slot) { ++table[slot]; });
  rng random(pe_seed(s.opt, ctx.rank(), 0x4157));
  progress_bar bar(ctx, "histogram", n);

  measurement m;
  m.seconds = measure(ctx, [&] {
    for (std::uint64_t i = 0; i < n; ++i) {
      const table_entry e = random_entry(random, pes, slots);
      stream.insert(e.slot, static_cast<int>(e.pe));
      if (poll_due(i)) stream.progress();
      bar.update(i);
    }
    stream.finish();
  });

  std::uint64_t sum = 0;
  for (const auto c : table) sum += c;
  const std::uint64_t total = ctx.allreduce(sum, reduce_op::sum);
  m.items_per_pe = static_cast<double>(n);
  m.verified = total == n * pes;
  m.stats = stream.stats();
  m.buffer_bytes_bound = buffer_bound(ctx, s.stream, sizeof(std::uint64_t));
  m.extra["table_slots"] = slots;
  return m;
}

const bool registered = register_kernel({
    .name = "histogram",
    .summary = "increments of random slots of a distributed table",
    .item_sizes = {sizeof(std::uint64_t)},
    .run = run_histogram,
    .add_options = [](CLI::App& sub) { add_table_slots_option(sub, table_slots); },
    .default_items = [] { return std::uint64_t{1} << 22; },
});

}  // namespace

}  // namespace transit::bench
