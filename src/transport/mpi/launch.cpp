// The mpi backend's launch (transport/mpi_transports.hpp): MPI's initialisation (with Open MPI's
// settings before it) and finalisation, the checks of a communicator and its thread level, the
// machine of the job's ranks, and the transports of a rank's PEs (one, or PE threads in lanes).
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/simulated_costs.hpp"
#include "core/simulation.hpp"
#include "transit/detail/core/error.hpp"
#include "transport/launch.hpp"
#include "transport/mpi_transports.hpp"

namespace transit::detail {

namespace {

// Open MPI treats a failed MPI_Init as fatal and ends the process from inside it. Without a
// launcher (singleton start) that is the likely failure, so a forked child tries first and the
// parent can say clearly what went wrong. Forking is safe here: MPI is not initialised yet. The
// child's output goes to /dev/null: MPI's abort banner would bury the one line that matters.
bool mpi_initialises_in_child(int thread_level) {
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) return true;  // cannot probe; let MPI_Init speak for itself
  if (child == 0) {
    if (const int null = open("/dev/null", O_WRONLY); null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
      close(null);
    }
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, thread_level, &provided);
    if (rc == MPI_SUCCESS) MPI_Finalize();
    _exit(rc == MPI_SUCCESS ? 0 : 1);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void finalize_mpi_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// PEs are rank x lanes + lane (--transit-threads-per-rank): a rank's PEs are on its node.
std::shared_ptr<const machine> mpi_machine(MPI_Comm comm, const launch_request& o) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int lanes = o.threads_per_rank;  // 1 in a simulation (simulation::threads_per_rank_refusal)
  if (lanes > 1 && o.pes_per_node > 0) return emulated_machine(size * lanes, o.pes_per_node);
  if (o.pes_per_node > 0) {
    if (simulation::ranks_share_process)
      return simulation::shared_by_ranks<machine>(std::vector<int>{size, o.pes_per_node},
                                                  [&] { return emulated_machine(size, o.pes_per_node); });
    return emulated_machine(size, o.pes_per_node);
  }
  // Real nodes: the ranks sharing memory with us, numbered by their lowest world rank.
  MPI_Comm shared;
  mpi_check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared),
                    "MPI_Comm_split_type");
  int leader = rank;
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared), "MPI_Allreduce");
  MPI_Comm_free(&shared);
  std::vector<int> leaders(size);
  mpi_check(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm), "MPI_Allgather");
  std::vector<int> node_of(static_cast<std::size_t>(size) * static_cast<std::size_t>(lanes)), node_of_leader(size, -1);
  int nodes = 0;
  for (int r = 0; r < size; ++r) {
    if (node_of_leader[leaders[r]] < 0) node_of_leader[leaders[r]] = nodes++;
    for (int lane = 0; lane < lanes; ++lane) node_of[static_cast<std::size_t>(r * lanes + lane)] = node_of_leader[leaders[r]];
  }
  if (simulation::ranks_share_process)
    return simulation::shared_by_ranks<machine>(node_of, [&] { return std::make_shared<const machine>(machine::from_node_ids(node_of)); });
  return std::make_shared<const machine>(machine::from_node_ids(std::move(node_of)));
}

