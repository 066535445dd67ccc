#include "bfs/bfs.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <stdexcept>

namespace transit::apps {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// One direction of an input edge on its way to its row's owner, the neighbour already split as
/// the search needs it.
struct half_edge {
  std::uint32_t row;              // local index at the destination
  std::uint32_t neighbour_local;  // the neighbour's local index at its owner
  std::int32_t neighbour_owner;
};

/// Local: rows from (row, ...) pairs by counting: returns the rows + 1 row starts and calls
/// place(position, pair) for each pair, positions grouped by row.
template <class Pair, class Place>
std::vector<std::int64_t> counting_sort(std::int64_t rows, const std::vector<Pair>& pairs, Place&& place) {
  std::vector<std::int64_t> offset(static_cast<std::size_t>(rows) + 1, 0);
  for (const Pair& p : pairs) ++offset[static_cast<std::size_t>(p.row) + 1];
  for (std::size_t i = 1; i < offset.size(); ++i) offset[i] += offset[i - 1];
  std::vector<std::int64_t> fill(offset.begin(), offset.end() - 1);
  for (const Pair& p : pairs) place(static_cast<std::size_t>(fill[p.row]++), p);
  return offset;
}

/// The search's items carry 32-bit local indices: the error when `pes` PEs would hold more
/// vertices each (empty when they do not).
std::string per_pe_limit_error(int scale, int pes) {
  const std::int64_t per_pe = ((std::int64_t{1} << scale) + pes - 1) / pes;
  if (per_pe <= std::int64_t{std::numeric_limits<std::uint32_t>::max()}) return {};
  return "--scale (-s): got '" + std::to_string(scale) + "', expected a scale leaving at most 2^32 - 1 vertices per PE (" +
         std::to_string(per_pe) + " on each of " + std::to_string(pes) + " PEs)";
}

/// Throws std::invalid_argument (on every PE: all pass the same root) unless `root` is a vertex.
void check_root(const bfs_graph& graph, std::int64_t root) {
  if (root < 0 || root >= graph.vertices)
    throw std::invalid_argument("bfs: root " + std::to_string(root) + ", expected a vertex from 0 to " +
                                std::to_string(graph.vertices - 1));
}

}  // namespace

std::vector<kronecker_edge> bfs_edge_slice(const context& ctx, int scale, int edgefactor, std::uint64_t seed) {
  const std::int64_t total = static_cast<std::int64_t>(edgefactor) << scale;
  const std::int64_t begin = total / ctx.size() * ctx.rank() + std::min<std::int64_t>(ctx.rank(), total % ctx.size());
  const std::int64_t count = total / ctx.size() + (ctx.rank() < total % ctx.size() ? 1 : 0);
  return kronecker_edges(scale, seed, seed + 1, begin, begin + count);
}

bfs_graph build_bfs_graph(context& ctx, int scale, std::span<const kronecker_edge> edges) {
  bfs_graph g;
  g.vertices = std::int64_t{1} << scale;
  g.pes = ctx.size();
  g.rank = ctx.rank();
  g.local_vertices = (g.vertices - g.rank + g.pes - 1) / g.pes;
  if (const std::string error = per_pe_limit_error(scale, g.pes); !error.empty()) throw std::invalid_argument(error);
  // Every PE looks at its edges before any is sent, and all throw together: a PE throwing alone
  // would leave the others waiting in the streamer for it.
  std::int64_t bad = 0;
  std::string first_bad;
  for (const kronecker_edge& e : edges)
    if (e.v0 < 0 || e.v0 >= g.vertices || e.v1 < 0 || e.v1 >= g.vertices) {
      if (bad++ == 0) first_bad = ", such as (" + std::to_string(e.v0) + ", " + std::to_string(e.v1) + ") on PE " + std::to_string(g.rank);
    }
  if (const std::int64_t all_bad = ctx.allreduce(bad, reduce_op::sum); all_bad > 0)
    throw std::invalid_argument("build_bfs_graph: " + std::to_string(all_bad) + " edges have an end outside [0, " +
                                std::to_string(g.vertices) + ")" + first_bad);
  std::vector<half_edge> mine;
  mine.reserve(edges.size() * 2 + 16);
  streamer<half_edge> stream(ctx, {}, [&mine](const half_edge& h) { mine.push_back(h); });
  const auto half = [&g](std::int64_t row, std::int64_t neighbour) {
    return half_edge{static_cast<std::uint32_t>(g.local(row)), static_cast<std::uint32_t>(g.local(neighbour)),
                     g.owner(neighbour)};
  };
  for (const kronecker_edge& e : edges) {
    if (e.v0 == e.v1) continue;  // self loops: in the list, not in the graph
    stream.insert(half(e.v0, e.v1), g.owner(e.v0));
    stream.insert(half(e.v1, e.v0), g.owner(e.v1));
  }
  stream.finish();
  g.neighbour_owner.resize(mine.size());
  g.neighbour_local.resize(mine.size());
  g.offset = counting_sort(g.local_vertices, mine, [&g](std::size_t k, const half_edge& h) {
    g.neighbour_owner[k] = h.neighbour_owner;
    g.neighbour_local[k] = h.neighbour_local;
  });
  return g;
}

