// A program that initialises MPI itself at MPI_THREAD_FUNNELED, then hands transit its body: with
// --transit-threads-per-rank above 1 transit must refuse (every PE thread calls MPI) with status 2
// on every rank, and nothing hangs. docs/hybrid.md.
#include <mpi.h>

#include <cstdio>

#include "transit/transit.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const int status = transit::run(argc, argv, [](transit::context& ctx) {
    std::printf("PE %d of %d ran\n", ctx.rank(), ctx.size());
  });
  MPI_Finalize();
  return status;
}
