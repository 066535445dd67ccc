// The specification's five checks of a search's tree (bfs_validate), each pass through a streamer.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "bfs/bfs.hpp"
#include "bfs/bfs_internal.hpp"

namespace transit::apps {

using bfs_detail::check_root;
using bfs_detail::counting_sort;

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

}  // namespace transit::apps
