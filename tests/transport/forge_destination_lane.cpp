// Run with PE threads under a communication thread (2 ranks x 2 threads): PE 2 (rank 1, lane 0)
// sends raw bytes on the communication threads' communicator whose prefix names destination lane
// 9 of rank 0, which runs 2. Rank 0's communication thread must report the corrupt message and end
// the job (tests/transport/CMakeLists.txt checks the status and the text).
#include <mpi.h>

#include <cstring>
#include <vector>

#include "transit/detail/runtime/context_access.hpp"
#include "transit/transit.hpp"
#include "transport/mpi/wire.hpp"
#include "transport/mpi_access.hpp"

int main(int argc, char** argv) {
  return transit::run(argc, argv, [](transit::context& ctx) {
    using namespace transit::detail;
    if (ctx.rank() == 2) {
      mpi_access& mpi = mpi_of(context_access::net(ctx));
      const mpi_wire::wire_prefix prefix{0, std::uint32_t{9} << mpi_wire::destination_lane_shift, 8};
      std::vector<std::byte> bytes(message_buffer::prefix_bytes + 8);
      std::memcpy(bytes.data(), &prefix, sizeof prefix);
      mpi.on_mpi_thread([&] {
        mpi_check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, mpi_wire::data_tag, mpi.comm()),
                  "MPI_Send");
      });
    }
    for (;;) ctx.barrier();  // until the report ends the job
  });
}
