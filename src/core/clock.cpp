#include "transit/detail/core/clock.hpp"

#ifdef TRANSIT_SIMGRID
#include <mpi.h>
#include <smpi/smpi_helpers_internal.h>

#include <cmath>
#include <ctime>

namespace transit::detail {

steady_clock::time_point steady_clock::now() {
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

}  // namespace transit::detail
#endif
