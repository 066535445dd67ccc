// Misuse of transit::attach that needs a process of its own (issue 37):
//   mpi_state: attach before MPI_Init and after MPI_Finalize is refused with a clear message;
//   prepare:   prepare_mpi_environment sets Open MPI's variables before MPI_Init (not the user's),
//              and nothing after it;
//   unclosed:  rank 0 never closes its session while the others close theirs: with the watchdog on
//              (TRANSIT_WATCHDOG), the waiting ranks' close() throws the watchdog's report of what
//              they wait in, and the program ends the job with it.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "transit/mpi.hpp"

namespace {

bool refused(const char* when, const std::string& expected) {
  try {
    transit::session s = transit::attach(MPI_COMM_WORLD);
  } catch (const std::invalid_argument& e) {
    std::printf("%s: refused: %s\n", when, e.what());
    return std::string(e.what()).find(expected) != std::string::npos;
  }
  std::printf("%s: accepted, expected a refusal\n", when);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "mpi_state") {
    bool ok = refused("before MPI_Init", "MPI is not initialised");
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    ok = refused("after MPI_Finalize", "MPI is already finalised") && ok;
    std::puts(ok ? "attach_misuse: both refused" : "attach_misuse: FAILED");
    return ok ? 0 : 1;
  }
  if (mode == "prepare") {
    // Open MPI's settings for transit before MPI_Init, the user's own value winning; none after.
    unsetenv("OMPI_MCA_btl_vader_eager_limit");
    setenv("OMPI_MCA_btl_vader_flags", "send", 1);
    bool ok = transit::prepare_mpi_environment();
    const char* limit = std::getenv("OMPI_MCA_btl_vader_eager_limit");
    const char* flags = std::getenv("OMPI_MCA_btl_vader_flags");
    ok = ok && limit != nullptr && std::string_view(limit) == "32768" && flags != nullptr && std::string_view(flags) == "send";
    MPI_Init(&argc, &argv);
    ok = !transit::prepare_mpi_environment() && ok;
    MPI_Finalize();
    std::puts(ok ? "attach_misuse: prepared before MPI_Init only" : "attach_misuse: FAILED");
    return ok ? 0 : 1;
  }
  if (mode == "unclosed") {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    transit::session attached = transit::attach(MPI_COMM_WORLD);
    if (rank == 0) {
      // Busy in the program's own MPI, never closing: the others' close() waits for it.
      MPI_Barrier(MPI_COMM_WORLD);
    }
    try {
      attached.close();
    } catch (const std::runtime_error& e) {
      // What a program does with transit's errors: say it and end the job.
      std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Finalize();
    std::puts("attach_misuse: every rank closed (unexpected)");
    return 0;
  }
  std::fprintf(stderr, "usage: attach_misuse mpi_state|prepare|unclosed\n");
  return 2;
}
