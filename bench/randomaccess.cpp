// randomaccess: HPCC RandomAccess (GUPS) over the streamer.
//
// Rules kept from HPCC (MPIRandomAccess):
//  - a table of 2^n 64-bit words per PE, word i of PE p initialised to its global index p*2^n + i;
//  - the update stream is HPCC's: ran <- (ran << 1) ^ (ran < 0 ? POLY : 0), PE p generating
//    updates [p*U, (p+1)*U) of the one global stream, starting from HPCC_starts(p*U); U defaults
//    to 4 x 2^n as in HPCC. An update XORs ran into global word ran mod (P*2^n); with P a power of
//    two that is HPCC's ran & (TableSize-1). Other P: PE (ran >> n) mod P, word ran & (2^n-1).
//  - look-ahead of at most 1024 updates per PE: a batch of 64 drawn updates plus the streamer's
//    max_buffered_items = 960 bound the updates a PE holds unsent (HPCC's reference implementation
//    bounds its send buckets the same way, MAX_TOTAL_PENDING_UPDATES). Updates for this PE's own
//    table are applied at the end of their batch, before any of it is sent, so they never wait in
//    a queue.
//  - verification replays the stream: every PE regenerates all P*U updates, applies (XORs again)
//    those for its own words, locally and without communication, and counts words that differ
//    from their initial value. XOR is self-inverse, so a lost, duplicated or misrouted update
//    shows as an error; HPCC tolerates 1%, we require 0.
#include <algorithm>
#include <vector>

#include "bench.hpp"

