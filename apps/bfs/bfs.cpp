#include "bfs/bfs.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

#include "bfs/bfs_internal.hpp"

namespace transit::apps {

namespace {

/// One direction of an input edge on its way to its row's owner, the neighbour already split as
/// the search needs it.
struct half_edge {
  std::uint32_t row;              // local index at the destination
  std::uint32_t neighbour_local;  // the neighbour's local index at its owner
  std::int32_t neighbour_owner;
};

}  // namespace

namespace bfs_detail {

std::string per_pe_limit_error(int scale, int pes) {
  const std::int64_t per_pe = ((std::int64_t{1} << scale) + pes - 1) / pes;
  if (per_pe <= std::int64_t{std::numeric_limits<std::uint32_t>::max()}) return {};
  return "--scale (-s): got '" + std::to_string(scale) + "', expected a scale leaving at most 2^32 - 1 vertices per PE (" +
         std::to_string(per_pe) + " on each of " + std::to_string(pes) + " PEs)";
}

void check_root(const bfs_graph& graph, std::int64_t root) {
  if (root < 0 || root >= graph.vertices)
    throw std::invalid_argument("bfs: root " + std::to_string(root) + ", expected a vertex from 0 to " +
                                std::to_string(graph.vertices - 1));
}

}  // namespace bfs_detail

using bfs_detail::check_root;
using bfs_detail::counting_sort;

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
  if (const std::string error = bfs_detail::per_pe_limit_error(scale, g.pes); !error.empty()) throw std::invalid_argument(error);
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

}  // namespace transit::apps