std::vector<std::int64_t> bfs_roots(context& ctx, const bfs_graph& graph, int count, std::uint64_t seed) {
  std::vector<std::int64_t> roots;
  std::int64_t position = 0;
  const std::int64_t n = graph.vertices;
  while (static_cast<int>(roots.size()) < count && position + 2 <= 2 * n) {
    const std::vector<double> d = graph500_random_numbers(seed, seed + 1, position, 2);
    position += 2;
    const std::int64_t root = static_cast<std::int64_t>((d[0] + d[1]) * static_cast<double>(n)) % n;
    if (std::find(roots.begin(), roots.end(), root) != roots.end()) continue;  // every PE alike
    int isolated = graph.owner(root) == graph.rank && graph.degree(graph.local(root)) == 0 ? 1 : 0;
    if (ctx.allreduce(isolated, reduce_op::max) == 0) roots.push_back(root);
  }
  return roots;
}

bfs_search::bfs_search(context& ctx, const bfs_graph& graph, bfs_algorithm algorithm)
    : ctx_(ctx),
      graph_(graph),
      algorithm_(algorithm),
      stream_(ctx, {}, [this](const visit& item, int source) {
        visit_vertex(item.vertex, graph_.global(item.parent, source));
      }) {}

inline void bfs_search::visit_vertex(std::uint32_t vertex, std::int64_t parent) {
  std::uint64_t& word = visited_[vertex >> 6];
  const std::uint64_t bit = std::uint64_t{1} << (vertex & 63);
  if ((word & bit) != 0) return;  // visited already: the first visit's parent stays
  word |= bit;
  tree_->level[vertex] = next_level_;
  tree_->parent[vertex] = parent;
  next_.push_back(vertex);
}

void bfs_search::run(std::int64_t root, bfs_tree& tree) {
  check_root(graph_, root);
  const auto n = static_cast<std::size_t>(graph_.local_vertices);
  tree.parent.assign(n, -1);
  tree.level.assign(n, -1);
  tree_ = &tree;
  visited_.assign((n + 63) / 64, 0);
  frontier_.clear();
  next_.clear();
  if (graph_.owner(root) == graph_.rank) {
    const auto r = static_cast<std::size_t>(graph_.local(root));
    visited_[r >> 6] |= std::uint64_t{1} << (r & 63);
    tree.level[r] = 0;
    tree.parent[r] = root;
    frontier_.push_back(static_cast<std::uint32_t>(r));
  }
  // Beamer's switch: the frontier's edges (m_f), the unexplored edges (m_u, edges of unvisited
  // vertices) and the frontier's size, summed over PEs in one allreduce per level.
  constexpr std::int64_t alpha = 14, beta = 24;
  std::array<std::int64_t, 3> sizes{static_cast<std::int64_t>(frontier_.size()), 0, 0};  // n_f, m_f, m_u
  if (algorithm_ == bfs_algorithm::direction_optimizing) {
    for (const std::uint32_t v : frontier_) sizes[1] += graph_.degree(v);
    sizes[2] = static_cast<std::int64_t>(graph_.neighbour_local.size()) - sizes[1];
    ctx_.allreduce(std::span<std::int64_t>(sizes), reduce_op::sum);
  }
  bool bottom_up = false;
  levels_ = bottom_up_steps_ = 0;
  for (std::int64_t level = 1;; ++level) {
    next_level_ = level;
    levels_ = level;
    if (algorithm_ == bfs_algorithm::direction_optimizing) {
      if (!bottom_up) bottom_up = sizes[1] > sizes[2] / alpha;
      else bottom_up = sizes[0] >= graph_.vertices / beta;
    }
    if (bottom_up) {
      step_bottom_up();
      ++bottom_up_steps_;
    } else {
      step_top_down();
    }
    std::swap(frontier_, next_);
    next_.clear();
    if (algorithm_ == bfs_algorithm::top_down) {
      if (ctx_.allreduce(static_cast<std::int64_t>(frontier_.size()), reduce_op::sum) == 0) break;
      continue;
    }
    std::array<std::int64_t, 3> next_sizes{static_cast<std::int64_t>(frontier_.size()), 0, 0};
    for (const std::uint32_t v : frontier_) next_sizes[1] += graph_.degree(v);
    next_sizes[2] = -next_sizes[1];  // the new frontier's edges are explored now
    ctx_.allreduce(std::span<std::int64_t>(next_sizes), reduce_op::sum);
    if (next_sizes[0] == 0) break;
    sizes = {next_sizes[0], next_sizes[1], sizes[2] + next_sizes[2]};
  }
  tree_ = nullptr;
}

