#include "sssp/sssp.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

#include "common/bale_timing.hpp"
#include "common/exstack_rounds.hpp"
#include "spmat/graph_app.hpp"
#include "common/styles.hpp"

namespace transit::apps {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

/// One relaxation: the head's local index on its PE and the distance through the tail.
struct relax_item {
  std::int64_t lj;
  double tw;
};

/// A streamer behind the interface the algorithms push through (exstack_rounds has the same).
struct stream_sender {
  streamer<relax_item>& stream;
  void push(const relax_item& item, int pe) { stream.insert(item, pe); }
  void finish() { stream.finish(); }
};

/// Local: the edges of local row `li` of `mat` relaxed from distance `from`, each through
/// `sender` to its head's PE; `keep(weight)` says which edges (light or heavy ones).
template <class Sender, class Keep>
void relax_row(const sparse_matrix& mat, std::int64_t li, double from, Sender& sender, Keep&& keep) {
  const std::int64_t pes = mat.pes;
  const auto end = static_cast<std::size_t>(mat.offset[static_cast<std::size_t>(li) + 1]);
  for (auto k = static_cast<std::size_t>(mat.offset[static_cast<std::size_t>(li)]); k < end; ++k) {
    if (!keep(mat.value[k])) continue;
    const std::int64_t j = mat.nonzero[k];
    sender.push(relax_item{j / pes, from + mat.value[k]}, static_cast<int>(j % pes));
  }
}

/// Collective: bale's Bellman-Ford. Three tentative distance vectors (old, current, new); each
/// round relaxes the edges of the vertices whose distance changed between old and current into
/// new, through `sender`, whose deliveries go to `*target` (pointed at the new vector here).
/// Ends when no vertex changed anywhere.
template <class Sender>
void bellman_ford(context& ctx, const sparse_matrix& mat, std::int64_t v0, std::span<double> dist, double*& target,
                  Sender& sender) {
  const auto n = static_cast<std::size_t>(mat.lnumrows);
  std::vector<double> a(n, infinity), b(n, infinity), c(n, infinity);
  std::vector<double>*old_d = &a, *cur = &b, *next = &c;
  // Current differs from old at v0 alone, so the first round relaxes v0's edges (bale puts them
  // before its first round; the same values).
  if (v0 % ctx.size() == ctx.rank()) (*cur)[static_cast<std::size_t>(v0 / ctx.size())] = 0.0;
  for (;;) {
    *next = *cur;
    target = next->data();
    int changed = 0;
    for (std::size_t li = 0; li < n; ++li) {
      if ((*old_d)[li] == (*cur)[li]) continue;
      changed = 1;
      relax_row(mat, static_cast<std::int64_t>(li), (*cur)[li], sender, [](double) { return true; });
    }
    sender.finish();
    if (ctx.allreduce(changed, reduce_op::sum) == 0) break;
    std::swap(old_d, cur);  // old <- current, current <- new, new <- old
    std::swap(cur, next);
  }
  std::copy(next->begin(), next->end(), dist.begin());
  ctx.barrier();
}

/// bale's delta-stepping state (ds_t): this PE's tentative distances and buckets, each a circular
/// doubly linked list of local vertices (B[i] its first, -1 when empty), bucket i holding the
/// distances in [i delta, (i + 1) delta) modulo the bucket count.
class delta_buckets {
 public:
  delta_buckets(std::int64_t lnumrows, std::int64_t buckets, double delta)
      : next_(static_cast<std::size_t>(lnumrows)),
        prev_(static_cast<std::size_t>(lnumrows)),
        in_bucket_(static_cast<std::size_t>(lnumrows), -1),
        first_(static_cast<std::size_t>(buckets), -1),
        tent(static_cast<std::size_t>(lnumrows), infinity),
        deleted(static_cast<std::size_t>(lnumrows), 0),
        buckets_(buckets),
        delta_(delta) {}

  std::int64_t first(std::int64_t bucket) const { return first_[static_cast<std::size_t>(bucket)]; }
  std::int64_t buckets() const { return buckets_; }

