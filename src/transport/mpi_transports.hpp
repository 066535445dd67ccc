#pragma once
// Private to the library: what the mpi backend offers the seam's launch (transport/launch.hpp):
// its launch, and the transports of this rank's PEs, one per rank or one per PE thread (lane)
// behind transport/process_transports.hpp, whose driver is the communication thread; and a process
// on a communicator the program owns (attach_to_program_group). The runtime makes the contexts and
// runs the threads; no backend class shows here.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "transit/detail/transport/transport.hpp"
#include "transport/launch.hpp"
#include "transport/mpi_errors.hpp"
#include "transport/process_transports.hpp"

namespace transit::detail {

/// The mpi backend's launch (src/transport/mpi/launch.cpp): MPI's initialisation, one process per
/// rank on MPI_COMM_WORLD.
backend_launch& mpi_backend_launch();

/// Collective over `comm` (transit::attach, through attach_to_program_group): this rank's part of
/// a job on a communicator the program owns, which has initialised MPI. Throws
/// std::invalid_argument, naming what it got and expected, for MPI's state, the communicator, the
/// thread level or options the communicator cannot run.
std::unique_ptr<process_launch> attach_process(MPI_Comm comm, const launch_request& request);

/// Local, before MPI_Init (transit::prepare_mpi_environment): sets Open MPI's variables as
/// run_program does; false, changing nothing, once MPI is initialised.
bool prepare_mpi_before_init(const launch_request& request);

/// Throws std::invalid_argument naming the variable for a bad value of the mpi transport's
/// environment (TRANSIT_MPI_RECEIVE, TRANSIT_MAX_MESSAGE_BYTES, TRANSIT_MPI_COLLECTIVES), before any
/// transport is made.
void check_rank_transport_environment();

/// Collective over `comm`: the transports of this rank's `lanes` PE threads
/// (--transit-threads-per-rank; local PE = lane), PE threads that each call MPI, or, with
/// `comm_thread`, PE threads served by a communication thread: the thread that makes this is
/// the driver (has_driver(), run_driver()), and a `trace_dir` (--transit-trace) makes it record
/// its hand-offs, at most `trace_events`. end_job ends the whole job (through the communication
/// thread when there is one) and never returns.
std::unique_ptr<process_transports> make_rank_lane_transports(MPI_Comm comm, int lanes, bool comm_thread,
                                                              const std::string& trace_dir, std::size_t trace_events);

}  // namespace transit::detail
