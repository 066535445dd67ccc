/** @file
 * transit's C API on an MPI communicator, typed: the entry for a C program built with mpicc.
 * Includes <mpi.h> and transit/transit.h. A program without mpi.h uses transit_context_create_mpi
 * (transit.h), which takes the communicator by address. */
#ifndef TRANSIT_TRANSIT_MPI_H
#define TRANSIT_TRANSIT_MPI_H

#include <mpi.h>

#include "transit/transit.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Collective over `comm`: a context attached to a communicator the program owns, one PE per rank
 *  (transit::attach in C++; transit_context_create_mpi(&comm, out) without the cast to void*, so
 *  passing anything but an MPI_Comm does not compile). The program initialises and finalises MPI;
 *  destroy the context before MPI_Finalize. `*out` is set on success, else NULL. Fails with
 *  TRANSIT_INVALID_ARGUMENT for MPI_COMM_NULL, an intercommunicator, or MPI not initialised or
 *  already finalised, and with TRANSIT_NOT_BUILT when transit was built without MPI. */
transit_status transit_context_create_comm(MPI_Comm comm, transit_context** out);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIT_TRANSIT_MPI_H */