  /// Prepends v to bucket i (nothing when it is there already).
  void insert(std::int64_t v, std::int64_t i) {
    const auto sv = static_cast<std::size_t>(v);
    if (in_bucket_[sv] == i) return;
    next_[sv] = prev_[sv] = v;
    const std::int64_t w = first_[static_cast<std::size_t>(i)];
    if (w != -1) {
      const auto sw = static_cast<std::size_t>(w);
      prev_[sv] = prev_[sw];
      next_[static_cast<std::size_t>(prev_[sw])] = v;
      prev_[sw] = v;
      next_[sv] = w;
    }
    first_[static_cast<std::size_t>(i)] = v;
    in_bucket_[sv] = i;
  }

  /// Takes v out of its bucket, if it is in one.
  void remove(std::int64_t v) {
    const auto sv = static_cast<std::size_t>(v);
    const std::int64_t i = in_bucket_[sv];
    if (i == -1) return;
    in_bucket_[sv] = -1;
    if (next_[sv] == v) {  // alone in the bucket
      first_[static_cast<std::size_t>(i)] = -1;
      return;
    }
    const std::int64_t w = next_[sv];
    prev_[static_cast<std::size_t>(w)] = prev_[sv];
    next_[static_cast<std::size_t>(prev_[sv])] = w;
    first_[static_cast<std::size_t>(i)] = w;
  }

  /// bale's local_relax: a shorter distance for v moves it to its new bucket.
  void relax(std::int64_t v, double candidate) {
    const auto sv = static_cast<std::size_t>(v);
    if (!(candidate < tent[sv])) return;
    const std::int64_t to = static_cast<std::int64_t>(std::floor(candidate / delta_)) % buckets_;
    if (in_bucket_[sv] != to) {
      remove(v);
      insert(v, to);
    }
    tent[sv] = candidate;
  }

 private:
  std::vector<std::int64_t> next_, prev_, in_bucket_, first_;

 public:
  std::vector<double> tent;          ///< tentative distances
  std::vector<std::uint8_t> deleted;  ///< settled once (its heavy edges queued)

