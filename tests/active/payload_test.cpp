// Payloads of every size that matters: 0 and 1 byte, around the largest call item (above it a call
// travels in chunks), around the record that one chunk holds, around one chunk streamer buffer,
// and 100 MiB. Every byte is checked at the destination; every call runs once.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "transit/transit.hpp"

namespace {

using transit::active_messages;
using transit::context;
using transit::reduce_op;
namespace detail = transit::detail;

std::byte byte_at(std::uint64_t source, std::uint64_t n, std::uint64_t k) {
  return static_cast<std::byte>((source * 131 + n * 7 + k * 13) & 0xff);
}

struct received {
  std::uint64_t arrays = 0, texts = 0, bytes = 0, bad = 0;
};
thread_local received got;

void on_bytes(active_messages&, std::uint64_t source, std::span<const std::byte> payload) {
  ++got.arrays;
  got.bytes += payload.size();
  for (std::size_t k = 0; k < payload.size(); ++k)
    if (payload[k] != byte_at(source, payload.size(), k)) {
      ++got.bad;
      return;
    }
}

void on_text(active_messages&, const std::string& text, std::uint64_t source) {
  ++got.texts;
  got.bytes += text.size();
  for (std::size_t k = 0; k < text.size(); ++k)
    if (static_cast<std::byte>(text[k]) != byte_at(source, text.size(), k)) {
      ++got.bad;
      return;
    }
}

// Payload sizes n whose record (id, source, count, bytes) sits just below, at and just above each
// boundary. The record of on_bytes is 4 + 8 + count + n bytes, the count taking 1 byte below 255
// and 9 from there on.
std::vector<std::size_t> boundary_sizes(std::size_t buffer_items) {
  const auto payload_for = [](std::size_t record) {
    return record - 12 - (record - 13 < 255 ? 1 : 9);
  };
  // Buffers of the chunk streamer hold buffer_items * 16 bytes (see active_messages.hpp).
  const std::size_t chunks_per_buffer = std::max<std::size_t>(1, buffer_items * 16 / detail::chunk_bytes);
  std::vector<std::size_t> sizes = {0, 1, 254, 255};
  for (const std::size_t boundary :
       {detail::largest_call, detail::chunk_data_bytes, chunks_per_buffer * detail::chunk_data_bytes,
        3 * chunks_per_buffer * detail::chunk_data_bytes}) {
    for (const std::size_t record : {boundary - 1, boundary, boundary + 1}) sizes.push_back(payload_for(record));
  }
  return sizes;
}

void every_size_to_every_pe(context& ctx, std::size_t buffer_items) {
  got = received{};
  transit::streamer_options o;
  o.buffer_items = buffer_items;
  active_messages am(ctx, o);
  const auto me = static_cast<std::uint64_t>(ctx.rank());
  const std::vector<std::size_t> sizes = boundary_sizes(buffer_items);
  std::uint64_t total = 0;
  for (const std::size_t n : sizes) {
    total += n;
    std::vector<std::byte> payload(n);
    for (std::size_t k = 0; k < n; ++k) payload[k] = byte_at(me, n, k);
    const std::string text(reinterpret_cast<const char*>(payload.data()), n);
    for (int d = 0; d < ctx.size(); ++d) {
      // Lambdas, not the function pointers: those add an 8-byte code reference to the record.
      am.async(d, [](active_messages& a, std::uint64_t source, std::span<const std::byte> bytes) {
        on_bytes(a, source, bytes);
      }, me, payload);
      am.async(d, [](active_messages& a, const std::string& t, std::uint64_t source) { on_text(a, t, source); }, text, me);
    }
  }
  am.barrier();
  const auto p = static_cast<std::uint64_t>(ctx.size());
  EXPECT_EQ(got.bad, 0u) << "buffer_items " << buffer_items;
  EXPECT_EQ(got.arrays, p * sizes.size());
  EXPECT_EQ(got.texts, p * sizes.size());
  EXPECT_EQ(got.bytes, 2 * p * total);
}

TEST(active_payloads, sizes_around_every_boundary_arrive_intact) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              every_size_to_every_pe(ctx, 1024);  // 16 chunks per chunk buffer
              every_size_to_every_pe(ctx, 64);    // 1 chunk per buffer: every chunk a message
            }),
            0);
}

thread_local std::uint64_t large_sum = 0, large_count = 0;

TEST(active_payloads, a_100_MiB_vector_arrives_whole) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              large_sum = large_count = 0;
              active_messages am(ctx);
              constexpr std::size_t words = (std::size_t{100} << 20) / sizeof(std::uint64_t);
              const int last = ctx.size() - 1;
              std::uint64_t expected = 0;
              if (ctx.rank() == 0) {
                std::vector<std::uint64_t> payload(words);
                for (std::size_t k = 0; k < words; ++k) payload[k] = k * 0x9E3779B97F4A7C15ull;
                for (const auto v : payload) expected += v;
                am.async(last, [](active_messages&, std::span<const std::uint64_t> v) {
                  ++large_count;
                  for (std::size_t k = 0; k < v.size(); ++k) large_sum += v[k] == k * 0x9E3779B97F4A7C15ull ? v[k] : 1;
                }, payload);
              }
              am.barrier();
              expected = ctx.allreduce(expected, reduce_op::sum);
              if (ctx.rank() == last) {
                EXPECT_EQ(large_count, 1u);
                EXPECT_EQ(large_sum, expected);
              }
            }),
            0);
}

}  // namespace
