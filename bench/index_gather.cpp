// index-gather: each PE reads --items-per-pe random entries of an array distributed over all PEs
// (--table-slots per PE). A request (slot, requester, position) goes to the entry's home PE, whose
// deliver callback answers with a reply (value, position) on a second streamer. Two steps: all
// requests are delivered (and so all replies inserted) when the request streamer's finish()
// returns; the reply streamer's finish() then completes the gather. Verified entry by entry
// against the known array contents.
#include <limits>
#include <vector>

#include "bench.hpp"

namespace transit::bench {

namespace {

struct request {
  std::uint64_t slot;
  std::uint32_t requester;
  std::uint32_t position;
};
struct reply {
  std::uint64_t value;
  std::uint64_t position;
};
static_assert(sizeof(request) == 16 && sizeof(reply) == 16);

std::uint64_t entry_value(std::uint64_t global_index, std::uint64_t seed) { return rng::mix(global_index ^ seed); }

std::uint64_t table_slots = 1000;  // --table-slots

measurement run_index_gather(context& ctx, const setup& s) {
  const std::uint64_t slots = table_slots, n = s.items_per_pe;
  const auto pes = static_cast<std::uint64_t>(ctx.size());
  const auto rank = static_cast<std::uint64_t>(ctx.rank());
  std::vector<std::uint64_t> array(slots);
  for (std::uint64_t i = 0; i < slots; ++i) array[i] = entry_value(rank * slots + i, s.opt.seed);
  std::vector<std::uint64_t> wanted(n), got(n, 0);

  streamer<reply> replies(ctx, s.stream, [&](const reply& r) { got[r.position] = r.value; });
  streamer<request> requests(ctx, s.stream, [&](const request& q) {
    replies.insert(reply{array[q.slot], q.position}, static_cast<int>(q.requester));
  });
  rng random(pe_seed(s.opt, ctx.rank(), 0x16a7));
  progress_bar bar(ctx, "index-gather", n);

  measurement m;
  m.seconds = measure(ctx, [&] {
    for (std::uint64_t i = 0; i < n; ++i) {
      const table_entry e = random_entry(random, pes, slots);
      wanted[i] = e.pe * slots + e.slot;
      requests.insert(request{e.slot, static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(i)},
                      static_cast<int>(e.pe));
      if (poll_due(i)) {
        requests.progress();
        replies.progress();
      }
      bar.update(i);
    }
    requests.finish();
    replies.finish();
  });

  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < n; ++i) wrong += got[i] != entry_value(wanted[i], s.opt.seed);
  wrong = ctx.allreduce(wrong, reduce_op::sum);
  m.items_per_pe = static_cast<double>(n);
  m.verified = wrong == 0;
  m.stats = requests.stats();
  accumulate(m.stats, replies.stats());
  m.buffer_bytes_bound = 2 * buffer_bound(ctx, requests.current_options(), sizeof(request));
  m.buffer_items = requests.current_options().buffer_items;
  m.extra["table_slots"] = slots;
  m.extra["errors"] = wrong;
  return m;
}

const bool registered = register_kernel({
    .name = "index-gather",
    .summary = "random reads of a distributed array: request and reply",
    .item_sizes = {sizeof(request)},
    .run = run_index_gather,
    .own_options = {table_slots_option(table_slots)},
    .max_items_per_pe = std::numeric_limits<std::uint32_t>::max(),  // a request numbers its reply in 32 bits
});

}  // namespace

}  // namespace transit::bench