// Aggregated messages are 8 to 64 KiB. Open MPI's shared-memory transport sends only up to
// 4 KiB eagerly; larger messages take a rendezvous that advances only inside MPI calls of both
// ranks. Raising the eager limit to its maximum fragment size measured +17% on histogram and +28%
// on randomaccess (2 ranks, BENCHMARKS.md). The single-copy mechanism (CMA was 3-4x slower for
// 8-64 KiB messages on a KVM guest) is what calibration measured faster on this host, as the
// profile records it; TRANSIT_SINGLE_COPY=default|none overrides the profile. A value the user
// set for Open MPI itself wins; other MPIs ignore these variables.
//
// Shared-memory atomics: Open MPI 4.1's vader emulates them (active messages) under the cma and
// emulated single-copy mechanisms, and osc rdma's MPI_Compare_and_swap over them crashed every
// time here (SIGSEGV in mca_btl_vader_emu_acswap, 2, 3 and 4 ranks, a plain MPI program too;
// docs/tuning.md, "Transport settings"). Without vader's atomic flags osc rdma declines the
// window and osc sm serves it, as it already does under 'none'; send, put and get stay, so the
// single-copy mechanism still carries large point-to-point messages. Flags the user set win, with
// a warning when they bring the atomics back.
void keep_open_mpi_from_emulated_atomics() {
  const char* user = std::getenv("OMPI_MCA_btl_vader_flags");
  if (user == nullptr || *user == '\0') {
    setenv("OMPI_MCA_btl_vader_flags", "send,put,get,inplace", 1);
    return;
  }
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (std::strstr(user, "atomic") != nullptr && (rank == nullptr || std::strcmp(rank, "0") == 0))
    std::fprintf(stderr,
                 "transit: warning: OMPI_MCA_btl_vader_flags='%s' enables Open MPI's emulated shared-memory "
                 "atomics: compare_exchange on request_topology::mpi_rma may crash inside Open MPI 4.1 unless "
                 "OMPI_MCA_btl_vader_single_copy_mechanism=none (docs/tuning.md, \"Transport settings\")\n",
                 user);
}

void tune_open_mpi_before_init(const launch_request& request) {
  setenv("OMPI_MCA_btl_vader_eager_limit", "32768", 0);
  keep_open_mpi_from_emulated_atomics();
  if (const char* user = std::getenv("OMPI_MCA_btl_vader_single_copy_mechanism"); user != nullptr && *user != '\0')
    return;
  std::string mechanism;
  if (const char* forced = std::getenv("TRANSIT_SINGLE_COPY"); forced != nullptr && *forced != '\0') {
    mechanism = forced;
    if (mechanism != "default" && mechanism != "none")
      throw_invalid("TRANSIT_SINGLE_COPY", mechanism,
                            "'default' (Open MPI's single-copy mechanism) or 'none' (copy in and out)");
  } else {
    mechanism = request.profile_single_copy ? request.profile_single_copy() : std::string();
  }
  if (mechanism == "none") setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
}

// Launchers bind each rank to one core by default (Open MPI: --bind-to core up to 2 ranks), and
// then a rank's PE threads take turns on it: 1 rank x 2 threads ran at 0.53x of 2 ranks x 1 here,
// and at 1.07x once the rank could use both cores (docs/hybrid.md). transit respects the launcher's
// binding and says so once per process, on rank 0, naming the rank with the fewest CPUs.
void warn_if_threads_share_cpus(MPI_Comm comm, int lanes) {
  static std::atomic<bool> warned{false};
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : lanes;
  // Only a binding narrower than the machine: T above the machine's CPUs is oversubscription, chosen.
  const int online = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  const bool bound_too_narrow = cpus < lanes && cpus < online;
  struct {
    int cpus;
    int rank;
  } mine{bound_too_narrow ? cpus : std::numeric_limits<int>::max(), 0}, fewest{};
  MPI_Comm_rank(comm, &mine.rank);
  MPI_Allreduce(&mine, &fewest, 1, MPI_2INT, MPI_MINLOC, comm);
  if (fewest.cpus == std::numeric_limits<int>::max() || mine.rank != 0 || warned.exchange(true)) return;
  std::fprintf(stderr,
               "transit: warning: --transit-threads-per-rank=%d, but rank %d may run on %d CPU%s only (the launcher "
               "bound it): its PE threads take turns there; launch with mpirun --bind-to none, or --map-by "
               "slot:PE=%d (Open MPI)\n",
               lanes, fewest.rank, fewest.cpus, fewest.cpus == 1 ? "" : "s", lanes);
  std::fflush(stderr);
}

