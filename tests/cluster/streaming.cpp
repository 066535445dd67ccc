// A job that streams items between all PEs in steps for up to `seconds` (first argument, default
// 60), for the test that kills a host's ranks mid-run (host_lost.sh). PE 0 prints "streaming"
// once every PE has finished a first step, so the test knows the job is under way.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "transit/transit.hpp"

int main(int argc, char** argv) {
  const double seconds = argc > 1 && argv[1][0] != '-' ? std::atof(argv[1]) : 60.0;
  return transit::run(argc, argv, [&](transit::context& ctx) {
    transit::streamer<std::uint64_t> s(ctx, {}, [](const std::uint64_t&) {});
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t step = 0;; ++step) {
      for (int i = 0; i < 10000; ++i) s.insert(step, static_cast<int>((ctx.rank() + i) % ctx.size()));
      s.finish();
      if (step == 0 && ctx.rank() == 0) {
        std::printf("streaming on %d PEs, %d nodes\n", ctx.size(), ctx.machine().num_nodes());
        std::fflush(stdout);
      }
      // Every PE takes the same decision: PE 0's clock, through a reduction.
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (ctx.allreduce(elapsed, transit::reduce_op::max) > seconds) break;
    }
  });
}
