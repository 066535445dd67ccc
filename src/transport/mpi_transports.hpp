#pragma once
// Private to the library: what the mpi backend offers the runtime's launch (src/runtime/launch/):
// the transports of this rank's PEs, one per rank or one per PE thread (lane), and the
// communication thread's loop that the runtime drives. The runtime makes the contexts and runs
// the threads; no backend class shows here.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "transit/detail/transport/transport.hpp"
#include "transport/mpi_access.hpp"

namespace transit::detail {

class comm_thread_hub;
class rank_lanes;

/// Collective over `comm`: the transport of this rank's one PE, on a duplicate of `comm`.
std::unique_ptr<transport> make_rank_transport(MPI_Comm comm);

/// Throws std::invalid_argument naming the variable for a bad value of the mpi transport's
/// environment (TRANSIT_MPI_RECEIVE, TRANSIT_MAX_MESSAGE_BYTES), before any transport is made.
void check_mpi_transport_environment();

/// The transports of this rank's `lanes` PE threads (--transit-threads-per-rank): PE threads that
/// each call MPI, or PE threads served by a communication thread (the thread that makes this,
/// which then runs run_comm_thread()).
class rank_lane_transports {
 public:
  /// Collective over `comm`. With `comm_thread`, a `trace_dir` (--transit-trace) makes the
  /// communication thread record its hand-offs, at most `trace_events`.
  rank_lane_transports(MPI_Comm comm, int lanes, bool comm_thread, const std::string& trace_dir,
                       std::size_t trace_events);
  ~rank_lane_transports();
  rank_lane_transports(const rank_lane_transports&) = delete;
  rank_lane_transports& operator=(const rank_lane_transports&) = delete;

  int mpi_rank() const noexcept;
  bool has_comm_thread() const noexcept { return hub_ != nullptr; }
  /// The transport of PE thread `lane`, made and used on that thread.
  std::unique_ptr<transport> make(int lane);
  /// With a communication thread: its loop, on the thread that made this; returns once every
  /// lane's transport is gone (and ends the job if a lane asked to: end_job_from_lane).
  void run_comm_thread();
  /// A failing PE thread (already reported) ends the whole job: through the communication thread
  /// when there is one, else at once (abort_job). Never returns.
  [[noreturn]] void end_job_from_lane();
  /// After every lane's transport is gone (and run_comm_thread returned): the teardown.
  void close();

 private:
  std::unique_ptr<comm_thread_hub> hub_;  // outlives the lanes, whose groups live on its endpoint
  std::shared_ptr<rank_lanes> lanes_;
};

}  // namespace transit::detail