namespace transit::bench {

namespace {

constexpr std::uint64_t poly = 0x0000000000000007ULL;
constexpr std::int64_t period = 1317624576693539401LL;
constexpr std::uint64_t look_ahead = 1024;
// Updates are drawn in batches of `batch`, split without a branch into this PE's own and the
// others' (an update is this PE's at random, and a mispredicted branch per two updates cost more
// than the update), then applied and inserted. A batch waits unsent beside the streamer's
// buffers, so the streamer holds at most look_ahead - batch: the look-ahead stays 1024.
constexpr std::uint64_t batch = 64;

std::uint64_t next_update(std::uint64_t ran) noexcept {
  return (ran << 1) ^ (static_cast<std::int64_t>(ran) < 0 ? poly : 0);
}

/// HPCC_starts: the n-th value of the update stream, by squaring in GF(2)[x]/POLY.
std::uint64_t hpcc_starts(std::int64_t n) {
  while (n < 0) n += period;
  while (n > period) n -= period;
  if (n == 0) return 0x1;
  std::uint64_t m2[64];
  std::uint64_t temp = 0x1;
  for (auto& m : m2) {
    m = temp;
    temp = next_update(next_update(temp));
  }
  int i = 62;
  while (i >= 0 && ((n >> i) & 1) == 0) --i;
  std::uint64_t ran = 0x2;
  while (i > 0) {
    temp = 0;
    for (int j = 0; j < 64; ++j)
      if ((ran >> j) & 1) temp ^= m2[j];
    ran = temp;
    i -= 1;
    if ((n >> i) & 1) ran = next_update(ran);
  }
  return ran;
}

/// Owner PE of an update (see the header comment).
struct placement {
  int table_log2;
  std::uint64_t pes;
  bool power_of_two;
  std::uint64_t pe(std::uint64_t ran) const noexcept {
    const std::uint64_t high = ran >> table_log2;
    return power_of_two ? (high & (pes - 1)) : high % pes;
  }
};

int table_log2 = 16;  // --table-log2

measurement run_randomaccess(context& ctx, const setup& s) {
  const int n = table_log2;
  const std::uint64_t words = std::uint64_t{1} << n, mask = words - 1;
  const std::uint64_t updates = s.items_per_pe;
  const auto pes = static_cast<std::uint64_t>(ctx.size());
  const auto rank = static_cast<std::uint64_t>(ctx.rank());
  const placement place{n, pes, (pes & (pes - 1)) == 0};

  std::vector<std::uint64_t> table(words);
  for (std::uint64_t i = 0; i < words; ++i) table[i] = rank * words + i;

  streamer_options so = s.stream;
  so.max_buffered_items = look_ahead - batch;
  streamer<std::uint64_t> stream(ctx, so, [&](const std::uint64_t& ran) { table[ran & mask] ^= ran; });
  progress_bar bar(ctx, "randomaccess", updates);

  measurement m;
  // The updates go in chunks of look_ahead, polled after each: the loop over a chunk is the update's
  // own work, its state in locals that the streamer's stores through std::byte* do not force back
  // to memory, and no per-update test for the poll or the bar. Polling once per look-ahead's worth
  // of updates ran 1.04x-1.08x faster than once per 256 (bench's poll_interval), in one sitting.
  m.seconds = measure(ctx, [&] {
    std::uint64_t ran = hpcc_starts(static_cast<std::int64_t>(updates * rank));
    std::uint64_t* const words_here = table.data();
    std::uint64_t own[batch], others[batch];
    int others_pe[batch];
    for (std::uint64_t first = 0; first < updates; first += look_ahead) {
      const std::uint64_t last = std::min(updates, first + look_ahead);
      std::uint64_t r = ran;
      for (std::uint64_t from = first; from < last; from += batch) {
        const std::uint64_t to = std::min(last, from + batch);
        std::size_t owned = 0, sent = 0;
        for (std::uint64_t i = from; i < to; ++i) {
          r = next_update(r);
          const std::uint64_t pe = place.pe(r);
          const bool mine = pe == rank;
          own[owned] = r;
          others[sent] = r;
          others_pe[sent] = static_cast<int>(pe);
          owned += mine;
          sent += !mine;
        }
        for (std::size_t j = 0; j < owned; ++j) words_here[own[j] & mask] ^= own[j];
        for (std::size_t j = 0; j < sent; ++j) stream.insert(others[j], others_pe[j]);
      }
      ran = r;
      if (last - first == look_ahead) stream.progress();
      bar.update(last);
    }
    stream.finish();
  });

  for (std::uint64_t q = 0; q < pes; ++q) {
    std::uint64_t ran = hpcc_starts(static_cast<std::int64_t>(updates * q));
    for (std::uint64_t i = 0; i < updates; ++i) {
      ran = next_update(ran);
      if (place.pe(ran) == rank) table[ran & mask] ^= ran;
    }
  }
  std::uint64_t errors = 0;
  for (std::uint64_t i = 0; i < words; ++i) errors += table[i] != rank * words + i;
  errors = ctx.allreduce(errors, reduce_op::sum);

  m.items_per_pe = static_cast<double>(updates);
  m.verified = errors == 0;
  m.stats = stream.stats();
  m.buffer_bytes_bound = buffer_bound(ctx, stream.current_options(), sizeof(std::uint64_t));
  m.buffer_items = stream.current_options().buffer_items;
  m.extra["table_log2"] = n;
  m.extra["gups"] = m.seconds > 0 ? static_cast<double>(updates * pes) / m.seconds / 1e9 : 0.0;
  m.extra["errors"] = errors;
  m.extra["look_ahead"] = look_ahead;
  return m;
}

const bool registered = register_kernel({
    .name = "randomaccess",
    .summary = "HPCC RandomAccess: XOR updates under the 1024 look-ahead limit",
    .item_sizes = {sizeof(std::uint64_t)},
    .run = run_randomaccess,
    .own_options =
        {
          integer_option("--table-log2", "2^n table words per PE (default 16); --items-per-pe defaults to 4 x 2^n",
                         &table_log2, 1, 32, "n"),
        },
    .default_items = [] { return std::uint64_t{4} << table_log2; },  // HPCC: 4 x the table size
    .max_buffer_items = look_ahead,  // a buffer larger than the look-ahead could never fill
});

}  // namespace

}  // namespace transit::bench
