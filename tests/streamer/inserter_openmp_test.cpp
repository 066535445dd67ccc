// An application that already has threads: an OpenMP `parallel for` over each PE's edges feeds
// the PE's streamer, one inserter per OpenMP thread (streamer<T>::inserter), then the PE ends the
// step. Every edge is delivered exactly once on its destination's PE. GCC's -fopenmp, no package.
#include <omp.h>

#include "streamer_checks.hpp"

namespace {

using namespace transit;
using transit::testing::delivery_log;
using transit::testing::probe;
using transit::testing::probe_destination;

// Outside the test's EXPECT_EQ: OpenMP's pragmas cannot sit inside a macro's arguments.
void parallel_for_over_edges(context& ctx) {
  constexpr std::int64_t edges = 20000;
  for (const std::uint32_t buffer_items : {8u, 1024u}) {
    streamer_options o;
    o.buffer_items = buffer_items;
    delivery_log log(ctx.rank(), ctx.size(), edges);
    streamer<probe> s(ctx, o, [&](const probe& p) { log.record(p); });
    int threads_seen = 0;
#pragma omp parallel num_threads(3)
    {
      auto in = s.make_inserter();
#pragma omp for schedule(dynamic, 97)
      for (std::int64_t e = 0; e < edges; ++e) {
        const int dest = probe_destination(21, ctx.rank(), e, ctx.size());
        in.insert(probe{ctx.rank(), dest, e}, dest);
      }
#pragma omp single
      threads_seen = omp_get_num_threads();
    }  // each thread's inserter flushes here
    s.finish();
    log.check(21, "buffer_items " + std::to_string(buffer_items));
    EXPECT_EQ(s.stats().items_inserted, static_cast<std::uint64_t>(edges));
    EXPECT_GE(threads_seen, 1);
  }
}

TEST(streamer_inserter_openmp, parallel_for_over_edges) {
  EXPECT_EQ(transit::testing::run_spmd(parallel_for_over_edges), 0);
}

}  // namespace