 private:
  std::int64_t buckets_;
  double delta_;
};

/// Collective: bale's delta-stepping. Deliveries of `sender` relax into `*target` (pointed at
/// this run's buckets here).
template <class Sender>
void delta_stepping(context& ctx, const sparse_matrix& mat, std::int64_t v0, double delta_step,
                    std::span<double> dist, delta_buckets*& target, Sender& sender) {
  // bale's calculate_delta_and_num_buckets: -S when in (0, 1], else 1 / the largest degree.
  double delta = delta_step;
  if (!(delta_step > 0.0 && delta_step <= 1.0)) {
    std::int64_t max_degree = 0;
    for (std::int64_t li = 0; li < mat.lnumrows; ++li) max_degree = std::max(max_degree, mat.row_count(li));
    max_degree = ctx.allreduce(max_degree, reduce_op::max);
    delta = 1.0 / static_cast<double>(std::max<std::int64_t>(max_degree, 1));  // no edges: any width
  }
  double max_weight = 0.0;
  for (const double w : mat.value) max_weight = std::max(max_weight, w);
  max_weight = ctx.allreduce(max_weight, reduce_op::max);
  const auto buckets = static_cast<std::int64_t>(std::ceil(max_weight / delta)) + 1;

  delta_buckets ds(mat.lnumrows, buckets, delta);
  target = &ds;
  if (v0 % ctx.size() == ctx.rank()) {
    const std::int64_t lv0 = v0 / ctx.size();
    ds.tent[static_cast<std::size_t>(lv0)] = 0.0;
    ds.insert(lv0, 0);
  }
  ctx.barrier();
  std::vector<std::int64_t> settled;  // bale's R: vertices whose heavy edges wait for the bucket's end
  settled.reserve(static_cast<std::size_t>(mat.lnumrows));
  const auto light = [delta](double w) { return w <= delta; };
  const auto heavy = [delta](double w) { return w > delta; };
  std::int64_t base = 0;  // the smallest nonempty bucket over all PEs, counted without the modulus
  for (;;) {
    std::int64_t i = 0;
    while (i < buckets && ds.first((base + i) % buckets) == -1) ++i;
    i = ctx.allreduce(i, reduce_op::min);
    if (i == buckets) break;  // every bucket empty everywhere
    base += i;
    const std::int64_t bucket = base % buckets;
    settled.clear();
    // Light edges until the bucket stays empty on every PE (relaxations may refill it).
    while (ctx.allreduce(ds.first(bucket), reduce_op::max) > -1) {
      while (ds.first(bucket) >= 0) {
        const std::int64_t v = ds.first(bucket);
        ds.remove(v);
        relax_row(mat, v, ds.tent[static_cast<std::size_t>(v)], sender, light);
        if (ds.deleted[static_cast<std::size_t>(v)] == 0) {
          ds.deleted[static_cast<std::size_t>(v)] = 1;
          settled.push_back(v);
        }
      }
      sender.finish();
    }
    for (const std::int64_t v : settled) relax_row(mat, v, ds.tent[static_cast<std::size_t>(v)], sender, heavy);
    sender.finish();
  }
  std::copy(ds.tent.begin(), ds.tent.end(), dist.begin());
  ctx.barrier();
}

/// Local: the deliver callback of the Bellman-Ford kernels.
struct bellman_deliver {
  double* const* target;
  void operator()(const relax_item& item) const {
    double& d = (*target)[item.lj];
    if (item.tw < d) d = item.tw;
  }
};

/// Local: the deliver callback of the delta-stepping kernels.
struct delta_deliver {
  delta_buckets* const* target;
  void operator()(const relax_item& item) const { (*target)->relax(item.lj, item.tw); }
};

/// Collective: bale's -D dump of the last distances: one "%lf" line per vertex, in vertex order,
/// written by PE 0.
void dump_distances(context& ctx, std::int64_t numrows, std::span<const double> dist, const char* path) {
  std::vector<double> all(static_cast<std::size_t>(numrows), 0.0);  // others' zeros add nothing
  for (std::size_t li = 0; li < dist.size(); ++li)
    all[li * static_cast<std::size_t>(ctx.size()) + static_cast<std::size_t>(ctx.rank())] = dist[li];
  ctx.allreduce(std::span<double>(all), reduce_op::sum);
  if (ctx.rank() != 0) return;
  std::FILE* file = std::fopen(path, "w");
  if (file == nullptr) {
    std::fprintf(stderr, "transit: warning: -D: cannot write '%s'\n", path);
    return;
  }
  for (const double d : all) std::fprintf(file, "%lf\n", d);
  std::fclose(file);
}

}  // namespace

double sssp_bellman_streamer(context& ctx, const sparse_matrix& mat, std::int64_t v0, std::span<double> dist) {
  double* target = nullptr;
  streamer<relax_item> stream(ctx, {}, bellman_deliver{&target});
  stream_sender sender{stream};
  return bale_timed(ctx, [&] { bellman_ford(ctx, mat, v0, dist, target, sender); });
}

double sssp_bellman_exchange(context& ctx, const sparse_matrix& mat, std::int64_t v0, std::int64_t buf_cnt,
                             std::span<double> dist) {
  double* target = nullptr;
  sparse_exchange<relax_item> exchange(ctx, exstack_exchange_options());
  exstack_rounds rounds(ctx, exchange, buf_cnt, bellman_deliver{&target});
  return bale_timed(ctx, [&] { bellman_ford(ctx, mat, v0, dist, target, rounds); });
}

double sssp_delta_streamer(context& ctx, const sparse_matrix& mat, std::int64_t v0, double delta_step,
                           std::span<double> dist) {
  delta_buckets* target = nullptr;
  streamer<relax_item> stream(ctx, {}, delta_deliver{&target});
  stream_sender sender{stream};
  return bale_timed(ctx, [&] { delta_stepping(ctx, mat, v0, delta_step, dist, target, sender); });
}

double sssp_delta_exchange(context& ctx, const sparse_matrix& mat, std::int64_t v0, double delta_step,
                           std::int64_t buf_cnt, std::span<double> dist) {
  delta_buckets* target = nullptr;
  sparse_exchange<relax_item> exchange(ctx, exstack_exchange_options());
  exstack_rounds rounds(ctx, exchange, buf_cnt, delta_deliver{&target});
  return bale_timed(ctx, [&] { delta_stepping(ctx, mat, v0, delta_step, dist, target, rounds); });
}

