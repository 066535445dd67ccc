// The simulation seam (core/simulation.hpp) and the simulated clock (transit/detail/core/clock.hpp):
// the one source that includes SimGrid's headers, and only in a SimGrid build.
#include "core/simulation.hpp"

#include "transit/detail/core/clock.hpp"

#ifdef TRANSIT_SIMGRID
#include <mpi.h>
#include <simgrid/engine.h>
#include <simgrid/s4u/Engine.hpp>
#include <smpi/smpi_helpers_internal.h>

#include <cmath>
#include <ctime>
#include <utility>

namespace transit::detail {

simulated_clock::time_point simulated_clock::now() {
  // Nanoseconds, rounded: the same simulated instant always reads the same (MPI_Wtime is exact to
  // far below a nanosecond for any simulated time under a few months).
  return time_point(duration(std::llround(MPI_Wtime() * 1e9)));
}

void simulated_sleep(double seconds) {
  if (!(seconds > 0)) return;
  timespec wait{};
  wait.tv_sec = static_cast<std::time_t>(seconds);
  wait.tv_nsec = static_cast<long>(std::llround((seconds - static_cast<double>(wait.tv_sec)) * 1e9));
  if (wait.tv_nsec >= 1'000'000'000L) {
    ++wait.tv_sec;
    wait.tv_nsec -= 1'000'000'000L;
  }
  // SMPI's nanosleep, not sg_actor_sleep_for: it first ends the rank's CPU burst (charging it when
  // SMPI simulates computation), so the wait starts after the work that came before it.
  smpi_nanosleep(&wait, nullptr);
}

namespace simulation {

const char* threads_per_rank_refusal(int threads_per_rank) noexcept {
  return threads_per_rank > 1 ? "1 in a SimGrid build (SMPI runs each rank on one thread)" : nullptr;
}

void on_deadlock(void (*report)()) {
  static const bool hooked = [report] {
    simgrid::s4u::Engine::on_deadlock_cb(report);
    return true;
  }();
  static_cast<void>(hooked);
}

double simulated_seconds() { return simgrid::s4u::Engine::get_clock(); }

std::size_t world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return static_cast<std::size_t>(rank);
}

void register_send_cost(send_cost cost) {
  const SmpiOpCostCb callback = [cost = std::move(cost)](std::size_t size, simgrid::s4u::Host* source,
                                                         simgrid::s4u::Host* dest) {
    return cost(size, source, dest);
  };
  smpi_register_op_cost_callback(SmpiOperation::SEND, callback);
  smpi_register_op_cost_callback(SmpiOperation::ISEND, callback);
}

}  // namespace simulation
}  // namespace transit::detail

// SMPI 3.32 charges a send's overhead (smpi/os, smpi/ois, or the cost callbacks above) in
// Request::start only for an MPI_Isend, an MPI_Issend or a detached send: a blocking MPI_Send or
// MPI_Rsend pays neither the overhead nor the NIC's slot. Every blocking send of the program
// (transit's, the baselines', the applications') therefore goes through here as a nonblocking send
// and its wait: the same message, matched and completed as SMPI completes a blocking send (sends
// are never detached, docs/simulation.md), charged in the one place every other send is.
// SMPI declares MPI_Send weak so that a program may define it.
extern "C" int MPI_Send(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (const int rc = PMPI_Isend(buffer, count, type, dest, tag, comm, &request); rc != MPI_SUCCESS) return rc;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}

extern "C" int MPI_Rsend(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (const int rc = PMPI_Irsend(buffer, count, type, dest, tag, comm, &request); rc != MPI_SUCCESS) return rc;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}

#else

namespace transit::detail {

// Never called in a normal build (steady_clock is std::chrono's there): defined so that every
// declaration of the seam has its one definition.
simulated_clock::time_point simulated_clock::now() { return {}; }
void simulated_sleep(double) {}

namespace simulation {

const char* threads_per_rank_refusal(int) noexcept { return nullptr; }
void on_deadlock(void (*)()) {}
double simulated_seconds() { return 0; }
std::size_t world_rank() { return 0; }
void register_send_cost(send_cost) {}

}  // namespace simulation
}  // namespace transit::detail

#endif
