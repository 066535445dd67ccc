// transit_context_create_mpi and _comm: a context on a communicator the program owns
// (transit::attach). Compiled only with MPI; without it context.cpp defines both calls as
// TRANSIT_NOT_BUILT.
#include <memory>

#include "c_api/handles.hpp"
#include "transit/mpi.hpp"
#include "transit/transit_mpi.h"

using namespace transit::c_api;

namespace {

// `communicator()` reads (and checks) the caller's MPI_Comm inside the guard, after `out`.
template <class Communicator>
transit_status create_on(const char* call, transit_context** out, Communicator communicator) {
  return guarded([&] {
    require(out, call, "out");
    *out = nullptr;
    const MPI_Comm comm = communicator();
    auto c = std::make_unique<transit_context>();
    // attach checks the communicator (null, freed, inter) and MPI's state before using either.
    c->session.emplace(transit::attach(comm, c_run_options()));
    c->ctx = &c->session->pe();
    *out = c.release();
  });
}

}  // namespace

extern "C" {

transit_status transit_context_create_mpi(const void* comm, transit_context** out) {
  return create_on("transit_context_create_mpi", out, [&] {
    require(comm, "transit_context_create_mpi", "comm (the address of an MPI_Comm)");
    return *static_cast<const MPI_Comm*>(comm);
  });
}

transit_status transit_context_create_comm(MPI_Comm comm, transit_context** out) {
  return create_on("transit_context_create_comm", out, [comm] { return comm; });
}

transit_status transit_prepare_mpi(void) {
  return guarded([] { static_cast<void>(transit::prepare_mpi_environment()); });
}

}
