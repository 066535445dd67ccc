// The README's one-sided example, kept compiling and checked: a distributed counter hands out
// tasks (a work queue), results land in a global array.
#include <transit/transit.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  return transit::run(argc, argv, [](transit::context& ctx) {
    constexpr std::int64_t tasks = 1000;
    transit::global_array<std::int64_t> next(ctx, 1);   // the counter, on PE 0
    transit::global_array<double> results(ctx, tasks);  // one slot per task, spread over the PEs
    // Every PE claims the next task until none is left: dynamic load balancing.
    for (std::int64_t task = next.fetch_add(0, 1); task < tasks; task = next.fetch_add(0, 1)) {
      const double value = 0.5 * static_cast<double>(task);  // the work
      results.put(static_cast<std::size_t>(task), std::span(&value, 1));
    }
    results.sync();  // every put has landed everywhere
    double sum = 0;
    for (const double r : results.local()) sum += r;
    sum = ctx.allreduce(sum, transit::reduce_op::sum);
    if (ctx.rank() == 0) std::printf("%lld tasks, sum of results %.1f\n", static_cast<long long>(tasks), sum);
  });
}
