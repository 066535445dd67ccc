// The mpi backend's transports of this rank's PEs (src/transport/mpi_transports.hpp).
#include "transport/mpi_transports.hpp"

#include "transport/mpi/comm_thread.hpp"
#include "transport/mpi/environment.hpp"
#include "transport/mpi/lanes.hpp"
#include "transport/mpi/transport.hpp"

namespace transit::detail {

std::unique_ptr<transport> make_rank_transport(MPI_Comm comm) { return std::make_unique<mpi_transport>(comm); }

void check_mpi_transport_environment() {
  static_cast<void>(mpi_transport::receive_mode_from_environment());
  static_cast<void>(max_message_bytes_from_environment());
}

rank_lane_transports::rank_lane_transports(MPI_Comm comm, int lanes, bool comm_thread, const std::string& trace_dir,
                                           std::size_t trace_events) {
  if (comm_thread) hub_ = std::make_unique<comm_thread_hub>(comm, lanes, trace_dir, trace_events);
  lanes_ = std::make_shared<rank_lanes>(comm, lanes, hub_.get());
}

rank_lane_transports::~rank_lane_transports() = default;

int rank_lane_transports::mpi_rank() const noexcept { return lanes_->mpi_rank(); }

std::unique_ptr<transport> rank_lane_transports::make(int lane) {
  if (hub_) return std::make_unique<comm_thread_lane>(lanes_, lane);
  return std::make_unique<mpi_transport>(lanes_, lane);
}

void rank_lane_transports::run_comm_thread() { hub_->run(lanes_->inboxes()); }

void rank_lane_transports::end_job_from_lane() {
  if (hub_) hub_->abort_from_lane();
  abort_job();
}

void rank_lane_transports::close() {
  lanes_.reset();  // its groups' collectives live on the hub's endpoint: gone before it
  if (hub_) hub_->close();
}

}  // namespace transit::detail
