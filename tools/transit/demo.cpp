// transit demo: the thesis comparison for the streaming all-to-all (section 4.6, figures 4.2 to
// 4.5) on the current backend: no aggregation against direct (1-D), 2-D and 3-D grids and
// node-aware routing, as a table with the speedup over no aggregation.
#include <algorithm>
#include <vector>

#include "bench.hpp"
#include "cli.hpp"

namespace transit::cli {

using namespace transit::bench;  // the kernels' library, of which this command is a client

namespace {

struct variant {
  const char* label;
  scheme route;
  std::string grid;
};

constexpr int demo_repeats = 3;

record median_run(context& ctx, const options& opt) {
  std::vector<record> runs;
  for (int i = 0; i < demo_repeats; ++i) runs.push_back(run_once(ctx, opt, i));
  std::sort(runs.begin(), runs.end(), [](const record& a, const record& b) { return a.seconds < b.seconds; });
  return runs[runs.size() / 2];
}

int demo_command(context& ctx) {
  const int pes = ctx.size();
  const std::vector<variant> variants{
      {"none", scheme::none, "direct"},
      {"direct (1-D)", scheme::grid, "direct"},
      {"2-D grid", scheme::grid, virtual_grid::balanced(pes, 2).str()},
      {"3-D grid", scheme::grid, virtual_grid::balanced(pes, 3).str()},
      {"node-aware", scheme::node_aware, "node"},
  };
  options opt;
  opt.kernel = "alltoall";
  opt.item_bytes = 8;
  opt.items_per_pe = std::uint64_t{1} << 18;
  if (ctx.rank() == 0) {
    std::printf("transit demo: streaming all-to-all (thesis 4.6) on the %.*s backend, %d PEs on %d nodes\n"
                "%zu-byte items, %llu items per PE, buffers of %zu items, median of %d runs\n\n",
                static_cast<int>(ctx.backend().size()), ctx.backend().data(), pes, ctx.machine().num_nodes(),
                opt.item_bytes, static_cast<unsigned long long>(opt.items_per_pe), opt.buffer_items, demo_repeats);
    std::printf("%-14s %-8s %10s %14s %12s %9s\n", "scheme", "grid", "time (s)", "items/s/PE", "messages",
                "speedup");
    std::fflush(stdout);
  }
  double baseline = 0;
  bool all_verified = true;
  for (const auto& v : variants) {
    opt.route = v.route;
    opt.grid = v.grid;
    const record r = median_run(ctx, opt);
    if (baseline == 0) baseline = r.seconds;
    all_verified &= r.verified;
    if (ctx.rank() != 0) continue;
    std::printf("%-14s %-8s %10.4f %14.0f %12llu %8.1fx%s\n", v.label, r.grid.c_str(), r.seconds, r.rate,
                static_cast<unsigned long long>(r.messages_sent), baseline / r.seconds,
                r.verified ? "" : "  NOT VERIFIED");
    std::fflush(stdout);
  }
  if (ctx.rank() == 0)
    std::printf("\nevery item delivered exactly once: %s\n", all_verified ? "yes (verified)" : "NO");
  return all_verified ? 0 : 1;
}

const bool registered = register_command({
    .name = "demo",
    .summary = "the thesis all-to-all comparison (local backend: 8 PEs in nodes of 4)",
    .run = demo_command,
    .local_pes = 8,
    .local_pes_per_node = 4,
});

}  // namespace

}  // namespace transit::cli
