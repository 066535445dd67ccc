// atomics: pairwise latency of lock, accumulate and fetch-and-add from the first PE to the last
// (HiCOO fig. 15): --warmup operations, then --ops timed ones of each kind, one at a time, while
// every other PE waits in a barrier (serving, in polling mode). lock: global_mutexes::lock of a
// mutex homed on the last PE (the unlock after it is not timed); accumulate: a one-element
// accumulate and fence() (complete at the target); fetch-add: a blocking fetch_add. Verified by
// the last PE's word: it must hold every increment.
#include <chrono>
#include <string>

#include "bench.hpp"
#include "one_sided_kernels.hpp"

#include "transit/detail/core/clock.hpp"

namespace transit::bench {

namespace {

struct parameters {
  int ops = 1000;
  int warmup = 50;
  one_sided_choice choice;
};
parameters params;  // set by the command line before any PE starts

template <class Op>
double mean_us(int warmup, int ops, Op&& op) {
  for (int i = 0; i < warmup; ++i) op();
  const auto start = detail::steady_clock::now();
  for (int i = 0; i < ops; ++i) op();
  return detail::seconds_since(start) / ops * 1e6;
}

measurement run_atomics(context& ctx, const setup&) {
  const parameters p = params;
  const one_sided_options o = p.choice.options();
  const int last = ctx.size() - 1;
  global_array<std::int64_t> words(ctx, static_cast<std::size_t>(ctx.size()), o);
  global_mutexes locks(ctx, ctx.size(), o);  // mutex `last` lives on the last PE
  double lock_us = 0, accumulate_us = 0, fetch_add_us = 0;
  measurement m;
  m.seconds = measure(ctx, [&] {
    if (ctx.rank() == 0) {
      const std::int64_t one = 1;
      double locking = 0;  // only lock() is timed; the unlock follows outside the clock
      for (int i = 0; i < p.warmup + p.ops; ++i) {
        const auto start = detail::steady_clock::now();
        locks.lock(last);
        if (i >= p.warmup) locking += detail::seconds_since(start);
        locks.unlock(last);
      }
      lock_us = locking / p.ops * 1e6;
      accumulate_us = mean_us(p.warmup, p.ops, [&] {
        words.accumulate(static_cast<std::size_t>(last), std::span<const std::int64_t>(&one, 1), reduce_op::sum);
        words.fence();
      });
      fetch_add_us = mean_us(p.warmup, p.ops, [&] { words.fetch_add(static_cast<std::size_t>(last), 1); });
    }
    ctx.barrier();  // the others wait here (and serve, in polling mode)
  });
  words.sync();
  const bool ok = ctx.rank() != last || words.local().back() == 2 * static_cast<std::int64_t>(p.warmup + p.ops);
  m.items_per_pe = 3.0 * (p.warmup + p.ops);
  m.verified = ok;
  m.extra["topology"] = p.choice.topology;
  m.extra["progress"] = p.choice.progress;
  m.extra["ops"] = p.ops;
  m.extra["warmup"] = p.warmup;
  m.extra["lock_us"] = ctx.allreduce(lock_us, reduce_op::max);  // PE 0's, everywhere
  m.extra["accumulate_us"] = ctx.allreduce(accumulate_us, reduce_op::max);
  m.extra["fetch_add_us"] = ctx.allreduce(fetch_add_us, reduce_op::max);
  m.extra["nodes_apart"] = ctx.machine().node_of(0) != ctx.machine().node_of(last);
  // true: the first PE applied the array's operations itself, through its node's shared memory.
  const std::uint64_t applied = ctx.rank() == 0 ? words.stats().applied_in_node : std::uint64_t{0};
  m.extra["applied_in_node"] = ctx.allreduce(applied, reduce_op::sum) > 0;
  return m;
}

const bool registered = register_kernel({
    .name = "atomics",
    .summary = "HiCOO fig. 15: latency of lock, accumulate and fetch-add from the first PE to the last",
    .item_sizes = {sizeof(std::int64_t)},
    .run = run_atomics,
    .own_options =
        apps::option_table{
          integer_option("--ops", "timed operations of each kind (default 1000)", &params.ops, 1, 10'000'000, "N"),
          integer_option("--warmup", "untimed operations first (default 50)", &params.warmup, 0, 10'000'000, "N"),
        } + one_sided_options_of(params.choice),
    .default_items = [] { return std::uint64_t{1000}; },
});

}  // namespace

}  // namespace transit::bench
