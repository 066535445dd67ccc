// alltoall: the streaming all-to-all of thesis section 4.6. Each PE sends --items-per-pe items of
// --item-bytes: in rounds, one item to every other PE per round, in a random order drawn afresh
// for each round (so PEs do not all hit the same destination at once).
//
// Verified by content: word 0 of an item identifies it (source, sequence) and the last word repeats
// it; senders and receivers each sum a hash of word 0, and the global sums and counts must agree,
// which catches lost, duplicated and corrupted items.
#include <algorithm>
#include <numeric>
#include <vector>

#include "bench.hpp"

namespace transit::bench {

namespace {

template <std::size_t Bytes>
struct item {
  std::uint64_t words[Bytes / 8];
};

template <std::size_t Bytes>
measurement alltoall(context& ctx, const setup& s) {
  using T = item<Bytes>;
  constexpr std::size_t last = Bytes / 8 - 1;
  const std::uint64_t n = s.items_per_pe;
  const int pes = ctx.size(), rank = ctx.rank();
  std::uint64_t received = 0, received_hash = 0, corrupt = 0;
  streamer<T> stream(ctx, s.stream, [&](const T& x) {
    ++received;
    received_hash += rng::mix(x.words[0]);
    corrupt += x.words[last] != x.words[0] + last;
  });
  rng random(pe_seed(s.opt, rank, 0xa11));
  std::vector<int> order;
  for (int pe = 0; pe < pes; ++pe)
    if (pe != rank || pes == 1) order.push_back(pe);
  std::size_t next = order.size();
  std::uint64_t sent_hash = 0;
  const auto steps = static_cast<std::uint64_t>(s.steps);
  progress_bar bar(ctx, "alltoall", n * steps);
  std::vector<double> step_seconds;

  measurement m;
  T x{};
  m.seconds = measure_steps(ctx, steps, step_seconds, [&](std::uint64_t step) {
    for (std::uint64_t i = 0; i < n; ++i) {
      if (next == order.size()) {  // a new round: Fisher-Yates shuffle of the destinations
        for (std::size_t j = order.size() - 1; j > 0; --j)
          std::swap(order[j], order[rng::below(static_cast<std::uint32_t>(random.next()), j + 1)]);
        next = 0;
      }
      const std::uint64_t id = (static_cast<std::uint64_t>(rank) << 40) | (step * n + i);
      for (std::size_t w = 0; w <= last; ++w) x.words[w] = id + w;
      sent_hash += rng::mix(id);
      stream.insert(x, order[next++]);
      if (poll_due(i)) stream.progress();
      bar.update(step * n + i);
    }
    stream.finish();
  });

  const auto total_sent = static_cast<std::uint64_t>(pes) * n * steps;
  m.verified = ctx.allreduce(received, reduce_op::sum) == total_sent &&
               ctx.allreduce(received_hash, reduce_op::sum) == ctx.allreduce(sent_hash, reduce_op::sum) &&
               ctx.allreduce(corrupt, reduce_op::sum) == 0;
  m.items_per_pe = static_cast<double>(n * steps);
  m.stats = stream.stats();
  m.buffer_bytes_bound = buffer_bound(ctx, stream.current_options(), stream.stats(), Bytes);
  add_step_fields(ctx, s, stream, step_seconds, m);
  return m;
}

measurement run_alltoall(context& ctx, const setup& s) {
  if (s.opt.route == scheme::mpi_raw) return alltoall_mpi_raw(ctx, s);
  // One instantiation per supported size; the command line admits exactly these (item_sizes).
  switch (s.item_bytes) {
    case 8: return alltoall<8>(ctx, s);
    case 16: return alltoall<16>(ctx, s);
    case 32: return alltoall<32>(ctx, s);
    case 64: return alltoall<64>(ctx, s);
    case 128: return alltoall<128>(ctx, s);
    case 256: return alltoall<256>(ctx, s);
    case 512: return alltoall<512>(ctx, s);
    case 1024: return alltoall<1024>(ctx, s);
  }
  throw std::invalid_argument("alltoall: --item-bytes " + std::to_string(s.item_bytes) + " is not supported");
}

const bool registered = register_kernel({
    .name = "alltoall",
    .summary = "each PE streams items to every PE in rounds of random order (thesis 4.6)",
    .item_sizes = {8, 16, 32, 64, 128, 256, 512, 1024},
    .run = run_alltoall,
    .mpi_raw = true,
    .steps = true,
    .workload =
        [](const context&, const setup& s) {
          step_workload w;  // rounds of one item to every other PE
          w.item_bytes = s.item_bytes;
          w.items_per_pe = static_cast<double>(s.items_per_pe);
          w.pattern = destinations::others;
          return w;
        },
});

}  // namespace

}  // namespace transit::bench
