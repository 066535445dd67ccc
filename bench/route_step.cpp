// route-step: the per-item cost of one routing and buffering step (thesis table 4.2).
//
// Method: PE 0 alone inserts --items-per-pe 8-byte items, cycling over the other PEs, in a tight
// loop timed on PE 0; the others only receive. Each insert is exactly one step: the route table
// lookup, the copy into the peer buffer, and its share of sending a full buffer (header, transport
// send, a fresh buffer from the pool, the receive poll after each send). An intermediate PE runs
// the same append path for a forwarded item, plus reading its destination from the message. The
// loop time divided by the items is the step cost in ns per item per hop; `end_to_end_seconds`
// adds the final flush and the receivers' delivery (the pipeline's slower side).
#include "bench.hpp"

#include "transit/detail/core/clock.hpp"

namespace transit::bench {

namespace {

measurement run_route_step(context& ctx, const setup& s) {
  const std::uint64_t n = s.items_per_pe;
  const int pes = ctx.size();
  std::uint64_t received = 0;
  streamer<std::uint64_t> stream(ctx, s.stream, [&](const std::uint64_t&) { ++received; });
  double loop_seconds = 0;

  measurement m;
  const double end_to_end = measure(ctx, [&] {
    if (ctx.rank() == 0) {
      const auto start = detail::steady_clock::now();
      int dest = 1;
      for (std::uint64_t i = 0; i < n; ++i) {
        stream.insert(i, dest);
        dest = dest + 1 == pes ? 1 : dest + 1;
      }
      loop_seconds = detail::seconds_since(start);
    }
    stream.finish();
  });
  m.seconds = ctx.allreduce(loop_seconds, reduce_op::max);
  m.items_per_pe = static_cast<double>(n);
  m.verified = ctx.allreduce(received, reduce_op::sum) == n;
  m.stats = stream.stats();
  m.buffer_bytes_bound = buffer_bound(ctx, stream.current_options(), sizeof(std::uint64_t));
  m.buffer_items = stream.current_options().buffer_items;
  m.extra["ns_per_item_hop"] = m.seconds * 1e9 / static_cast<double>(n);
  m.extra["end_to_end_seconds"] = end_to_end;
  return m;
}

const bool registered = register_kernel({
    .name = "route-step",
    .summary = "ns per item of one routing and buffering step",
    .item_sizes = {sizeof(std::uint64_t)},
    .run = run_route_step,
    .default_items = [] { return std::uint64_t{1} << 24; },
    .min_pes = 2,  // PE 0 streams to the others
});

}  // namespace

}  // namespace transit::bench
