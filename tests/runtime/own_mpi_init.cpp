// A program that initialises MPI itself at MPI_THREAD_FUNNELED (OWN_MPI_LEVEL=single: at
// MPI_THREAD_SINGLE), then hands transit its body. With --transit-threads-per-rank above 1 a
// communication thread (the calling thread, MPI's main one) needs FUNNELED, and PE threads that
// call MPI themselves (--transit-comm-thread=0) need MULTIPLE: below that transit refuses with
// status 2 on every rank, and nothing hangs. docs/hybrid.md.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "transit/transit.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  const char* level = std::getenv("OWN_MPI_LEVEL");
  const bool single = level != nullptr && std::string_view(level) == "single";
  MPI_Init_thread(&argc, &argv, single ? MPI_THREAD_SINGLE : MPI_THREAD_FUNNELED, &provided);
  const int status = transit::run(argc, argv, [](transit::context& ctx) {
    std::printf("PE %d of %d ran\n", ctx.rank(), ctx.size());
  });
  MPI_Finalize();
  return status;
}