double sssp_answer_diff(context& ctx, std::span<const double> a, std::span<const double> b) {
  double sum = a.size() == b.size() ? 0.0 : infinity;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] == infinity && b[i] == infinity) continue;
    sum += (a[i] - b[i]) * (a[i] - b[i]);
  }
  return std::sqrt(ctx.allreduce(sum, reduce_op::sum));
}

int sssp_main(context& ctx, const sssp_options& options, const std::string& command_line) {
  const int me = ctx.rank();
  bale_graph_options graph_options = options.graph;
  override_graph_option(ctx, graph_options.loops, "sssp", "a graph without self loops", "-l");  // as bale
  bale_report report(ctx, options.std, "sssp", command_line);
  if (!report.opened()) return 2;
  const bale_graph_options graph = resolve_graph_options(graph_options, ctx.size());
  const std::optional<sparse_matrix> input =
      graph_app_input(ctx, report, options.std, graph, "sssp_inmat", [&](const sparse_matrix& m) {
        if (!m.weighted)
          throw input_error(graph.readfile() ? "--readfile (-f): got '" + graph.filename +
                                                   "', expected a weighted graph (a MatrixMarket file of real values)"
                                             : "--kronecker (-K): got '" + graph.kron_string +
                                                   "', expected a weighted graph (Kronecker graphs have no weights)");
        if (options.v0 >= m.numrows)
          throw input_error("--V0 (-V): got '" + std::to_string(options.v0) + "', expected a vertex below " +
                            std::to_string(m.numrows));
      });
  if (!input) return 2;
  const sparse_matrix& mat = *input;
  char delta_text[64];
  std::snprintf(delta_text, sizeof delta_text, "%lf", options.delta_step);  // bale_app_write_double's "%lf"
  report.write_string("delta", delta_text);
  ctx.barrier();

  const auto n = static_cast<std::size_t>(mat.lnumrows);
  std::vector<double> dist(n), reference(n);
  bool have_reference = false;
  int status = 0;
  // bale's sssp has no AGP style: it masks -M 1 off (no atomic min of a double).
  const std::int64_t mask = options.std.models_mask & ~agp_style;
  for (int alg = 1; alg <= 2; ++alg) {
    if ((options.alg & alg) == 0) continue;
    for_each_style(report, mask, [&](std::int64_t bit, const char* style) {
      std::string name = std::string(alg == 1 ? "Bellman-Ford " : "Delta ") + style;
      const std::int64_t buf_cnt = options.std.buf_cnt;
      double seconds = 0;
      if (alg == 1) {
        seconds = bit == exstack_style ? sssp_bellman_exchange(ctx, mat, options.v0, buf_cnt, dist)
                                       : sssp_bellman_streamer(ctx, mat, options.v0, dist);
      } else {
        seconds = bit == exstack_style ? sssp_delta_exchange(ctx, mat, options.v0, options.delta_step, buf_cnt, dist)
                                       : sssp_delta_streamer(ctx, mat, options.v0, options.delta_step, dist);
      }
      const double mean = mean_over_pes(ctx, seconds);
      // bale's self-check: the first implementation's distances are the reference (" ()"), the
      // others " (compares)" when within 1e-8 in the l2 norm.
      if (!have_reference) {
        reference = dist;
        have_reference = true;
        name += " ()";
      } else if (const double diff = sssp_answer_diff(ctx, reference, dist); diff < 1.0e-8) {
        name += " (compares)";
      } else {
        if (me == 0) std::fprintf(stderr, "ERROR: %s: distances differ from the first's (l2 norm %g)\n", name.c_str(), diff);
        status = 1;
      }
      report.write_time(name, mean);
    });
  }
  if (options.std.dump_files) dump_distances(ctx, mat.numrows, dist, "sssp_dist");
  ctx.barrier();
  report.finish();
  return status;
}

}  // namespace transit::apps
