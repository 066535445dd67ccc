#pragma once
// Launch options: --transit-* on the command line, TRANSIT_* in the environment (the command line
// wins). Parsed once by transit::run; exposed so that tools and tests can inspect them.
#include <cstddef>
#include <optional>
#include <string>

#include "transit/detail/core/chrono.hpp"

namespace transit {

/// The launch options of a job, as parse_run_options() read them (each field names its option and
/// environment variable; the README's table lists them all).
struct run_options {
  /// "local", "mpi", or empty: mpi when started by an MPI launcher, otherwise local.
  std::string backend;
  /// PEs of the local backend; 0 = the hardware threads of this machine. Any count up to
  /// max_local_pes() runs; above the hardware threads a job that runs over a second warns once
  /// on stderr (slower).
  int pes = 0;
  /// --transit-pes-force (TRANSIT_PES_FORCE=1): accepted and ignored, kept for old scripts (it
  /// used to lift a cap of 4 x the hardware threads, which is gone).
  bool pes_force = false;
  /// Emulated nodes of this many consecutive PEs (the last node takes the remainder); 0 = real nodes.
  int pes_per_node = 0;
  /// Physical topology spec for the topology manager (e.g. "torus:8x4x8:16"); empty = nodes x PEs.
  std::string physical;
  /// A PE waiting this long without progress prints its state and ends the job; 0 = off.
  std::chrono::milliseconds watchdog{0};
  /// mpi backend: initialise MPI with MPI_THREAD_MULTIPLE (one-sided helper threads call MPI;
  /// measured cost to the streamer: none beyond noise) or, with --transit-mpi-threads=funneled
  /// (TRANSIT_MPI_THREADS), MPI_THREAD_FUNNELED.
  bool mpi_thread_multiple = true;
  /// mpi backend: PEs per MPI rank, each a thread of the rank running the body; PE = rank x T +
  /// thread, and a node holds its ranks' PEs (--transit-threads-per-rank, TRANSIT_THREADS_PER_RANK;
  /// docs/hybrid.md). 1 = one PE per rank. Needs MPI_THREAD_MULTIPLE; refused with the local backend
  /// (its PEs are threads already: --transit-pes) and in a SimGrid build (SMPI runs one thread).
  int threads_per_rank = 1;
  /// mpi backend with threads_per_rank above 1: who calls MPI (docs/hybrid.md). true: one
  /// communication thread per rank owns MPI and the PE threads hand it their messages (then
  /// MPI_THREAD_FUNNELED is enough); false: every PE thread calls MPI (MPI_THREAD_MULTIPLE).
  /// Unset: the communication thread (measured faster, docs/hybrid.md). --transit-comm-thread=1|0,
  /// TRANSIT_COMM_THREAD; 1 with one thread per rank is refused.
  std::optional<bool> comm_thread;
  /// --transit-trace=DIR (TRANSIT_TRACE): every PE writes its timeline to `DIR/transit-trace-<PE>.json`
  /// (Chrome trace event format, for Perfetto; docs/trace.md) when its context ends, and when the
  /// watchdog fires. Empty = off (the default; off costs one branch per message, nothing per item).
  /// The directory is created if missing; one that cannot be created or written is refused.
  std::string trace;
  /// --transit-trace-events=N (TRANSIT_TRACE_EVENTS): the events each PE keeps (56 bytes each);
  /// past that the oldest are overwritten and the file says how many were lost.
  std::size_t trace_events = std::size_t{1} << 17;
};

/// True when the job's ranks run a communication thread (options.comm_thread, resolved). Local.
bool runs_comm_thread(const run_options& options) noexcept;

/// Reads TRANSIT_* from the environment, then removes the --transit-* options from argv
/// (`--transit-x=v` or `--transit-x v`; the flag --transit-pes-force takes no separate value) and
/// applies them; the command line wins over the environment. Stops at a `--` argument: what
/// follows belongs to the program. Throws std::invalid_argument naming the option, the value and
/// what was expected, for an unknown --transit-* option, one given twice, a bad value, or a
/// local PE count above max_local_pes(). Local: transit::run calls it on every PE's process; tools
/// may call it before run.
run_options parse_run_options(int& argc, char**& argv);

/// The TRANSIT_* environment variables as run_options (no command line): what a session uses when
/// the program passes no options. Local. Throws std::invalid_argument naming the variable, the
/// value and what was expected.
run_options run_options_from_environment();

/// The most PEs the local backend accepts: one thread each, so what the kernel lets a process
/// have (kernel.pid_max and kernel.threads-max). Local; reads /proc; never throws. A count below
/// it can still fail to start (memory, RLIMIT_NPROC): transit::run then refuses it with status 2.
int max_local_pes();

/// True when this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI).
/// Local: reads the environment.
bool started_by_mpi_launcher();

}  // namespace transit
