// Built twice, with and without TRANSIT_TEST_EXTRA_HANDLER: the two executables have different
// handler tables. Started together (mpirun -n 1 a : -n 1 b), they must refuse to run, on every PE,
// before any call moves: their handler ids would not agree.
#include <cstdio>

#include "transit/transit.hpp"

int main(int argc, char** argv) {
  return transit::run(argc, argv, [](transit::context& ctx) {
    transit::active_messages am(ctx);
    am.async(0, [](transit::active_messages&, int) {}, 1);
#ifdef TRANSIT_TEST_EXTRA_HANDLER
    am.async(0, [](transit::active_messages&, double) {}, 1.0);
#endif
    am.barrier();
    std::printf("PE %d: no mismatch found\n", ctx.rank());
  });
}
