// buffer_pool: small buffers cached within bounds; the newest large buffers kept aside and reused
// only for a size they fit without waste.
#include "transit/detail/transport/buffer_pool.hpp"

#include <gtest/gtest.h>

namespace {

using transit::detail::buffer_pool;
using transit::detail::message_buffer;

constexpr std::size_t large = buffer_pool::max_cached_bytes + 1;

TEST(buffer_pool, reuses_a_small_buffer) {
  buffer_pool pool;
  message_buffer b = pool.take(1000);
  const std::byte* where = b.payload();
  pool.give(std::move(b));
  EXPECT_EQ(pool.cached(), 1u);
  EXPECT_EQ(pool.take(900).payload(), where);
  EXPECT_EQ(pool.cached(), 0u);
}

TEST(buffer_pool, keeps_the_newest_large_buffers_aside) {
  buffer_pool pool;
  message_buffer first = pool.take(large), second = pool.take(large), third = pool.take(2 * large);
  const std::byte* second_at = second.payload();
  const std::byte* third_at = third.payload();
  pool.give(std::move(first));
  pool.give(std::move(second));
  pool.give(std::move(third));  // the first makes way
  EXPECT_EQ(pool.large_kept(), buffer_pool::max_large);
  EXPECT_EQ(pool.cached(), 0u) << "large buffers do not count against the small cache";
  message_buffer again = pool.take(large);
  EXPECT_EQ(again.payload(), second_at) << "the 2x-sized one would be wasteful for this size";
  EXPECT_EQ(again.size(), 0u);
  message_buffer bigger = pool.take(2 * large);
  EXPECT_EQ(bigger.payload(), third_at);
  EXPECT_EQ(pool.large_kept(), 0u);
  EXPECT_GE(pool.take(large).capacity(), large) << "an empty pool allocates";
}

TEST(buffer_pool, never_hands_a_large_buffer_to_a_small_request) {
  buffer_pool pool;
  pool.give(pool.take(large));
  message_buffer small = pool.take(64);
  EXPECT_LT(small.capacity(), large);
  EXPECT_EQ(pool.large_kept(), 1u);
}

}  // namespace
