// The bfs program (bfs_main): the reference's phases, progress lines and result lines.
#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "bfs/bfs.hpp"
#include "bfs/bfs_internal.hpp"

namespace transit::apps {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// The reference's statistics of a sample (get_statistics): quartiles as the means of the two
/// middle order statistics, the standard deviation over n - 1 (0 for one value).
struct sample_stats {
  double min = 0, first_quartile = 0, median = 0, third_quartile = 0, max = 0, mean = 0, stddev = 0;
};

sample_stats statistics(std::vector<double> x) {
  sample_stats s;
  const std::size_t n = x.size();
  if (n == 0) return s;
  for (const double v : x) s.mean += v;
  s.mean /= static_cast<double>(n);
  for (const double v : x) s.stddev += (v - s.mean) * (v - s.mean);
  s.stddev = n > 1 ? std::sqrt(s.stddev / static_cast<double>(n - 1)) : 0.0;
  std::sort(x.begin(), x.end());
  s.min = x.front();
  s.first_quartile = (x[(n - 1) / 4] + x[n / 4]) * .5;
  s.median = (x[(n - 1) / 2] + x[n / 2]) * .5;
  s.third_quartile = (x[n - 1 - (n - 1) / 4] + x[n - 1 - n / 4]) * .5;
  s.max = x.back();
  return s;
}

void print_time_stats(const char* prefix, const char* what, const sample_stats& s) {
  const auto line = [&](const char* stat, double v) {
    char key[64];
    std::snprintf(key, sizeof key, "%s%s_%s:", prefix, stat, what);
    std::printf("%-32s%g\n", key, v);
  };
  line("min", s.min);
  line("firstquartile", s.first_quartile);
  line("median", s.median);
  line("thirdquartile", s.third_quartile);
  line("max", s.max);
  line("mean", s.mean);
  line("stddev", s.stddev);
}

void print_results(const bfs_options& o, int roots, int pes, double generation, double construction,
                   const std::vector<double>& times, const std::vector<double>& edges,
                   const std::vector<double>& validate_times) {
  std::printf("SCALE:                          %d\n", o.scale);
  std::printf("edgefactor:                     %d\n", o.edgefactor);
  std::printf("NBFS:                           %d\n", roots);
  std::printf("graph_generation:               %g\n", generation);
  std::printf("num_mpi_processes:              %d\n", pes);
  std::printf("construction_time:              %g\n", construction);
  print_time_stats("bfs  ", "time", statistics(times));
  const sample_stats e = statistics(edges);
  const std::pair<const char*, double> nedge[] = {{"min", e.min},       {"firstquartile", e.first_quartile},
                                                  {"median", e.median}, {"thirdquartile", e.third_quartile},
                                                  {"max", e.max},       {"mean", e.mean},
                                                  {"stddev", e.stddev}};
  for (const auto& [stat, v] : nedge) {
    char key[64];
    std::snprintf(key, sizeof key, "%s_nedge:", stat);
    std::printf("%-32s%.11g\n", key, v);
  }
  // TEPS from seconds per edge, as the reference: the harmonic mean is 1 / the mean of those.
  std::vector<double> per_edge(times.size());
  for (std::size_t i = 0; i < times.size(); ++i) per_edge[i] = times[i] / edges[i];
  const sample_stats t = statistics(per_edge);
  std::printf("bfs  min_TEPS:                  %g\n", 1. / t.max);
  std::printf("bfs  firstquartile_TEPS:        %g\n", 1. / t.third_quartile);
  std::printf("bfs  median_TEPS:               %g\n", 1. / t.median);
  std::printf("bfs  thirdquartile_TEPS:        %g\n", 1. / t.first_quartile);
  std::printf("bfs  max_TEPS:                  %g\n", 1. / t.min);
  std::printf("bfs  harmonic_mean_TEPS:     !  %g\n", 1. / t.mean);
  const double spread = roots > 1 ? t.stddev / (t.mean * t.mean * std::sqrt(static_cast<double>(roots - 1))) : 0.0;
  std::printf("bfs  harmonic_stddev_TEPS:      %g\n", spread);
  print_time_stats("bfs  ", "validate", statistics(validate_times));
  std::fflush(stdout);
}

}  // namespace