// A usage error every rank finds alike (said once, by rank 0), or one each rank finds alone in its
// own process (the thread level it initialised MPI with: said by every rank).
struct rank_usage_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// What attach() checks before any of transit's work: MPI's state, the communicator, the thread
// level the options need, the options that need the communicator's size, the transport's variables.
void check_attachable(MPI_Comm comm, const launch_request& options) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized != 0)
    throw rank_usage_error("transit::attach: MPI is already finalised, expected it initialised and not yet finalised");
  if (initialized == 0)
    throw rank_usage_error(
        "transit::attach: MPI is not initialised, expected the program to call MPI_Init or MPI_Init_thread first");
  if (comm == MPI_COMM_NULL)
    throw rank_usage_error("transit::attach: got MPI_COMM_NULL (or a communicator already freed), expected an "
                           "intracommunicator the program owns");
  int inter = 0;
  mpi_check(MPI_Comm_test_inter(comm, &inter), "transit::attach: MPI_Comm_test_inter");
  if (inter != 0)
    throw rank_usage_error("transit::attach: got an intercommunicator, expected an intracommunicator (merge it "
                           "with MPI_Intercomm_merge)");
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int lanes = options.threads_per_rank;
  if (const char* expected = simulation::threads_per_rank_refusal(lanes))
    throw rank_usage_error(concat("--transit-threads-per-rank: got '", lanes, "', expected ", expected));
  if (lanes > 1 && options.comm_thread) {
    int provided = MPI_THREAD_SINGLE, main_thread = 0;
    MPI_Query_thread(&provided);
    MPI_Is_thread_main(&main_thread);
    if (provided < MPI_THREAD_FUNNELED || (provided < MPI_THREAD_MULTIPLE && main_thread == 0)) {
      // The communication thread is the calling one: below MULTIPLE it must be MPI's main thread.
      throw rank_usage_error(concat("--transit-threads-per-rank: got '", lanes,
                                    "', expected 1 when MPI runs below MPI_THREAD_FUNNELED, or at FUNNELED on a "
                                    "thread other than MPI's main one (this program initialised it at level ",
                                    provided, "): the communication thread calls MPI"));
    }
  } else if (lanes > 1) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
      throw rank_usage_error(concat("--transit-threads-per-rank: got '", lanes,
                                    "', expected 1 when MPI runs below MPI_THREAD_MULTIPLE without a communication "
                                    "thread (this program initialised it at level ",
                                    provided, ", --transit-comm-thread=0): every PE thread calls MPI; initialise MPI "
                                    "with MPI_THREAD_MULTIPLE, or let a communication thread call it"));
    }
  }
  if (options.pes > 0 && options.pes != size * lanes) {
    throw std::invalid_argument(concat("--transit-pes: got '", options.pes, "', expected the number of MPI ranks",
                                       lanes > 1 ? " x threads per rank" : "", " (", size * lanes,
                                       ") or nothing with the mpi backend"));
  }
  // The transport's variables (and a simulated job's cost mode, core/simulated_costs.hpp).
  check_rank_transport_environment();
  static_cast<void>(simulation_costs());
}

// MPI_Init_thread, after Open MPI's settings; MPI_Finalize at exit. Throws std::runtime_error when
// MPI cannot start.
void initialize_mpi(const launch_request& options) {
  tune_open_mpi_before_init(options);
  // MULTIPLE unless asked otherwise: one-sided helper threads call MPI from a second thread, and
  // MULTIPLE measured no cost to the streamer here (histogram, 2 ranks, 20M items per PE: median
  // time 1.00x of FUNNELED, README "MPI thread level"). A program that initialises MPI chooses.
  const int thread_level = options.thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
  if (!launched_by_mpi() && !mpi_initialises_in_child(thread_level))
    throw std::runtime_error(
        "--transit-backend=mpi: MPI could not be initialised on its own; no MPI launcher: run under "
        "mpirun, or use --transit-backend=local");
  int provided = 0;
  // Under a launcher MPI explains its own failure (and usually ends the process itself).
  if (const int rc = MPI_Init_thread(nullptr, nullptr, thread_level, &provided); rc != MPI_SUCCESS)
    throw std::runtime_error(concat("--transit-backend=mpi: MPI_Init_thread failed with error code ", rc,
                                            " (see MPI's message above)"));
  if (!simulated_build) std::atexit(finalize_mpi_at_exit);
}

