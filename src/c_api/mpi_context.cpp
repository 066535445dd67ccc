// transit_context_create_mpi: a context on a communicator the program owns (transit::attach).
// Compiled only with MPI; without it context.cpp defines the call as TRANSIT_NOT_BUILT.
#include <memory>

#include "c_api/handles.hpp"
#include "transit/mpi.hpp"

using namespace transit::c_api;

extern "C" {

transit_status transit_context_create_mpi(const void* comm, transit_context** out) {
  return guarded([&] {
    require(out, "transit_context_create_mpi", "out");
    *out = nullptr;
    require(comm, "transit_context_create_mpi", "comm (the address of an MPI_Comm)");
    auto c = std::make_unique<transit_context>();
    // attach checks the communicator (null, freed, inter) and MPI's state before using either.
    c->session.emplace(transit::attach(*static_cast<const MPI_Comm*>(comm)));
    c->ctx = &c->session->pe();
    *out = c.release();
  });
}

transit_status transit_prepare_mpi(void) {
  return guarded([] { static_cast<void>(transit::prepare_mpi_environment()); });
}

}