void bfs_search::step_top_down() {
  const int me = graph_.rank;
  for (const std::uint32_t v : frontier_) {
    const std::int64_t from = graph_.global(v, me);
    const auto end = static_cast<std::size_t>(graph_.offset[v + 1]);
    for (auto k = static_cast<std::size_t>(graph_.offset[v]); k < end; ++k) {
      const int owner = graph_.neighbour_owner[k];
      const std::uint32_t lw = graph_.neighbour_local[k];
      if (owner == me) visit_vertex(lw, from);  // no need to stream to oneself
      else stream_.insert({lw, v}, owner);
    }
  }
  stream_.finish();
}

void bfs_search::step_bottom_up() {
  // The frontier as a bitmap of global ids on every PE: each PE sets its own vertices' bits, so
  // the PEs' words share no bit and their sum is their union.
  frontier_bits_.assign(static_cast<std::size_t>((graph_.vertices + 63) / 64), 0);
  for (const std::uint32_t v : frontier_) {
    const auto g = static_cast<std::uint64_t>(graph_.global(v, graph_.rank));
    frontier_bits_[g >> 6] |= std::uint64_t{1} << (g & 63);
  }
  ctx_.allreduce(std::span<std::uint64_t>(frontier_bits_), reduce_op::sum);
  for (std::uint32_t v = 0; v < static_cast<std::uint32_t>(graph_.local_vertices); ++v) {
    if ((visited_[v >> 6] & (std::uint64_t{1} << (v & 63))) != 0) continue;
    const auto end = static_cast<std::size_t>(graph_.offset[v + 1]);
    for (auto k = static_cast<std::size_t>(graph_.offset[v]); k < end; ++k) {
      const auto w = static_cast<std::uint64_t>(graph_.neighbour(k));
      if ((frontier_bits_[w >> 6] & (std::uint64_t{1} << (w & 63))) == 0) continue;
      visit_vertex(v, static_cast<std::int64_t>(w));
      break;  // the first parent found will do
    }
  }
}

std::int64_t bfs_edge_count(context& ctx, const bfs_graph& graph, const bfs_tree& tree) {
  std::int64_t count = 0;
  for (std::int64_t v = 0; v < graph.local_vertices; ++v) {
    if (tree.parent[static_cast<std::size_t>(v)] == -1) continue;
    const std::int64_t global = graph.global(v, graph.rank);
    for (std::int64_t k = graph.offset[static_cast<std::size_t>(v)]; k < graph.offset[static_cast<std::size_t>(v) + 1]; ++k)
      if (graph.neighbour(static_cast<std::size_t>(k)) < global) ++count;
  }
  return ctx.allreduce(count, reduce_op::sum);
}

// ---- validation ----

namespace {

constexpr const char* check_names[6] = {
    "the parents form a tree rooted at the root",  "each tree edge joins levels one apart",
    "each input edge joins levels at most one apart", "the tree spans the root's component",
    "each tree edge is an input edge",              "the edge count for TEPS"};

/// One check's errors on this PE: how many, and the text of the one with the smallest key (a
/// vertex id), so that the line printed does not depend on timing.
struct error_log {
  std::int64_t count = 0;
  std::int64_t key = std::numeric_limits<std::int64_t>::max();
  std::string text;
  template <class Text>
  void add(std::int64_t at, Text&& make_text) {
    ++count;
    if (at < key) {
      key = at;
      text = make_text();
    }
  }
};

std::string str(std::int64_t v) { return std::to_string(v); }

/// A child on its way to its parent's owner.
struct child_item {
  std::uint32_t parent;  // local index at the destination
  std::uint32_t child;   // local index at the source
};

/// A tree level on its way from a parent to a child's owner.
struct level_item {
  std::int64_t parent_level;  // the parent's reported level
  std::uint32_t child;        // local index at the destination
  std::uint32_t parent;       // local index at the source
};

/// An input edge (u, w) on its way to w's owner with u's level (unreached_mark when u is not in the
/// tree).
struct edge_item {
  std::int64_t level;
  std::uint32_t w;  // local index at the destination
  std::uint32_t u;  // local index at the source
};

constexpr std::int64_t unreached_mark = std::numeric_limits<std::int64_t>::min();

/// A child relation (row: the parent's local index, neighbour: the child's global id).
struct child_pair {
  std::uint32_t row;
  std::int64_t neighbour;
};

}  // namespace

