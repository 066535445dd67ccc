// One message above 2^31 bytes (MPI counts bytes in int): it travels in pieces and arrives whole.
// About 4.3 GB of memory in all; not run under sanitizers (see CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "test_support.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace {

using transit::detail::context_access;
using transit::detail::message;
using transit::detail::step_result;

constexpr std::size_t large = (std::size_t{1} << 31) + 4099;

std::uint64_t word_at(std::size_t i) { return i * 0x9E3779B97F4A7C15ull; }

TEST(transport, a_message_above_two_gib_arrives_whole) {
  EXPECT_EQ(transit::testing::run_spmd([](transit::context& ctx) {
              const auto ch = context_access::mail(ctx).open_channel();
              auto& net = context_access::net(ctx);
              const int receiver = ctx.size() - 1;
              if (ctx.rank() == 0) {
                auto b = net.allocate(large);
                auto* words = reinterpret_cast<std::uint64_t*>(b.payload());
                for (std::size_t i = 0; i < large / 8; ++i) words[i] = word_at(i);
                for (std::size_t i = large / 8 * 8; i < large; ++i) b.payload()[i] = std::byte{0x5a};
                b.set_size(large);
                net.send(receiver, ch, std::move(b));
              }
              if (ctx.rank() == receiver) {
                std::vector<message> inbox;
                context_access::wait_until(
                    ctx,
                    [&] { return context_access::mail(ctx).take(ch, inbox) ? step_result::done : step_result::idle; },
                    "large message");
                ASSERT_EQ(inbox.size(), 1u);
                ASSERT_EQ(inbox[0].data.size(), large);
                const auto* words = reinterpret_cast<const std::uint64_t*>(inbox[0].data.payload());
                std::size_t wrong = 0;
                for (std::size_t i = 0; i < large / 8; ++i) wrong += words[i] != word_at(i) ? 1 : 0;
                for (std::size_t i = large / 8 * 8; i < large; ++i) wrong += inbox[0].data.payload()[i] != std::byte{0x5a};
                EXPECT_EQ(wrong, 0u);
              }
              ctx.barrier();
            }),
            0);
}

}  // namespace
