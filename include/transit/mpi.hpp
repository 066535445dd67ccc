#pragma once
// transit on a communicator the program owns: include this header (it includes <mpi.h>) in a
// program that initialises MPI itself. transit.hpp does not include it.
#include "transit/detail/core/cxx20.hpp"  // first: "transit needs C++20" instead of a std::span error

#include <mpi.h>

#include "transit/runtime/session.hpp"

namespace transit {

/// Local, before MPI_Init: sets the Open MPI variables that transit::run sets when it initialises
/// MPI itself (a 32 KiB shared-memory eager limit, so that transit's aggregated messages leave
/// without waiting for the sender's next MPI call: 1.5-2x measured for a Python rank computing
/// between batches, README "From Python"; the single-copy mechanism the calibrated profile chose). Variables the
/// program or the user set win. Returns false, changing nothing, once MPI is initialised. Throws
/// std::invalid_argument for a bad TRANSIT_SINGLE_COPY. Other MPI libraries ignore the variables.
bool prepare_mpi_environment();

/// Collective over `comm`: attaches transit to a communicator the program owns, one PE per rank
/// (or options.threads_per_rank PE threads per rank, run through session::run). transit works on a
/// duplicate of `comm`, so its traffic never meets the program's, and several sessions may live at
/// once on disjoint or overlapping communicators. The program initialises and finalises MPI; the
/// session must be closed (or destroyed) before MPI_Finalize. PE r of the session is rank r of
/// `comm` (times threads_per_rank, plus the thread).
///
/// Throws std::invalid_argument, naming what it got and what it expected, when `comm` is
/// MPI_COMM_NULL (or was freed) or an intercommunicator, when MPI is not initialised or already
/// finalised, when the thread level MPI was initialised with is below what the options need (PE
/// threads without a communication thread: MPI_THREAD_MULTIPLE; with one: MPI_THREAD_FUNNELED on
/// MPI's main thread), or for options.pes other than 0 or the session's PE count. options.backend
/// is ignored. Every rank of `comm` finds the same errors.
session attach(MPI_Comm comm, const run_options& options = run_options_from_environment());

}  // namespace transit
