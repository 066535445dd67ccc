#include <transit/transit.hpp>
#include <transit/mpi.hpp>  // transit::attach; includes <mpi.h>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);  // the program owns MPI
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm group;  // the first half solves, the others analyse
  const bool analysis = ranks == 1 || rank >= ranks / 2;
  MPI_Comm_split(MPI_COMM_WORLD, analysis ? 1 : 0, rank, &group);

  if (analysis) {
    transit::session attached = transit::attach(group);  // collective over `group`
    transit::context& ctx = attached.pe();
    std::vector<std::uint64_t> table(1000, 0);          // this PE's slice of the histogram
    transit::streamer<std::uint64_t> s(ctx, {}, [&](std::uint64_t i) { ++table[i % 1000]; });
    std::mt19937_64 rng(ctx.rank());
    for (int i = 0; i < 1'000'000; ++i) {
      const std::uint64_t index = rng() % (1000 * ctx.size());
      s.insert(index, static_cast<int>(index / 1000));
    }
    s.finish();
    std::uint64_t sum = 0;
    for (std::uint64_t count : table) sum += count;
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, group);  // MPI, between transit calls
    if (ctx.rank() == 0) std::printf("analysis: %llu updates on %d PEs\n", static_cast<unsigned long long>(sum), ctx.size());
  }  // the streamer, then the session: destroyed collectively over `group`
  MPI_Comm_free(&group);
  MPI_Finalize();
}
