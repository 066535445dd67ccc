#pragma once
// Private to the transport layer: what the local backend offers the seam's launch
// (transport/launch.hpp): its launch, and the transports of one job whose PEs are all threads of
// this process, sharing the job's failure state (transport/process_transports.hpp). No backend
// class shows here.
#include <memory>

#include "transport/process_transports.hpp"

namespace transit::detail {

class backend_launch;

/// The local backend's launch (src/transport/local/launch.cpp): every PE a thread of this process.
backend_launch& local_backend_launch();

/// The transports of a local job of `pes` PEs, on one shared world (src/transport/local/): local
/// PE numbers are the job's; end_job records the failure and returns.
std::unique_ptr<process_transports> make_local_transports(int pes);

}  // namespace transit::detail
