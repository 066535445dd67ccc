#pragma once
// Private to the library: what the local backend offers the runtime's launch (src/runtime/launch/):
// the transports of one job whose PEs are all threads of this process, sharing the job's failure
// state (transport/process_transports.hpp). No backend class shows here.
#include <memory>

#include "transport/process_transports.hpp"

namespace transit::detail {

/// The transports of a local job of `pes` PEs, on one shared world (src/transport/local/): local
/// PE numbers are the job's; end_job records the failure and returns.
std::unique_ptr<process_transports> make_local_transports(int pes);

}  // namespace transit::detail
