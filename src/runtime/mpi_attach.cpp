// The MPI front end of the runtime (transit/mpi.hpp): a session on a communicator the program owns,
// and Open MPI's environment before the program's MPI_Init, both asked of the seam's launch.
#include "transit/mpi.hpp"

#include "runtime/launch.hpp"
#include "transport/mpi_transports.hpp"

namespace transit {

bool prepare_mpi_environment() { return detail::prepare_mpi_before_init(detail::launch_request_of(run_options{})); }

session attach(MPI_Comm comm, const run_options& options) {
  return detail::session_access::make(detail::attach_process(comm, detail::launch_request_of(options)), options);
}

}  // namespace transit
