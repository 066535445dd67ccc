// The mpi backend's transports of this rank's PEs (src/transport/mpi_transports.hpp).
#include "transport/mpi_transports.hpp"

#include <mpi.h>

#include <thread>

#include "transport/launch.hpp"
#include "transport/mpi/comm_thread.hpp"
#include "transport/mpi/environment.hpp"
#include "transport/mpi/lanes.hpp"
#include "transport/mpi/transport.hpp"

namespace transit::detail {

void check_rank_transport_environment() {
  static_cast<void>(mpi_transport::receive_mode_from_environment());
  static_cast<void>(max_message_bytes_from_environment());
  static_cast<void>(mpi_transport::collectives_from_environment());
}

namespace {

// A failing PE is reported ("transit: PE <r>: <what>") before it ends the whole job: other ranks
// cannot be unwound.
void report_lane_failure(MPI_Comm comm, int lanes, int lane, const std::string& what) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  report_failure(rank * lanes + lane, what.c_str());
}

// One PE per rank, on a duplicate of the communicator.
class rank_transports final : public process_transports {
 public:
  explicit rank_transports(MPI_Comm comm) : comm_(comm) {}
  std::unique_ptr<transport> make(int /*local_pe: 0*/) override { return std::make_unique<mpi_transport>(comm_); }
  void end_job(int lane, std::string what) override {
    report_lane_failure(comm_, 1, lane, what);
    abort_job();
  }

 private:
  MPI_Comm comm_;
};

class rank_lane_transports final : public process_transports {
 public:
  rank_lane_transports(MPI_Comm comm, int lanes, bool comm_thread, const std::string& trace_dir,
                       std::size_t trace_events)
      : comm_(comm), lane_count_(lanes), driver_thread_(std::this_thread::get_id()) {
    if (comm_thread) hub_ = std::make_unique<comm_thread_hub>(comm, lanes, trace_dir, trace_events);
    lanes_ = std::make_shared<rank_lanes>(comm, lanes, hub_.get());
  }
  std::unique_ptr<transport> make(int lane) override {
    if (hub_) return std::make_unique<comm_thread_lane>(lanes_, lane);
    return std::make_unique<mpi_transport>(lanes_, lane);
  }
  bool has_driver() const noexcept override { return hub_ != nullptr; }
  void run_driver() override { hub_->run(lanes_->inboxes()); }
  void end_job(int lane, std::string what) override {
    report_lane_failure(comm_, lane_count_, lane, what);
    // A PE thread hands the end to the communication thread, which owns MPI; the thread that made
    // this (the driver, refused a PE thread before it drives) ends the job itself.
    if (hub_ && std::this_thread::get_id() != driver_thread_) hub_->abort_from_lane();
    abort_job();
  }
  void close() override {
    lanes_.reset();  // its groups' collectives live on the hub's endpoint: gone before it
    if (hub_) hub_->close();
  }

 private:
  MPI_Comm comm_;
  int lane_count_;
  std::thread::id driver_thread_;
  std::unique_ptr<comm_thread_hub> hub_;  // outlives the lanes, whose groups live on its endpoint
  std::shared_ptr<rank_lanes> lanes_;
};

}  // namespace

std::unique_ptr<process_transports> make_rank_lane_transports(MPI_Comm comm, int lanes, bool comm_thread,
                                                              const std::string& trace_dir, std::size_t trace_events) {
  if (lanes == 1 && !comm_thread) return std::make_unique<rank_transports>(comm);
  return std::make_unique<rank_lane_transports>(comm, lanes, comm_thread, trace_dir, trace_events);
}

}  // namespace transit::detail
