// The C API's streamer (c_api::byte_streamer) under the streamer's one wire policy: a received
// message is checked whole before any of its items moves, and a message that fails is refused
// whole, reported as corrupt (naming the channel and the source) and forgotten, so that the
// streamer goes on. The case: an item for this PE followed by a broadcast destination, which a
// C-API streamer never sends.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "c_api/byte_streamer.hpp"
#include "streamer_internals.hpp"
#include "test_support.hpp"

namespace {

using namespace transit;
using detail::streamer_test_access;

struct received {
  int size = 0;
  std::uint64_t items = 0;
  std::uint64_t stray = 0;  // values no PE inserted in the normal step
};

int record(const void* items, std::size_t count, void* user) {
  auto& r = *static_cast<received*>(user);
  const auto* values = static_cast<const std::uint64_t*>(items);
  for (std::size_t i = 0; i < count; ++i) r.stray += values[i] < 1000 || values[i] / 1000 > std::uint64_t(r.size);
  r.items += count;
  return 0;
}

TEST(c_api_wire, a_broadcast_destination_is_refused_before_any_item_is_delivered) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options o;
              o.grid = virtual_grid::balanced(ctx.size(), 2);
              o.buffer_items = 4;
              received got;
              got.size = ctx.size();
              c_api::byte_streamer s(ctx, o, sizeof(std::uint64_t), record, &got);
              const std::uint32_t channel = streamer_test_access::channel(s);
              // PE 0 is attacked on an in-link whose messages carry destinations.
              int attacker = -1, phase = -1;
              if (ctx.rank() == 0) {
                for (const auto& [pe, p] : streamer_test_access::in_links(s)) {
                  if (!streamer_test_access::route_plan(s).ends_route(p)) std::tie(attacker, phase) = std::pair(pe, p);
                }
              }
              attacker = ctx.allreduce(attacker, reduce_op::max);
              phase = ctx.allreduce(phase, reduce_op::max);
              if (attacker < 0) GTEST_SKIP() << "no route of two hops on " << o.grid->str();
              if (ctx.rank() == attacker) {
                // Two items: the first for PE 0, the second a broadcast from root 0.
                constexpr std::uint32_t n = 2;
                const std::size_t dest_at = (sizeof(detail::wire_header) + n * 8 + 3) & ~std::size_t{3};
                std::vector<std::byte> bytes(dest_at + 4 * n);
                const detail::wire_header h{n, static_cast<std::uint8_t>(phase), transit::detail::has_destinations, 0, 0};
                std::memcpy(bytes.data(), &h, sizeof h);
                const std::uint64_t values[n] = {7, 8};
                std::memcpy(bytes.data() + sizeof h, values, sizeof values);
                const std::int32_t dests[n] = {0, -1};
                std::memcpy(bytes.data() + dest_at, dests, sizeof dests);
                streamer_test_access::send_raw(ctx, 0, channel, bytes);
              }
              if (ctx.rank() == 0) {
                const std::string expected = streamer_test_access::corrupt_prefix(channel, attacker);
                bool refused = false;
                while (!refused) {
                  try {
                    if (!s.progress()) std::this_thread::yield();
                  } catch (const std::runtime_error& e) {
                    refused = true;
                    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
                  }
                }
                // Nothing of the refused message was delivered or counted.
                EXPECT_EQ(got.items, 0u);
                EXPECT_EQ(s.stats().items_delivered, 0u);
                EXPECT_EQ(s.stats().messages_received, 0u);
              }
              // Then a normal step: every PE sends 100 items to every PE, each delivered once.
              ctx.barrier();
              constexpr int per_peer = 100;
              std::vector<int> dests;
              std::vector<std::uint64_t> items;
              for (int k = 0; k < per_peer; ++k) {
                for (int pe = 0; pe < ctx.size(); ++pe) {
                  dests.push_back(pe);
                  items.push_back(std::uint64_t(ctx.rank() + 1) * 1000 + std::uint64_t(k));
                }
              }
              s.insert(dests.data(), reinterpret_cast<const std::byte*>(items.data()), items.size());
              s.finish();
              EXPECT_EQ(got.items, std::uint64_t(per_peer) * std::uint64_t(ctx.size()));
              EXPECT_EQ(got.stray, 0u);
            }),
            0);
}

}  // namespace