// This rank's part of a job on a communicator: one PE, or PE threads (lanes) with transports made
// afresh for each run.
class mpi_process final : public process_launch {
 public:
  mpi_process(MPI_Comm comm, const launch_request& request) : comm_(comm), request_(request) {
    check_attachable(comm, request);
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &ranks_);
    machine_ = mpi_machine(comm, request);
  }
  int local_pes() const noexcept override { return request_.threads_per_rank; }
  int size() const noexcept override { return ranks_ * request_.threads_per_rank; }
  int first_pe() const noexcept override { return rank_ * request_.threads_per_rank; }
  std::shared_ptr<const machine> job_machine() const override { return machine_; }
  std::unique_ptr<process_transports> open_transports() override {
    const int lanes = request_.threads_per_rank;
    if (lanes > 1) warn_if_threads_share_cpus(comm_, lanes);
    return make_rank_lane_transports(comm_, lanes, request_.comm_thread, request_.trace_dir, request_.trace_events);
  }
  const char* pe_count_option() const noexcept override { return "--transit-threads-per-rank"; }

 private:
  MPI_Comm comm_;
  launch_request request_;
  int rank_ = 0, ranks_ = 1;
  std::shared_ptr<const machine> machine_;
};

class mpi_backend final : public backend_launch {
 public:
  int run_program(const launch_request& request, const std::function<int(process_launch&)>& main) override;
  std::unique_ptr<process_launch> open_session(const launch_request&) override {
    throw_invalid("transit::session: options.backend", "mpi",
                  "'local' or empty (a session on MPI attaches to a communicator: transit::attach, transit/mpi.hpp)");
  }
};

int mpi_backend::run_program(const launch_request& options, const std::function<int(process_launch&)>& main) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    try {
      initialize_mpi(options);
    } catch (const std::exception& e) {  // said on every process: none of them has MPI
      std::fprintf(stderr, "transit: error: %s\n", e.what());
      return 2;
    }
  }
  // SMPI ends a simulated rank when its main returns, and finalising from atexit then crashes it:
  // the rank that transit initialised finalises before run() returns.
  struct finalize_on_return {
    bool owned;
    ~finalize_on_return() {
      if (owned) finalize_mpi_at_exit();
    }
  } finalize{simulated_build && initialized == 0};
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::unique_ptr<mpi_process> process;
  try {
    process = std::make_unique<mpi_process>(MPI_COMM_WORLD, options);
  } catch (const std::invalid_argument& e) {
    // A usage error: status 2 everywhere, no abort; the barrier keeps a rank from exiting (and
    // getting the launcher to kill the job) before the message is written.
    if (rank == 0 || dynamic_cast<const rank_usage_error*>(&e) != nullptr)
      std::fprintf(stderr, "transit: error: %s\n", e.what());
    MPI_Barrier(MPI_COMM_WORLD);
    return 2;
  } catch (const std::exception& e) {
    report_failure(rank, e.what());
    abort_job();
  }
  // A PE's failure ends the job from inside (process_transports::end_job); what escapes here is
  // this rank's failure outside any PE.
  try {
    return main(*process);
  } catch (const std::exception& e) {
    report_failure(process->first_pe(), e.what());
    abort_job();
  } catch (...) {
    report_failure(process->first_pe(), "unknown exception");
    abort_job();
  }
}

}  // namespace

backend_launch& mpi_backend_launch() {
  static mpi_backend backend;
  return backend;
}

std::unique_ptr<process_launch> attach_process(MPI_Comm comm, const launch_request& request) {
  return std::make_unique<mpi_process>(comm, request);
}

bool prepare_mpi_before_init(const launch_request& request) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) return false;
  tune_open_mpi_before_init(request);
  return true;
}

}  // namespace transit::detail
