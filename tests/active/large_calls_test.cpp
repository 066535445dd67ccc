// Large calls: records of at least detail::large_call_bytes travel as one transport message of
// their own, not in chunks. Every byte is checked at the destination; sizes sit at and around the
// threshold; large, chunked and small calls are mixed to the same and to different PEs in one
// barrier; handlers of large calls make further calls (large ones included) and barrier() still
// waits for all of them; a handler's exception loses nothing. The mpi runs are repeated with
// TRANSIT_MAX_MESSAGE_BYTES lowered, so that each large message travels in pieces.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.hpp"
#include "transit/transit.hpp"

namespace {

using transit::active_messages;
using transit::context;
using transit::reduce_op;
namespace detail = transit::detail;

std::byte byte_at(std::uint64_t source, std::uint64_t n, std::uint64_t k) {
  return static_cast<std::byte>((source * 131 + n * 7 + k * 13 + (k >> 8)) & 0xff);
}
std::vector<std::byte> make_payload(std::uint64_t source, std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = byte_at(source, n, k);
  return v;
}

// What the handlers of one PE saw (a thread_local: on the local backend every PE is a thread).
struct tally {
  std::uint64_t arrays = 0, texts = 0, bytes = 0, bad = 0;
  std::uint64_t smalls = 0, small_sum = 0;
  std::uint64_t hops = 0, acks = 0, side_calls = 0;
  std::uint64_t thrown = 0;
};
thread_local tally got;

bool intact(std::uint64_t source, std::span<const std::byte> v) {
  for (std::size_t k = 0; k < v.size(); ++k)
    if (v[k] != byte_at(source, v.size(), k)) return false;
  return true;
}

void on_bytes(std::uint64_t source, std::span<const std::byte> v) {
  ++got.arrays;
  got.bytes += v.size();
  if (!intact(source, v)) ++got.bad;
}

void on_text(std::string_view text, std::uint64_t source) {
  ++got.texts;
  got.bytes += text.size();
  if (!intact(source, std::as_bytes(std::span<const char>(text.data(), text.size())))) ++got.bad;
}

void send_bytes(active_messages& am, int dest, std::uint64_t source, std::span<const std::byte> v) {
  am.async(dest, [](active_messages&, std::uint64_t s, std::span<const std::byte> b) { on_bytes(s, b); }, source, v);
}
void send_text(active_messages& am, int dest, std::uint64_t source, std::string_view text) {
  am.async(dest, [](active_messages&, std::string_view t, std::uint64_t s) { on_text(t, s); }, text, source);
}

// The record of send_bytes' and send_text's calls: id (4), source (8), count (9 bytes from 255 on),
// payload; no padding (bytes need none).
constexpr std::size_t record_overhead = 4 + 8 + 9;
constexpr std::size_t threshold = detail::large_call_bytes;

TEST(active_large_calls, records_at_and_around_the_threshold_arrive_intact_by_their_path) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              got = tally{};
              active_messages am(ctx);
              const auto me = static_cast<std::uint64_t>(ctx.rank());
              const std::size_t records[] = {threshold - 1, threshold, threshold + 1, threshold + 4096,
                                             3 * threshold + 17};
              std::uint64_t total = 0;
              for (const std::size_t record : records) {
                const std::size_t n = record - record_overhead;
                total += n;
                const std::vector<std::byte> payload = make_payload(me, n);
                const std::string text(reinterpret_cast<const char*>(payload.data()), n);
                // A large call is one item; a smaller one is one per chunk.
                const std::uint64_t items =
                    record >= threshold ? 1 : (record + detail::chunk_data_bytes - 1) / detail::chunk_data_bytes;
                for (int d = 0; d < ctx.size(); ++d) {
                  const std::uint64_t before = am.stats().items_inserted;
                  send_bytes(am, d, me, payload);
                  EXPECT_EQ(am.stats().items_inserted - before, items) << "record of " << record << " bytes";
                  send_text(am, d, me, text);
                }
              }
              am.barrier();
              const auto p = static_cast<std::uint64_t>(ctx.size());
              EXPECT_EQ(got.bad, 0u);
              EXPECT_EQ(got.arrays, p * std::size(records));
              EXPECT_EQ(got.texts, p * std::size(records));
              EXPECT_EQ(got.bytes, 2 * p * total);
            }),
            0);
}

void on_small(active_messages&, std::uint64_t source, std::uint64_t value) {
  ++got.smalls;
  got.small_sum += value;
  if (value % 1000 != source) ++got.bad;
}

