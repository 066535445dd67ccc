#pragma once
// Calibration's raw messages (link_calibration::raw_curve): the network library's own messages
// between the two PEs that calibration streams between, with none of transit's layers, so that a
// profile tells the library's cost per message from transit's. The mpi backend with one PE per
// rank measures them (mpi_raw_messages.cpp); elsewhere there are none.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace transit {
class context;
}

namespace transit::detail {

class raw_message_stream {
 public:
  /// Collective: a communicator of its own where raw messages can be streamed (the transport
  /// offers MPI with one PE per rank), else nothing (measurable() false).
  explicit raw_message_stream(context& ctx);
  ~raw_message_stream();
  raw_message_stream(const raw_message_stream&) = delete;
  raw_message_stream& operator=(const raw_message_stream&) = delete;

  [[nodiscard]] bool measurable() const noexcept { return state_ != nullptr; }
  /// Collective, only where measurable(): streams `count` messages of `bytes` each way between PEs
  /// a and b as a plain MPI program does (MPI_Isend and MPI_Irecv, a window of them in flight; the
  /// sender writes every byte from `pattern`, the receiver reads every byte into `checksum`), while
  /// the other PEs wait; returns the time, agreed on every PE.
  double stream(int a, int b, std::size_t bytes, std::uint64_t count, const std::vector<std::byte>& pattern,
                std::uint64_t& checksum);

 private:
  struct state;
  context& ctx_;
  std::unique_ptr<state> state_;
};

}  // namespace transit::detail
