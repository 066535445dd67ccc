#pragma once
#include <functional>

#include "transit/runtime/context.hpp"

namespace transit {

/// Runs `body` once on every PE (SPMD) and returns 0 when all of them return.
///
/// Removes the --transit-* options it understands from argv (see run_options). Backend: local
/// (threads in this process) unless --transit-backend=mpi, TRANSIT_BACKEND=mpi, or an MPI
/// launcher started the process. Bad options print "transit: error: ..." and return 2.
///
/// An exception escaping `body` on any PE prints "transit: PE <r>: <what()>" and ends the whole
/// job: on mpi through MPI_Abort (nonzero exit status); on local the other PEs are unwound at
/// their next transit call and run returns 1 (a PE stuck outside transit for more than a few
/// seconds ends the process with status 1).
int run(int& argc, char**& argv, std::function<void(context&)> body);

/// The transit version, "major.minor.patch". Local, at any time.
const char* version() noexcept;

}  // namespace transit