// Per round and destination, in this order: a small call, a large array, a chunked text, a large
// text, a small array; every PE sends to every PE (itself included), progressing now and then.
TEST(active_large_calls, mixed_with_small_and_chunked_calls_to_every_pe) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              got = tally{};
              transit::streamer_options o;
              o.buffer_items = 64;  // small buffers: inserts send and poll often
              active_messages am(ctx, o);
              const auto me = static_cast<std::uint64_t>(ctx.rank());
              const auto p = static_cast<std::uint64_t>(ctx.size());
              constexpr std::uint64_t rounds = 3;
              const std::size_t large_sizes[] = {threshold, 2 * threshold + 5, threshold + 999};
              std::uint64_t bytes_sent = 0, small_sum_sent = 0;
              for (std::uint64_t r = 0; r < rounds; ++r) {
                for (std::uint64_t i = 0; i < p; ++i) {
                  const int d = static_cast<int>((me + i) % p);
                  const std::uint64_t value = (r * p + i) * 1000 + me;
                  am.async(d, &on_small, me, value);
                  small_sum_sent += value;
                  const std::size_t large = large_sizes[(r + i) % std::size(large_sizes)];
                  send_bytes(am, d, me, make_payload(me, large));
                  const std::vector<std::byte> medium = make_payload(me, 5000);
                  send_text(am, d, me, std::string_view(reinterpret_cast<const char*>(medium.data()), medium.size()));
                  const std::vector<std::byte> big_text = make_payload(me, large + 1);
                  send_text(am, d, me,
                            std::string_view(reinterpret_cast<const char*>(big_text.data()), big_text.size()));
                  send_bytes(am, d, me, make_payload(me, 100));
                  bytes_sent += large + 5000 + (large + 1) + 100;
                  if (i % 2 == 1) am.progress();
                }
              }
              am.barrier();
              EXPECT_EQ(got.bad, 0u);
              EXPECT_EQ(got.smalls, rounds * p);
              EXPECT_EQ(got.arrays, 2 * rounds * p);
              EXPECT_EQ(got.texts, 2 * rounds * p);
              // Every PE sent the same sizes; the small values have a closed form.
              EXPECT_EQ(got.bytes, bytes_sent);
              EXPECT_EQ(ctx.allreduce(got.small_sum, reduce_op::sum), ctx.allreduce(small_sum_sent, reduce_op::sum));
            }),
            0);
}

constexpr std::uint32_t chain_length = 4;

// A large call that checks its payload, acknowledges to its origin with a small call, sends a
// chunked call to the PE after next, and passes its payload on (a large call made from the view
// of the received message) until the chain ends.
void hop(active_messages& am, std::uint64_t origin, std::uint32_t hops_left, std::span<const std::byte> payload) {
  ++got.hops;
  if (!intact(origin, payload)) ++got.bad;
  const int rank = am.ctx().rank();
  const int p = am.ctx().size();
  am.async(static_cast<int>(origin), [](active_messages&) { ++got.acks; });
  am.async((rank + 2) % p, [](active_messages&, std::span<const std::byte> b) {
    ++got.side_calls;
    got.bytes += b.size();
  }, payload.first(3000));
  if (hops_left > 0) am.async((rank + 1) % p, &hop, origin, hops_left - 1, payload);
}

// Chains of large calls, each handler making more calls; after every barrier each PE has seen
// exactly the calls of the rounds so far: barrier() waited for every nested call, and a call of
// the next round, made by a PE already past the barrier, did not run early.
TEST(active_large_calls, handlers_of_large_calls_make_calls_and_barrier_waits_for_all) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              got = tally{};
              active_messages am(ctx);
              const auto me = static_cast<std::uint64_t>(ctx.rank());
              const int next = (ctx.rank() + 1) % ctx.size();
              const std::vector<std::byte> payload = make_payload(me, threshold + 100 * me);
              for (std::uint64_t round = 1; round <= 4; ++round) {
                am.async(next, &hop, me, chain_length - 1, payload);
                am.barrier();
                // Each chain visits the chain_length PEs after its origin: every PE is visited
                // chain_length times per round, acknowledges and side calls likewise.
                EXPECT_EQ(got.hops, round * chain_length);
                EXPECT_EQ(got.acks, round * chain_length);
                EXPECT_EQ(got.side_calls, round * chain_length);
                EXPECT_EQ(got.bytes, round * chain_length * 3000);
              }
              EXPECT_EQ(got.bad, 0u);
            }),
            0);
}

struct deliberate : std::runtime_error {
  deliberate() : std::runtime_error("deliberate failure in a large call's handler") {}
};

void maybe_throw(active_messages&, std::uint64_t source, std::uint64_t i, std::span<const std::byte> v) {
  on_bytes(source, v);
  if (i % 3 == 1) {
    ++got.thrown;
    throw deliberate();
  }
}

// A large call's handler that throws: the exception comes out of the call that ran it, every other
// call runs exactly once, and the interrupted barrier resumes.
TEST(active_large_calls, a_throwing_handler_loses_no_other_call) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              got = tally{};
              active_messages am(ctx);
              const auto me = static_cast<std::uint64_t>(ctx.rank());
              const std::vector<std::byte> payload = make_payload(me, threshold);
              std::uint64_t caught = 0;
              constexpr std::uint64_t calls = 6;
              for (std::uint64_t i = 0; i < calls; ++i) {
                for (int d = 0; d < ctx.size(); ++d) am.async(d, &maybe_throw, me, i, payload);
                try {
                  am.progress();
                } catch (const deliberate&) {
                  ++caught;
                }
              }
              for (;;) {
                try {
                  am.barrier();
                  break;
                } catch (const deliberate&) {
                  ++caught;
                }
              }
              const auto p = static_cast<std::uint64_t>(ctx.size());
              EXPECT_EQ(caught, got.thrown);
              EXPECT_EQ(got.thrown, 2 * p);
              EXPECT_EQ(got.arrays, calls * p);
              EXPECT_EQ(got.bytes, calls * p * threshold);
              EXPECT_EQ(got.bad, 0u);
            }),
            0);
}

}  // namespace
