// histogram: every PE increments random slots of a table distributed over all PEs (--table-slots
// per PE). An item is the 8-byte slot index on its home PE. Verified by the global sum of the
// table, which must equal the number of increments sent.
//
// --api active: the same with active_messages, a call per increment: async(home PE, handler,
// slot) with the 4-byte slot (the call's record is then 8 bytes, the handler id and the slot, as
// many as the streamer's item), barrier() at the end of each step.
//
// --api c: the same items through the C API (include/transit/transit.h), as a C program writes it:
// updates gathered in batches of c_batch (destinations and slots), one transit_streamer_insert per
// batch, a batch callback that counts a whole run of arrived slots; same streamer options.
//
// Every transit run also reports the limit the kernel approaches: the same draws, on every PE at
// once, landing in a local table as large as the whole distributed one, with no message at all
// (limit_items_per_second_per_pe; fraction_of_limit is the run's rate over it). With more PEs than
// cores it is the limit of a PE's share of a core, as the run's own rate is.
#include <algorithm>
#include <string>
#include <vector>

#include "bench.hpp"
#include "c_api/byte_streamer.hpp"
#include "c_api/handles.hpp"

namespace transit::bench {

namespace {

std::uint64_t table_slots = 1000;  // --table-slots
std::string api = "streamer";      // --api

// The table of this PE, for the active handler (captureless: it finds the table here).
pe_pointer<std::vector<std::uint64_t>> active_table;

constexpr std::size_t c_batch = 1024;  // --api c: updates per transit_streamer_insert

// --api c: the deliver callback, a run of slots at a time.
int count_slots(const void* items, std::size_t count, void* table) {
  const auto* slots = static_cast<const std::uint64_t*>(items);
  auto& t = *static_cast<std::vector<std::uint64_t>*>(table);
  for (std::size_t i = 0; i < count; ++i) ++t[slots[i]];
  return 0;
}

// A C-API call of the kernel that must succeed: its error as an exception.
void c_call(transit_status status) {
  if (status != TRANSIT_OK) throw std::runtime_error(detail::concat("histogram --api c: ", transit_last_error()));
}

// The no-message limit: this PE's draws of the run (same seed, same count) into a local table of
// pes x slots counters. Collective: times the slowest PE, as the run itself is timed.
double no_message_limit(context& ctx, const setup& s, std::uint64_t slots, std::uint64_t draws) {
  const auto pes = static_cast<std::uint64_t>(ctx.size());
  std::vector<std::uint64_t> table(pes * slots, 0);
  rng random(pe_seed(s.opt, ctx.rank(), 0x4157));
  const double seconds = measure(ctx, [&] {
    for (std::uint64_t i = 0; i < draws; ++i) {
      const table_entry e = random_entry(random, pes, slots);
      ++table[e.pe * slots + e.slot];
    }
  });
  std::uint64_t sum = 0;
  for (const auto c : table) sum += c;
  // The sum is checked so that the loop is real work the compiler must keep.
  if (sum != draws)
    throw std::logic_error(detail::concat("histogram: the no-message limit counted ", sum, " of ", draws, " draws"));
  return static_cast<double>(draws) / seconds;
}

measurement run_histogram(context& ctx, const setup& s) {
  const std::uint64_t slots = table_slots;
  if (s.opt.route == scheme::mpi_raw) return histogram_mpi_raw(ctx, s, slots);
  const std::uint64_t n = s.items_per_pe;
  const auto pes = static_cast<std::uint64_t>(ctx.size());
  std::vector<std::uint64_t> table(slots, 0);
  rng random(pe_seed(s.opt, ctx.rank(), 0x4157));
  const auto steps = static_cast<std::uint64_t>(s.steps);
  progress_bar bar(ctx, "histogram", n * steps);
  std::vector<double> step_seconds;

  // steps x (n updates, then end): the same loop for every API. The updates go in chunks of
  // poll_interval, polled after each, so that the loop over a chunk is the update's own work: the
  // draw's state in a local (not stored to memory each update, as the streamer's stores through
  // std::byte* would otherwise force) and no per-update test for the poll or the progress bar.
  auto run_steps = [&](auto&& send, auto&& progress, auto&& end_step) {
    return measure_steps(ctx, steps, step_seconds, [&](std::uint64_t step) {
      for (std::uint64_t first = 0; first < n; first += poll_interval) {
        const std::uint64_t last = std::min(n, first + poll_interval);
        rng draws = random;
        for (std::uint64_t i = first; i < last; ++i) send(random_entry(draws, pes, slots));
        random = draws;
        if (last - first == poll_interval) progress();
        bar.update(step * n + last);
      }
      end_step();
    });
  };

  measurement m;
  m.items_per_pe = static_cast<double>(n * steps);  // before add_step_fields, which rates the steps by it
  if (api == "active") {
    active_table.set(ctx, &table);
    active_messages am(ctx, s.stream);
    m.seconds = run_steps(
        [&](const table_entry& e) {
          am.async(static_cast<int>(e.pe), [](active_messages& here, std::uint32_t slot) { ++active_table.get(here.ctx())[slot]; },
                   e.slot);
        },
        [&] { am.progress(); }, [&] { am.barrier(); });
    m.stats = am.stats();
    m.buffer_bytes_bound = buffer_bound(ctx, s.stream, 2 * sizeof(std::uint32_t));
  } else if (api == "c") {
    transit_context handle = c_api::lend(ctx);
    transit_streamer* stream = nullptr;
    c_call(c_api::create_streamer(&handle, sizeof(std::uint64_t), count_slots, &table, s.stream, &stream));
    std::vector<int> dests(c_batch);
    std::vector<std::uint64_t> items(c_batch);
    std::size_t batched = 0;
    auto flush = [&] {
      c_call(transit_streamer_insert(stream, dests.data(), items.data(), batched));
      batched = 0;
    };
    m.seconds = run_steps(
        [&](const table_entry& e) {
          dests[batched] = static_cast<int>(e.pe);
          items[batched] = e.slot;
          if (++batched == c_batch) flush();
        },
        [] {},  // the C API has no progress call: each insert of a batch polls as it sends
        [&] {
          flush();
          c_call(transit_streamer_finish(stream));
        });
    const auto& core = c_api::streamer_of(stream);
    m.stats = core.stats();
    m.buffer_bytes_bound = buffer_bound(ctx, core.current_options(), m.stats, sizeof(std::uint64_t));
    add_step_fields(ctx, s, m.stats, core.current_options(), step_seconds, m);
    c_call(transit_streamer_destroy(stream));
  } else {
    streamer<std::uint64_t> stream(ctx, s.stream, [&](const std::uint64_t& slot) { ++table[slot]; });
    m.seconds = run_steps([&](const table_entry& e) { stream.insert(e.slot, static_cast<int>(e.pe)); },
                          [&] { stream.progress(); }, [&] { stream.finish(); });
    m.stats = stream.stats();
    m.buffer_bytes_bound = buffer_bound(ctx, stream.current_options(), stream.stats(), sizeof(std::uint64_t));
    add_step_fields(ctx, s, stream, step_seconds, m);
  }

  std::uint64_t sum = 0;
  for (const auto c : table) sum += c;
  const std::uint64_t total = ctx.allreduce(sum, reduce_op::sum);
  m.verified = total == n * pes * steps;
  m.extra["api"] = api;
  m.extra["table_slots"] = slots;
  const double limit = no_message_limit(ctx, s, slots, n * steps);
  m.extra["limit_items_per_second_per_pe"] = limit;
  m.extra["fraction_of_limit"] = m.items_per_pe / m.seconds / limit;
  return m;
}

const bool registered = register_kernel({
    .name = "histogram",
    .summary = "increments of random slots of a distributed table",
    .item_sizes = {sizeof(std::uint64_t)},
    .run = run_histogram,
    .own_options =
        {
          table_slots_option(table_slots),
          api_option(api, true),
        },
    .default_items = [] { return std::uint64_t{1} << 22; },
    .mpi_raw = true,
    .steps = true,
    .workload =
        [](const context&, const setup& s) {
          step_workload w;  // every update to a uniformly random PE, this one included
          w.item_bytes = sizeof(std::uint64_t);
          w.items_per_pe = static_cast<double>(s.items_per_pe);
          w.pattern = destinations::uniform;
          return w;
        },
});

}  // namespace

}  // namespace transit::bench
