#pragma once
// The mpi backend: one PE per rank, non-blocking point-to-point on a communicator of its own.
//
// Flow control, so no receiver's unexpected-message queue grows without bound: every
// `sync_interval`-th message to a destination is sent synchronously (MPI_Issend), and at most
// `max_unacked` such messages per destination may be unmatched; later messages wait in a
// per-destination backlog here, at the sender, drained as the receiver matches. MPI's
// non-overtaking rule then bounds the unmatched messages from one sender to
// sync_interval * (max_unacked + 1). send() itself never blocks, so a PE that is waiting can
// always keep receiving (no hold-and-wait).
#include <mpi.h>

#include <deque>
#include <vector>

#include "transit/transport/transport.hpp"

namespace transit::detail {

/// Throws std::runtime_error with MPI's own error string unless rc is MPI_SUCCESS.
void mpi_check(int rc, const char* call);

class mpi_transport final : public transport {
 public:
  static constexpr int sync_interval = 16;
  static constexpr int max_unacked = 4;

  /// Collective over `parent`: duplicates it, so transit's traffic never meets the program's.
  explicit mpi_transport(MPI_Comm parent);
  ~mpi_transport() override;

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string_view backend() const noexcept override { return "mpi"; }
  void send(int dest, std::uint32_t channel, message_buffer&& data) override;
  std::size_t poll(std::vector<message>& sink, std::size_t max) override;
  std::size_t pending_sends() const noexcept override { return in_flight_.size() + backlogged_; }
  std::unique_ptr<collective_group> make_group() override;
  bool aborted() const noexcept override { return false; }
  [[noreturn]] void end_job(const std::string& why) override;
  MPI_Comm comm() const noexcept { return comm_; }

 private:
  struct in_flight {
    message_buffer data;
    int dest;
    bool synchronous;
  };
  void post(int dest, message_buffer&& data);
  void complete_sends();

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
  std::vector<MPI_Request> requests_;  // parallel to in_flight_
  std::vector<in_flight> in_flight_;
  std::vector<int> since_sync_;        // per destination
  std::vector<int> unacked_;           // per destination
  std::vector<std::deque<message_buffer>> backlog_;  // per destination
  std::size_t backlogged_ = 0;
  std::vector<message> to_self_;
  std::vector<int> completed_;         // scratch for MPI_Testsome
};

}  // namespace transit::detail