int bfs_main(context& ctx, const bfs_options& options,
             const std::function<void(std::int64_t root, bfs_tree& tree)>& after_search) {
  const bool writer = ctx.rank() == 0;
  if (const std::string error = bfs_detail::per_pe_limit_error(options.scale, ctx.size()); !error.empty()) {
    if (writer) std::fprintf(stderr, "transit: error: %s\n", error.c_str());
    return 2;
  }
  if (writer)
    std::fprintf(stderr, "transit app bfs (transit %s, %.*s backend, %d PEs): SCALE %d, edgefactor %d, %d roots, seed %" PRIu64 ", %s%s\n",
                 version(), static_cast<int>(ctx.backend().size()), ctx.backend().data(), ctx.size(), options.scale,
                 options.edgefactor, options.roots, options.seed, options.algorithm.c_str(),
                 options.no_validate ? ", no validation" : "");

  ctx.barrier();
  auto start = clock_type::now();
  std::vector<kronecker_edge> edges = bfs_edge_slice(ctx, options.scale, options.edgefactor, options.seed);
  ctx.barrier();
  const double generation = ctx.allreduce(seconds_since(start), reduce_op::max);
  if (writer) std::fprintf(stderr, "graph_generation:               %f s\n", generation);

  start = clock_type::now();
  const bfs_graph graph = build_bfs_graph(ctx, options.scale, edges);
  ctx.barrier();
  const double construction = ctx.allreduce(seconds_since(start), reduce_op::max);
  if (writer) std::fprintf(stderr, "construction_time:              %f s\n", construction);
  edges = {};  // the graph holds what the search and the validation read

  const std::vector<std::int64_t> roots = bfs_roots(ctx, graph, options.roots, options.seed);
  if (roots.empty()) {  // a tiny graph of self loops: bad input, said as a usage error
    if (writer)
      std::fprintf(stderr,
                   "transit: error: --scale (-s) %d, --edgefactor (-e) %d, --seed %" PRIu64 ": got a graph whose root "
                   "stream finds no vertex with an edge, expected one with a root to search from\n",
                   options.scale, options.edgefactor, options.seed);
    return 2;
  }
  if (writer && static_cast<int>(roots.size()) < options.roots)
    std::fprintf(stderr, "bfs: %zu roots (of %d asked): the reference's root stream gives no more distinct vertices with edges in its 2N values\n",
                 roots.size(), options.roots);

  const bfs_algorithm algorithm =
      options.algorithm == "direction-optimizing" ? bfs_algorithm::direction_optimizing : bfs_algorithm::top_down;
  bfs_search search(ctx, graph, algorithm);
  bfs_tree tree;
  // Warm-up, untimed, and validated, as the reference does.
  search.run(roots[0], tree);
  bool valid = options.no_validate ||
               bfs_validate(ctx, graph, roots[0], tree, bfs_edge_count(ctx, graph, tree), true).passed();
  if (!valid && writer)
    std::fprintf(stderr, "Validation failed for the warm-up search from root %" PRId64 "; skipping the rest.\n", roots[0]);
  std::vector<double> times, edge_counts, validate_times;
  for (std::size_t i = 0; valid && i < roots.size(); ++i) {
    if (writer) std::fprintf(stderr, "Running BFS %zu\n", i);
    ctx.barrier();
    start = clock_type::now();
    search.run(roots[i], tree);
    ctx.barrier();
    const double seconds = ctx.allreduce(seconds_since(start), reduce_op::max);
    if (after_search) after_search(roots[i], tree);
    const std::int64_t traversed = bfs_edge_count(ctx, graph, tree);
    times.push_back(seconds);
    edge_counts.push_back(static_cast<double>(traversed));
    if (writer) {
      std::fprintf(stderr, "Time for BFS %zu is %f\n", i, seconds);
      std::fprintf(stderr, "TEPS for BFS %zu is %g\n", i, static_cast<double>(traversed) / seconds);
      if (algorithm == bfs_algorithm::direction_optimizing)
        std::fprintf(stderr, "Levels of BFS %zu: %" PRId64 ", %" PRId64 " of them bottom-up\n", i, search.levels(),
                     search.bottom_up_steps());
    }
    if (options.no_validate) {
      validate_times.push_back(-1);
      continue;
    }
    if (writer) std::fprintf(stderr, "Validating BFS %zu\n", i);
    start = clock_type::now();
    valid = bfs_validate(ctx, graph, roots[i], tree, traversed, true).passed();
    const double checked = ctx.allreduce(seconds_since(start), reduce_op::max);
    validate_times.push_back(checked);
    if (writer) std::fprintf(stderr, "Validate time for BFS %zu is %f\n", i, checked);
    if (!valid && writer) std::fprintf(stderr, "Validation failed for this BFS root (%" PRId64 "); skipping rest.\n", roots[i]);
  }
  // What the searches sent, for a reader comparing with another program's traffic.
  const streamer_stats sent = search.stats();
  std::array<std::uint64_t, 3> traffic{sent.items_inserted, sent.messages_sent, sent.bytes_sent};
  ctx.allreduce(std::span<std::uint64_t>(traffic), reduce_op::sum);
  if (writer)
    std::fprintf(stderr, "transit: the searches' streamer (all PEs, the warm-up included): %" PRIu64 " items in %" PRIu64
                         " messages, %" PRIu64 " bytes\n",
                 traffic[0], traffic[1], traffic[2]);
  if (writer) {
    if (!valid) std::printf("No results printed for invalid run.\n");
    else print_results(options, static_cast<int>(roots.size()), ctx.size(), generation, construction, times,
                       edge_counts, validate_times);
    std::fflush(stdout);
  }
  return valid ? 0 : 1;
}

}  // namespace transit::apps
