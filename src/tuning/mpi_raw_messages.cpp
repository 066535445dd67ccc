// Calibration's raw messages over MPI (raw_messages.hpp). A build without MPI has the fallback at
// the end of calibrate_streamer.cpp instead.
#include <mpi.h>

#include <algorithm>
#include <cstring>

#include "raw_messages.hpp"
#include "core/backoff.hpp"
#include "transit/runtime/context.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transport/mpi_access.hpp"
#include "transport/mpi_errors.hpp"

namespace transit::detail {

struct raw_message_stream::state {
  MPI_Comm comm = MPI_COMM_NULL;
};

raw_message_stream::raw_message_stream(context& ctx) : ctx_(ctx) {
  // Every PE answers alike: the capability is the job's, not one PE's.
  mpi_access* mpi = context_access::net(ctx).mpi();
  if (mpi == nullptr || mpi->lanes() != 1) return;
  state_ = std::make_unique<state>();
  state_->comm = duplicate_communicator(mpi->comm());
}

raw_message_stream::~raw_message_stream() {
  if (state_ && state_->comm != MPI_COMM_NULL) MPI_Comm_free(&state_->comm);
}

double raw_message_stream::stream(int a, int b, std::size_t bytes, std::uint64_t count,
                                  const std::vector<std::byte>& pattern, std::uint64_t& checksum) {
  // A window as a plain streaming program keeps: enough in flight to hide the wire's latency.
  constexpr std::size_t window = 16;
  const int me = ctx_.rank();
  const bool active = me == a || me == b;
  const int peer = me == a ? b : a;
  const int size = static_cast<int>(bytes);
  ctx_.barrier();
  const auto start = steady_clock::now();
  double elapsed = 0;
  if (active) {
    // Slots 0..window-1 receive, window..2 window-1 send; one MPI_Testsome a round over all of
    // them (one pass of MPI's progress engine), each completed slot reused at once.
    const std::size_t slot_bytes = std::max<std::size_t>(bytes, 1);
    std::vector<std::byte> buffers(2 * window * slot_bytes);
    std::vector<MPI_Request> requests(2 * window, MPI_REQUEST_NULL);
    std::vector<int> done(2 * window);
    std::uint64_t posted = 0, received = 0, sent = 0, completed = 0;
    const auto receive = [&](std::size_t slot) {
      mpi_check(MPI_Irecv(buffers.data() + slot * slot_bytes, size, MPI_BYTE, peer, 0, state_->comm, &requests[slot]),
                "MPI_Irecv");
      ++posted;
    };
    const auto send = [&](std::size_t slot) {
      std::byte* at = buffers.data() + slot * slot_bytes;
      if (bytes > 0) std::memcpy(at, pattern.data(), bytes);
      mpi_check(MPI_Isend(at, size, MPI_BYTE, peer, 0, state_->comm, &requests[slot]), "MPI_Isend");
      ++sent;
    };
    for (std::size_t k = 0; k < window && posted < count; ++k) receive(k);
    for (std::size_t k = 0; k < window && sent < count; ++k) send(window + k);
    backoff wait;
    while (received < count || completed < count) {
      int n = 0;
      mpi_check(MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &n, done.data(), MPI_STATUSES_IGNORE),
                "MPI_Testsome");
      if (n == MPI_UNDEFINED) n = 0;
      for (int k = 0; k < n; ++k) {
        const auto slot = static_cast<std::size_t>(done[static_cast<std::size_t>(k)]);
        if (slot < window) {
          const std::byte* at = buffers.data() + slot * slot_bytes;
          std::uint64_t sum = 0;
          for (std::size_t off = 0; off + 8 <= bytes; off += 8) {
            std::uint64_t word;
            std::memcpy(&word, at + off, 8);
            sum += word;
          }
          checksum += sum;
          ++received;
          if (posted < count) receive(slot);
        } else {
          ++completed;
          if (sent < count) send(slot);
        }
      }
      // A plain MPI program spins; a simulated rank must pass simulated time while it waits.
      if constexpr (simulated_build) {
        if (n > 0) {
          wait.reset();
        } else {
          wait.idle();
        }
      }
    }
    elapsed = seconds_since(start);
  }
  return ctx_.allreduce(elapsed, reduce_op::max);
}

}  // namespace transit::detail
