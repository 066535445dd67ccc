// transit_context_create_mpi and _comm: a context on a communicator the program owns
// (transit::attach). Compiled only with MPI; without it context.cpp defines both calls as
// TRANSIT_NOT_BUILT.
#include <memory>

#include "c_api/handles.hpp"
#include "transit/mpi.hpp"
#include "transit/transit_mpi.h"

using namespace transit::c_api;

namespace {

transit_status create_on(MPI_Comm comm, transit_context** out) {
  return guarded([&] {
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
  const transit_status checked = guarded([&] {
    require(out, "transit_context_create_mpi", "out");
    *out = nullptr;
    require(comm, "transit_context_create_mpi", "comm (the address of an MPI_Comm)");
  });
  return checked != TRANSIT_OK ? checked : create_on(*static_cast<const MPI_Comm*>(comm), out);
}

transit_status transit_context_create_comm(MPI_Comm comm, transit_context** out) {
  const transit_status checked = guarded([&] {
    require(out, "transit_context_create_comm", "out");
    *out = nullptr;
  });
  return checked != TRANSIT_OK ? checked : create_on(comm, out);
}

transit_status transit_prepare_mpi(void) {
  return guarded([] { static_cast<void>(transit::prepare_mpi_environment()); });
}

}
