#pragma once
// The one clock of transit. Every clock read and every wait of the library, the transit command and
// the benchmarks goes through here (the test core_clock_seam, tests/core/clock_seam.sh, fails otherwise),
// because under SimGrid's SMPI (a simulation build, docs/simulation.md) the host's clock is not the
// simulated machine's: std::chrono reads the simulator's wall clock, and a real sleep stalls every
// simulated rank at once (they all run in one process).
//
// Normal build: std::chrono::steady_clock and std::this_thread, nothing more.
// A simulation build (simulated_build): the rank's simulated time, and waits that pass simulated
// time only. The waits are compiled in src/core/clock.cpp: each is a system call anyway, and this
// header, on every streamer's path, then needs no <thread>.
#include <type_traits>

#include "transit/detail/core/chrono.hpp"

#include "transit/detail/core/simulation.hpp"

namespace transit::detail {

/// Whether a clock read or wait can throw: under SimGrid each is a call into the simulator, which
/// unwinds a rank it ends (another rank's MPI_Abort) with an exception; that must not meet a
/// noexcept on its way out (std::terminate, a crash instead of the job's report).
inline constexpr bool waits_can_throw = simulated_build;

/// The calling rank's simulated time (SMPI's MPI_Wtime; defined in src/core/simulation.cpp). When
/// SMPI simulates computation (smpi/simulate-computation, its default), the read first charges the
/// CPU burst since the rank's last MPI call, so an interval read here includes transit's own work.
/// SMPI adds smpi/wtime (10 ns by default) per read: deterministic, and it lets loops that only
/// read the clock advance.
struct simulated_clock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<simulated_clock>;
  static constexpr bool is_steady = true;
  static time_point now();
};

/// The clock of every measurement and wait: std::chrono's, or a simulation's simulated one.
using steady_clock = std::conditional_t<simulated_build, simulated_clock, std::chrono::steady_clock>;

/// Passes `seconds` of simulated time on this rank without using its core (SMPI's nanosleep);
/// nothing for seconds <= 0. Simulations only.
void simulated_sleep(double seconds);

/// What one idle poll of a PE costs in simulated time. A real PE that polls an idle network
/// (MPI_Iprobe plus MPI_Testsome) takes well under a microsecond; SMPI's own stand-ins
/// (smpi/iprobe, smpi/test: 100 us per call, growing with every failed call of any rank) are
/// meant to be switched off (--cfg=smpi/iprobe:0 --cfg=smpi/test:0) so that this is the cost of
/// polling. It must be more than 0: a loop that polls without passing simulated time never lets
/// the simulation reach the event it waits for.
inline constexpr std::chrono::nanoseconds simulated_poll{200};

/// Waits `d` (simulated time in a simulation build). Nothing for d <= 0.
void sleep_for(std::chrono::nanoseconds d) noexcept(!waits_can_throw);

/// Hands the core to another thread that wants it (jobs here often run more PEs than cores). A
/// simulated PE owns its core, so there is nothing to hand over; what a yielding loop does there
/// is poll again, which costs one poll (see simulated_poll).
void yield() noexcept(!waits_can_throw);

/// The host's clock in both builds: under SimGrid, the real time a person waits, not the simulated
/// machine's. Only for what a person watches (the transit command's progress line), never for a
/// measurement or a wait.
using real_clock = std::chrono::steady_clock;

/// Seconds of steady_clock from `start` until now.
inline double seconds_since(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

}  // namespace transit::detail
