// The smallest transit program: every PE adds its rank, PE 0 prints the machine and the sum.
//   ./hello --transit-pes=4                      (local backend: 4 threads)
//   mpirun -n 4 ./hello                          (mpi backend: 4 ranks)
#include <transit/transit.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  return transit::run(argc, argv, [](transit::context& ctx) {
    const long sum = ctx.allreduce(long{ctx.rank()}, transit::reduce_op::sum);
    const long expected = long{ctx.size()} * (ctx.size() - 1) / 2;
    // An exception on any PE ends the whole job with a nonzero status: run() reports it.
    if (sum != expected) throw std::runtime_error("allreduce returned a wrong sum of ranks");
    ctx.barrier();
    if (ctx.rank() == 0) {
      std::printf("hello from transit %s: %d PEs on %d nodes, backend %s, sum of ranks %ld\n",
                  transit::version(), ctx.size(), ctx.machine().num_nodes(),
                  std::string(ctx.backend()).c_str(), sum);
    }
  });
}