bfs_validation bfs_validate(context& ctx, const bfs_graph& graph, std::int64_t root, const bfs_tree& tree,
                            std::int64_t edges_counted, bool report) {
  check_root(graph, root);
  const auto n = static_cast<std::size_t>(graph.local_vertices);
  const int me = graph.rank;
  std::array<error_log, 6> log;
  const auto& parent = tree.parent;
  // The levels, clamped to [-1, N] so that the checks' arithmetic cannot overflow on a corrupt
  // tree (a level outside [-1, N) is an error of its own, below).
  std::vector<std::int64_t> level(tree.level.size());
  for (std::size_t i = 0; i < level.size(); ++i) level[i] = std::clamp<std::int64_t>(tree.level[i], -1, graph.vertices);
  // Collective: a PE throwing alone would leave the others waiting in the checks' streamers.
  if (ctx.allreduce(parent.size() != n || level.size() != n ? 1 : 0, reduce_op::max) != 0)
    throw std::invalid_argument("bfs_validate: a tree without one parent and one level per local vertex on some PE "
                                "(PE " + str(me) + ": " + str(static_cast<std::int64_t>(parent.size())) + " parents, " +
                                str(static_cast<std::int64_t>(tree.level.size())) + " levels, " +
                                str(graph.local_vertices) + " vertices)");
  const bool root_here = graph.owner(root) == me;
  const auto root_local = static_cast<std::size_t>(graph.local(root));

  // Parents in range (else nothing below can index them), levels consistent with them.
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t v = graph.global(static_cast<std::int64_t>(i), me), p = parent[i], l = tree.level[i];
    if (p < -1 || p >= graph.vertices)
      log[0].add(v, [&] { return "vertex " + str(v) + " has parent " + str(p) + ", expected -1 or a vertex below " + str(graph.vertices); });
    else if ((p == -1) != (l == -1) || l < -1 || l >= graph.vertices)
      log[1].add(v, [&] { return "vertex " + str(v) + " has parent " + str(p) + " and level " + str(l); });
  }
  if (root_here && parent[root_local] != root)
    log[0].add(root, [&] { return "the root " + str(root) + " has parent " + str(parent[root_local]) + ", expected itself"; });
  if (root_here && level[root_local] != 0)
    log[1].add(root, [&] { return "the root " + str(root) + " has level " + str(tree.level[root_local]) + ", expected 0"; });
  const bool parents_in_range = ctx.allreduce(log[0].count, reduce_op::sum) == 0;

  if (parents_in_range) {
    // Check 1: the children of each vertex at its owner, then depths down from the root; a vertex
    // with a parent that the descent never reaches hangs on a cycle.
    std::vector<child_pair> pairs;
    {
      streamer<child_item> children(ctx, {}, [&](const child_item& c, int source) {
        pairs.push_back({c.parent, graph.global(c.child, source)});
      });
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t p = parent[i];
        if (p == -1 || (root_here && i == root_local)) continue;
        children.insert({static_cast<std::uint32_t>(graph.local(p)), static_cast<std::uint32_t>(i)}, graph.owner(p));
      }
      children.finish();
    }
    std::vector<std::int64_t> child_column(pairs.size());
    const std::vector<std::int64_t> child_offset = counting_sort(
        graph.local_vertices, pairs, [&](std::size_t k, const child_pair& c) { child_column[k] = c.neighbour; });
    pairs = {};
    std::vector<std::uint8_t> reached(n, 0);
    std::vector<std::uint32_t> frontier, next;
    {
      streamer<level_item> down(ctx, {}, [&](const level_item& item, int source) {
        const std::size_t c = item.child;
        reached[c] = 1;
        next.push_back(item.child);
        if (level[c] != item.parent_level + 1) {
          const std::int64_t v = graph.global(static_cast<std::int64_t>(c), me), p = graph.global(item.parent, source);
          log[1].add(v, [&] {
            return "vertex " + str(v) + " has level " + str(tree.level[c]) + ", its parent " + str(p) + " level " +
                   str(item.parent_level);
          });
        }
      });
      if (root_here) {
        reached[root_local] = 1;
        frontier.push_back(static_cast<std::uint32_t>(root_local));
      }
      while (ctx.allreduce(static_cast<std::int64_t>(frontier.size()), reduce_op::sum) > 0) {
        for (const std::uint32_t p : frontier)
          for (std::int64_t k = child_offset[p]; k < child_offset[p + 1]; ++k) {
            const std::int64_t c = child_column[static_cast<std::size_t>(k)];
            down.insert({level[p], static_cast<std::uint32_t>(graph.local(c)), p}, graph.owner(c));
          }
        down.finish();
        std::swap(frontier, next);
        next.clear();
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      if (parent[i] != -1 && reached[i] == 0) {
        const std::int64_t v = graph.global(static_cast<std::int64_t>(i), me);
        log[0].add(v, [&] {
          return "vertex " + str(v) + " (parent " + str(parent[i]) + ") is not reached from the root by its parents: a cycle";
        });
      }

    // Checks 3, 4 and 5 and the edge count: every input edge (both directions) at its head's owner
    // with its tail's level.
    std::vector<std::uint8_t> confirmed(n, 0);
    std::int64_t counted = 0;
    const auto see_edge = [&](std::size_t w, std::int64_t u, std::int64_t u_level) {
      const std::int64_t wg = graph.global(static_cast<std::int64_t>(w), me);
      const bool u_in = u_level != unreached_mark, w_in = parent[w] != -1;
      if (!u_in && !w_in) return;
      if (u_in && w_in && parent[w] == u) confirmed[w] = 1;
      // The edge's own checks once, at its larger end: the other direction carries the same levels.
      if (u > wg) return;
      ++counted;
      if (u_in != w_in) {
        log[3].add(wg, [&] {
          return "input edge (" + str(u) + ", " + str(wg) + ") joins " + (u_in ? str(u) : str(wg)) +
                 " in the tree and " + (u_in ? str(wg) : str(u)) + " outside it";
        });
        return;
      }
      if (u_level - level[w] > 1 || level[w] - u_level > 1)
        log[2].add(wg, [&] {
          return "input edge (" + str(u) + ", " + str(wg) + ") joins levels " + str(u_level) + " and " + str(tree.level[w]);
        });
    };
    {
      streamer<edge_item> edges(ctx, {}, [&](const edge_item& item, int source) {
        see_edge(item.w, graph.global(item.u, source), item.level);
      });
      for (std::size_t u = 0; u < n; ++u) {
        const std::int64_t ug = graph.global(static_cast<std::int64_t>(u), me);
        const std::int64_t u_level = parent[u] == -1 ? unreached_mark : level[u];
        for (auto k = static_cast<std::size_t>(graph.offset[u]); k < static_cast<std::size_t>(graph.offset[u + 1]); ++k) {
          const int owner = graph.neighbour_owner[k];
          if (owner == me) see_edge(graph.neighbour_local[k], ug, u_level);
          else edges.insert({u_level, graph.neighbour_local[k], static_cast<std::uint32_t>(u)}, owner);
        }
      }
      edges.finish();
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (parent[i] == -1 || confirmed[i] != 0 || (root_here && i == root_local)) continue;
      const std::int64_t v = graph.global(static_cast<std::int64_t>(i), me);
      log[4].add(v, [&] { return "the tree edge (" + str(v) + ", " + str(parent[i]) + ") is not an input edge"; });
    }
    counted = ctx.allreduce(counted, reduce_op::sum);
    if (edges_counted >= 0 && counted != edges_counted && me == 0)
      log[5].add(0, [&] {
        return "the search counted " + str(edges_counted) + " edges, the validation " + str(counted) +
               " (input edges with an end in the tree)";
      });
  }

  bfs_validation result;
  for (std::size_t c = 0; c < log.size(); ++c) {
    result.errors[c] = ctx.allreduce(log[c].count, reduce_op::sum);
    if (result.errors[c] == 0) continue;
    result.failed |= 1U << c;
    const std::int64_t first = ctx.allreduce(log[c].key, reduce_op::min);
    if (report && log[c].count > 0 && log[c].key == first)
      std::fprintf(stderr, "Validation error: check %zu (%s): %" PRId64 " error%s, the first: %s\n", c + 1,
                   check_names[c], result.errors[c], result.errors[c] == 1 ? "" : "s", log[c].text.c_str());
  }
  return result;
}

// ---- the program ----

namespace {

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
  if (const std::string error = per_pe_limit_error(options.scale, ctx.size()); !error.empty()) {
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
