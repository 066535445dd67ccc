// Malformed messages fed to the mpi transport's receive path: raw bytes sent on the transport's own
// communicator (src/transport/mpi_access.hpp), each breaking the wire prefix in one way. Each must
// be reported as a corrupt message naming the receiver, the sender and what was wrong
// (core/wire_error.hpp), never a crash or a read out of bounds (this runs under AddressSanitizer
// too). After each, the transport must still carry normal messages.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/wire_error.hpp"
#include "test_support.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transport/mpi/wire.hpp"
#include "transport/mpi_access.hpp"

namespace {

using namespace transit;
using transit::detail::context_access;
using transit::detail::message;
using transit::detail::mpi_of;
using transit::detail::step_result;

using transit::detail::mpi_wire::data_tag;
using prefix = transit::detail::mpi_wire::wire_prefix;
constexpr int ready_tag = 999;  // none of the transport's tags
constexpr std::size_t prefix_bytes = transit::detail::message_buffer::prefix_bytes;

struct forgery {
  const char* name;
  std::vector<std::byte> bytes;
  const char* expected;  // in the report, after "mpi transport: corrupt "
};

std::vector<std::byte> wire(prefix p, std::size_t payload) {
  std::vector<std::byte> bytes(prefix_bytes + payload, std::byte{7});
  std::memcpy(bytes.data(), &p, sizeof p);
  return bytes;
}

std::vector<forgery> forgeries() {
  return {
      {"short", std::vector<std::byte>(5, std::byte{1}), "message from PE 1: 5 bytes, shorter than the 16-byte wire prefix"},
      {"empty", {}, "message from PE 1: 0 bytes, shorter than the 16-byte wire prefix"},
      {"unknown flags", wire({0, 1u << 30, 8}, 8), "wire prefix from PE 1: unknown flag bits 1073741824"},
      {"lane bits", wire({0, 3u << 8, 8}, 8), "wire prefix from PE 1: its sender's lane is 3, a rank runs 1 PE thread(s)"},
      {"size above", wire({0, 0, 64}, 8), "message on channel 0 from PE 1: its prefix says 64 payload bytes, 8 arrived"},
      {"size below", wire({2, 0, 1}, 8), "message on channel 2 from PE 1: its prefix says 1 payload bytes, 8 arrived"},
      {"long announcement", wire({0, 1, 1u << 20}, 8),
       "announcement of a large message from PE 1: 24 bytes, expected 16"},
      {"empty announcement", wire({0, 1, 0}, 0), "announcement of a large message from PE 1: it announces 0 bytes"},
  };
}

// PE 1 forges, PE 0 receives: the report is a wire_error on PE 0's own thread.
TEST(TransportWireFuzz, EveryMalformedPrefixIsReported) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.backend() != "mpi" || ctx.size() < 2) return;
              auto& net = context_access::net(ctx);
              const MPI_Comm comm = mpi_of(net).comm();
              for (const auto& f : forgeries()) {
                // PE 1 forges only once PE 0 waits for it (a token on a tag the transport never
                // receives on), so that no other wait of PE 0 meets the forgery first.
                if (ctx.rank() == 1) {
                  int token = 0;
                  ASSERT_EQ(MPI_Recv(&token, 1, MPI_INT, 0, ready_tag, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
                  ASSERT_EQ(MPI_Send(f.bytes.data(), static_cast<int>(f.bytes.size()), MPI_BYTE, 0, data_tag, comm),
                            MPI_SUCCESS);
                }
                if (ctx.rank() == 0) {
                  int token = 1;
                  ASSERT_EQ(MPI_Send(&token, 1, MPI_INT, 1, ready_tag, comm), MPI_SUCCESS);
                  std::string report;
                  std::vector<message> sink;
                  context_access::wait_until(
                      ctx,
                      [&] {
                        try {
                          net.poll(sink, 16);
                        } catch (const detail::wire_error& e) {
                          report = e.what();
                          return step_result::done;
                        }
                        return step_result::idle;
                      },
                      "a forged message");
                  EXPECT_EQ(report, std::string("mpi transport: corrupt ") + f.expected) << f.name;
                  EXPECT_TRUE(sink.empty()) << f.name;
                }
              }
              ctx.barrier();  // the transport still carries its own messages
            }),
            0);
}

}  // namespace
