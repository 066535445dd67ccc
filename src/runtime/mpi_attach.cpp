// The runtime's front end for programs that start MPI themselves (transit/mpi.hpp): a session on a
// communicator the program owns, and the environment before the program's MPI_Init, both asked of
// the seam's launch (transport/launch.hpp), which knows the backend behind the communicator.
#include "transit/mpi.hpp"

#include "runtime/launch.hpp"

namespace transit {

bool prepare_mpi_environment() { return detail::prepare_program_start(detail::launch_request_of(run_options{})); }

session attach(MPI_Comm comm, const run_options& options) {
  return detail::session_access::make(detail::attach_to_program_group(&comm, detail::launch_request_of(options)),
                                      options);
}

}  // namespace transit
