#pragma once
// transit inside a program that keeps its main: a session is started and ended by the program
// (compare transit::run, which takes the program over). On the mpi backend a session attaches to
// a communicator the program owns (transit/mpi.hpp: transit::attach); on the local backend it runs
// PE threads of this process.
#include <functional>
#include <memory>

#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"

namespace transit {

namespace detail {
class session_launch;  // the PEs of one session in this process (src/runtime/launch.hpp)
struct session_access;
}  // namespace detail

/// transit's PEs of this process for one job, started and ended by the program (no body callback).
///
/// One PE here (the local backend with `pes` 1, or the mpi backend with one PE per rank): pe() is
/// that PE's context, used on the thread that made the session, for as long as the session lives.
/// Several PEs here (local `pes` above 1, or --transit-threads-per-rank above 1): run() runs a body
/// on each, on PE threads, and returns when all have returned.
///
/// Movable, not copyable. Objects built on a context (streamers, global arrays...) must be
/// destroyed before the session.
class session {
 public:
  /// Collective over the job: a local-backend job of `options.pes` PE threads in this process
  /// (0 = one PE, on the calling thread). Throws std::invalid_argument for options it cannot run
  /// (options.backend "mpi": use transit::attach; a PE count the system cannot start).
  explicit session(const run_options& options = run_options_from_environment());
  /// Collective: as close(), but a failure is reported on stderr instead of thrown.
  ~session();
  /// Takes over `other`'s PEs; `other` is left closed. Local.
  session(session&& other) noexcept;
  /// Closes this session (collective, as close(), failures reported on stderr), then takes over
  /// `other`'s PEs; `other` is left closed.
  session& operator=(session&& other) noexcept;
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// PEs of the job in this process (threads). Local.
  int local_pes() const noexcept;
  /// PEs of the whole job. Local.
  int size() const noexcept;
  /// The context of this process's one PE. Local. Throws std::logic_error when this process runs
  /// several PEs (use run()) or after close().
  context& pe();
  /// Collective: runs `body` once on every PE of this process (threads; with one PE here, the
  /// calling thread) and returns when all have returned. The first exception a PE's body throws is
  /// rethrown here once the others are unwound (local), as is a failure a destructor recorded
  /// (std::logic_error: a streamer destroyed mid-step, "PE <r>: " first with PE threads); on mpi
  /// with PE threads a failing PE ends the job ("transit: PE <r>: <what>", MPI_Abort), since other
  /// ranks cannot be unwound. Throws std::logic_error after close().
  void run(const std::function<void(context&)>& body);
  /// Collective: waits until no PE of the job sends to this one any more (a barrier), then ends
  /// transit's work here and frees what the session made; then throws (std::logic_error) what a
  /// destructor recorded since run() with one local PE. A PE that never closes leaves the others
  /// waiting: with --transit-watchdog (TRANSIT_WATCHDOG) set, their close() throws the watchdog's
  /// report (std::runtime_error). Idempotent. The program's communicator and MPI stay as they were.
  void close();

 private:
  friend struct detail::session_access;
  explicit session(std::unique_ptr<detail::session_launch> launch);
  detail::session_launch& launch() const;
  void close_quietly() noexcept;
  std::unique_ptr<detail::session_launch> launch_;
};

}  // namespace transit
