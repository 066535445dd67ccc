// payload: large payloads through active_messages against the transport's own large-message path,
// timed in the same run. Every PE sends --items-per-pe messages of --payload-bytes (default 100
// MiB) to the next PE, two ways: as one call of active_messages (a vector argument: from 64 KiB on
// a large call, written once into a transport message of its own and read in place by the handler;
// below, chunked through the chunk streamer and reassembled), and as one transport message (the
// bandwidth to compare against: on mpi, one MPI message). `seconds` and the rate are
// active_messages'; the record also has both bandwidths and their ratio. The item size reported
// is the chunk's (1 KiB), what payloads below 64 KiB travel in.
// Verified by a checksum of one word per 4 KiB of every received payload (the tests check
// every byte; reading all of it here would time the reader, not the transfer).
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "bench.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace transit::bench {

namespace {

constexpr std::size_t sample_stride = 512;  // words: one per 4 KiB
std::uint64_t payload_bytes = std::uint64_t{100} << 20;  // --payload-bytes

std::uint64_t word_at(std::uint64_t source, std::uint64_t k) { return rng::mix(source * 0x9E3779B97F4A7C15ULL + k); }

std::uint64_t sampled_sum(std::span<const std::uint64_t> words) {
  std::uint64_t sum = 0;
  for (std::size_t k = 0; k < words.size(); k += sample_stride) sum += words[k];
  return sum;
}

// What this PE's active handler received (captureless: it finds it here).
struct arrivals {
  std::uint64_t count = 0, bytes = 0, sum = 0;
};
pe_pointer<arrivals> active_arrivals;

measurement run_payload(context& ctx, const setup& s) {
  using detail::context_access;
  const std::size_t words = payload_bytes / sizeof(std::uint64_t);
  const std::size_t bytes = words * sizeof(std::uint64_t);
  const std::uint64_t reps = s.items_per_pe;
  const int next = (ctx.rank() + 1) % ctx.size();
  const auto previous = static_cast<std::uint64_t>((ctx.rank() + ctx.size() - 1) % ctx.size());
  std::vector<std::uint64_t> payload(words);
  for (std::size_t k = 0; k < words; ++k) payload[k] = word_at(static_cast<std::uint64_t>(ctx.rank()), k);
  std::uint64_t expected = 0;  // of what the previous PE sends
  for (std::size_t k = 0; k < words; k += sample_stride) expected += word_at(previous, k);
  bool verified = true;

  // One transport message per repetition, on a channel of this kernel's own.
  detail::transport& net = context_access::net(ctx);
  detail::mailbox& mail = context_access::mail(ctx);
  const std::uint32_t channel = mail.open_channel();
  double transport_seconds = 0;
  std::vector<detail::message> arrived;
  for (std::uint64_t r = 0; r < reps; ++r) {
    detail::message_buffer buffer = net.allocate(bytes);
    std::memcpy(buffer.payload(), payload.data(), bytes);
    buffer.set_size(bytes);
    transport_seconds += measure(ctx, [&] {
      net.send(next, channel, std::move(buffer));
      // Polls with yields, never naps: MPI moves one large message (a rendezvous) only inside MPI
      // calls, and the naps of wait_until's back-off, taken while nothing has arrived yet,
      // stretched it 30-fold here. The reference is what the transport can do.
      while (!mail.take(channel, arrived)) {
        if (net.aborted()) throw detail::job_aborted();
        detail::yield();
      }
    });
    const auto& m = arrived.front();
    verified &= m.data.size() == bytes &&
                sampled_sum({reinterpret_cast<const std::uint64_t*>(m.data.payload()), words}) == expected;
    net.recycle(std::move(arrived.front().data));
    arrived.clear();
  }
  mail.close_channel(channel);

  // The same bytes as calls.
  arrivals arrived_calls;
  active_arrivals.set(ctx, &arrived_calls);
  active_messages am(ctx, s.stream);
  double active_seconds = 0;
  for (std::uint64_t r = 0; r < reps; ++r) {
    active_seconds += measure(ctx, [&] {
      am.async(next, [](active_messages& here, std::span<const std::uint64_t> v) {
        arrivals& a = active_arrivals.get(here.ctx());
        ++a.count;
        a.bytes += v.size_bytes();
        a.sum += sampled_sum(v);
      }, payload);
      am.barrier();
    });
  }
  verified &= arrived_calls.count == reps && arrived_calls.bytes == reps * bytes &&
              arrived_calls.sum == reps * expected;

  measurement m;
  m.seconds = active_seconds;
  m.items_per_pe = static_cast<double>(reps);
  m.verified = verified;
  m.stats = am.stats();
  const double total = static_cast<double>(reps * bytes);
  m.extra["api"] = "active";
  m.extra["payload_bytes"] = bytes;
  m.extra["transport_seconds"] = transport_seconds;
  m.extra["active_gbytes_per_second"] = total / active_seconds / 1e9;
  m.extra["transport_gbytes_per_second"] = total / transport_seconds / 1e9;
  m.extra["active_vs_transport"] = transport_seconds / active_seconds;
  return m;
}

const bool registered = register_kernel({
    .name = "payload",
    .summary = "large messages through active_messages against one transport message each",
    .item_sizes = {detail::chunk_bytes},
    .run = run_payload,
    .own_options =
        {
          {.names = "--payload-bytes",
           .help = "bytes of each message (default 104857600, 100 MiB)",
           .target = &payload_bytes,
           .check = apps::integer_range{8, std::uint64_t{1} << 34, "a byte count in [8, 2^34]"},
           .type_name = "B"},
        },
    .default_items = [] { return std::uint64_t{1}; },
});

}  // namespace

}  // namespace transit::bench
