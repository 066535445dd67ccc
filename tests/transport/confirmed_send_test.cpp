// transport::send_confirmed: a send counted as pending until the receiving PE has taken the
// message off the network (the mpi transport: MPI_Issend, matched only by the receiver's own
// probe), which lets a step end without an acknowledgement of transit's (docs/streamer.md).
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "test_support.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transport/mpi_access.hpp"

namespace {

using namespace transit;
using transit::detail::context_access;
using transit::detail::message;
using transit::detail::mpi_of;
using transit::detail::send_confirmations;
using transit::detail::step_result;

constexpr int ready_tag = 999;  // none of the transport's tags
constexpr std::uint32_t channel = 5;

bool receives_posted() {
  const char* mode = std::getenv("TRANSIT_MPI_RECEIVE");
  return mode != nullptr && std::string_view(mode) == "posted";
}

// PE 0: sends `payload` to PE 1, confirmed, then polls 2000 times; PE 1 has not looked for it yet,
// so it is still pending. Returns its count.
std::shared_ptr<send_confirmations> send_to_pe_1_and_poll(transit::detail::transport& net, std::int64_t payload) {
  auto pending = std::make_shared<send_confirmations>();
  auto b = net.allocate(sizeof payload);
  std::memcpy(b.payload(), &payload, sizeof payload);
  b.set_size(sizeof payload);
  net.send_confirmed(1, channel, std::move(b), pending);
  EXPECT_EQ(pending->pending.load(), 1u);
  std::vector<message> sink;
  for (int i = 0; i < 2000; ++i) net.poll(sink, 16);
  EXPECT_TRUE(sink.empty());
  EXPECT_EQ(pending->pending.load(), 1u) << "confirmed before PE 1 looked for it";
  return pending;
}

// `sink` holds exactly PE 0's one message on `channel`, carrying `payload` whole.
void expect_from_pe_0(transit::detail::transport& net, std::vector<message>& sink, std::int64_t payload) {
  ASSERT_EQ(sink.size(), 1u);
  EXPECT_EQ(sink[0].source, 0);
  EXPECT_EQ(sink[0].channel, channel);
  ASSERT_EQ(sink[0].data.size(), sizeof payload);
  std::int64_t got = 0;
  std::memcpy(&got, sink[0].data.payload(), sizeof got);
  EXPECT_EQ(got, payload);
  net.recycle(std::move(sink[0].data));
}

// Which transports confirm: the local one (the receiving PE's poll drains its inbox), and the mpi
// one with a PE per rank (a message to a PE thread of the same rank is a pointer hand-off that
// nothing confirms), and not with receives posted ahead on real MPI, where a posted receive that
// matched a large message may still be receiving when the send completes.
TEST(transport_confirmed_send, the_local_transport_and_the_mpi_one_with_a_pe_per_rank_confirm) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              const auto& net = context_access::net(ctx);
              const bool mpi = net.mpi() != nullptr;
              const bool confirms = !mpi || (ctx.options().threads_per_rank == 1 && !receives_posted());
              EXPECT_EQ(net.confirmable_bytes() > 0, confirms);
              if (confirms) {
                EXPECT_GE(net.confirmable_bytes(), std::size_t{1} << 16);
              }
              // On real MPI the probe that matches a confirmed message is the poll that hands it over
              // (only a simulated rank, whose receives are posted ahead, confirms before that).
              EXPECT_FALSE(net.confirms_before_hand_over());
              ctx.barrier();
            }),
            0);
}

// PE 0 sends to PE 1 while PE 1 waits in a plain MPI_Recv, never probing for transit's messages:
// the send stays pending however often PE 0 polls. Once PE 1 polls and takes the message, whole,
// PE 0's count falls to 0.
TEST(transport_confirmed_send, is_pending_until_the_receiver_takes_the_message) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              auto& net = context_access::net(ctx);
              if (net.mpi() == nullptr || net.confirmable_bytes() == 0 || ctx.size() < 2) return;
              const MPI_Comm comm = mpi_of(net).comm();
              const std::int64_t payload = 0x5eed0000 + ctx.size();
              int token = 0;
              if (ctx.rank() == 0) {
                const auto pending = send_to_pe_1_and_poll(net, payload);
                std::vector<message> sink;
                ASSERT_EQ(MPI_Send(&token, 1, MPI_INT, 1, ready_tag, comm), MPI_SUCCESS);
                context_access::wait_until(
                    ctx,
                    [&] {
                      net.poll(sink, 16);
                      return pending->pending.load() == 0 ? step_result::done : step_result::idle;
                    },
                    "test: the confirmation");
                EXPECT_TRUE(sink.empty());
              } else if (ctx.rank() == 1) {
                ASSERT_EQ(MPI_Recv(&token, 1, MPI_INT, 0, ready_tag, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
                std::vector<message> sink;
                context_access::wait_until(
                    ctx, [&] { return net.poll(sink, 16) > 0 ? step_result::done : step_result::idle; },
                    "test: the confirmed message");
                expect_from_pe_0(net, sink, payload);
              }
              ctx.barrier();
            }),
            0);
}

// The local backend: PE 0's confirmed send stays pending, however often PE 0 polls, until PE 1
// drains its inbox; the same poll hands PE 1 the message, whole.
TEST(transport_confirmed_send, local_is_pending_until_the_receiver_polls) {
  static std::atomic<int> stage{0};  // the PEs are threads of this process
  stage = 0;
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              auto& net = context_access::net(ctx);
              if (net.mpi() != nullptr || ctx.size() < 2) return;
              const std::int64_t payload = 0x10ca1;
              if (ctx.rank() == 0) {
                const auto pending = send_to_pe_1_and_poll(net, payload);
                stage = 1;
                context_access::wait_until(
                    ctx, [&] { return pending->pending.load() == 0 ? step_result::done : step_result::idle; },
                    "test: the confirmation");
              } else if (ctx.rank() == 1) {
                context_access::wait_until(
                    ctx, [&] { return stage.load() == 1 ? step_result::done : step_result::idle; }, "test: PE 0's polls");
                std::vector<message> sink;
                net.poll(sink, 16);
                expect_from_pe_0(net, sink, payload);
              }
              ctx.barrier();
            }),
            0);
}

}  // namespace
