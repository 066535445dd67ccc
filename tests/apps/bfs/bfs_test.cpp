// transit app bfs (apps/bfs): the Kronecker generator against graph500's reference generator, the
// search roots and traversed-edge counts against the reference's, the search validated at every PE
// count, each of the five validation checks (and the edge count) caught on a corrupted tree, and
// the whole program.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "bfs/bfs.hpp"
#include "bfs/kronecker.hpp"
#include "test_support.hpp"

namespace {

using namespace transit;
using transit::testing::run_spmd;
namespace ta = transit::apps;

/// The fingerprint the recorded values below were taken with: h = h * 1000003 + v0, then + v1,
/// over the edges in order (64-bit, wrapping), and the self loops among them.
std::pair<std::uint64_t, std::int64_t> fingerprint(const std::vector<ta::kronecker_edge>& edges) {
  std::uint64_t h = 0;
  std::int64_t loops = 0;
  for (const ta::kronecker_edge& e : edges) {
    h = h * 1000003u + static_cast<std::uint64_t>(e.v0);
    h = h * 1000003u + static_cast<std::uint64_t>(e.v1);
    loops += e.v0 == e.v1 ? 1 : 0;
  }
  return {h, loops};
}

// Recorded from graph500/graph500 f89d643's generator/ (generate_kronecker_range after
// make_mrg_seed(seed, seed + 1), packed 48-bit edges) built with gcc -O2 and the same fingerprint.
TEST(BfsKronecker, DrawsTheReferenceGeneratorsEdges) {
  const auto first = ta::kronecker_edges(10, 2, 3, 0, 5);
  const std::vector<std::pair<std::int64_t, std::int64_t>> reference_first = {
      {299, 797}, {684, 861}, {185, 385}, {428, 328}, {490, 200}};
  ASSERT_EQ(first.size(), reference_first.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].v0, reference_first[i].first) << "edge " << i;
    EXPECT_EQ(first[i].v1, reference_first[i].second) << "edge " << i;
  }
  EXPECT_EQ(fingerprint(ta::kronecker_edges(12, 2, 3, 0, 65536)),
            std::make_pair(std::uint64_t{16820424891690927101u}, std::int64_t{208}));
  EXPECT_EQ(fingerprint(ta::kronecker_edges(20, 2, 3, 16000000, 16000256)),
            std::make_pair(std::uint64_t{9319163896161796116u}, std::int64_t{0}));
  EXPECT_EQ(fingerprint(ta::kronecker_edges(9, 7, 8, 0, 8192)),
            std::make_pair(std::uint64_t{1775962242299031307u}, std::int64_t{94}));
  // The last edges of SCALE 20 (the skip's high bytes): 985106 185090 ... 465986 734295.
  const auto last = ta::kronecker_edges(20, 2, 3, 16777210, 16777216);
  EXPECT_EQ(last.front().v0, 985106);
  EXPECT_EQ(last.front().v1, 185090);
  EXPECT_EQ(last.back().v0, 465986);
  EXPECT_EQ(last.back().v1, 734295);
  // A range drawn in pieces is the range drawn at once (PEs draw their own slices).
  auto pieces = ta::kronecker_edges(11, 2, 3, 100, 301);
  const auto rest = ta::kronecker_edges(11, 2, 3, 301, 900);
  pieces.insert(pieces.end(), rest.begin(), rest.end());
  EXPECT_EQ(fingerprint(pieces), fingerprint(ta::kronecker_edges(11, 2, 3, 100, 900)));
  // The root stream: make_random_numbers(4, 2, 3, 0, ...).
  const auto d = ta::graph500_random_numbers(2, 3, 0, 4);
  EXPECT_DOUBLE_EQ(d[0], 0.41021208282928501);
  EXPECT_DOUBLE_EQ(d[1], 0.037614701324416445);
  EXPECT_DOUBLE_EQ(d[2], 0.48451728100111585);
  EXPECT_DOUBLE_EQ(d[3], 0.72508759913279375);
  EXPECT_THROW(ta::kronecker_edges(0, 2, 3, 0, 1), std::invalid_argument);
  EXPECT_THROW(ta::kronecker_edges(63, 2, 3, 0, 1), std::invalid_argument);
  EXPECT_THROW(ta::kronecker_edges(5, 2, 3, 7, 6), std::invalid_argument);
}

/// A search case: the reference's roots (main.c's loop over make_random_numbers, skipping repeats
/// and isolated vertices) and each root's traversed edges (input edges, self loops left out, with
/// an end in the root's component), recorded from the reference generator with seeds 2 and 3.
struct recorded_search {
  int scale, edgefactor;
  std::vector<std::int64_t> roots;
  std::int64_t nedge;  // the same for every root: all land in the giant component
};
const std::vector<recorded_search> reference_searches = {
    {10, 16, {458, 214, 220, 966, 395, 9, 848, 777}, 16239},
    {9, 4, {110, 63, 197, 4, 232, 424, 388, 172, 10, 118}, 2015},
};

/// Collective: the graph of `scale` and `edgefactor` (seeds 2, 3), each PE drawing its slice.
ta::bfs_graph make_graph(context& ctx, int scale, int edgefactor, std::uint64_t seed = 2) {
  return ta::build_bfs_graph(ctx, scale, ta::bfs_edge_slice(ctx, scale, edgefactor, seed));
}

TEST(Bfs, FindsTheReferenceRootsAndEdgeCountsAndValidates) {
  run_spmd([](context& ctx) {
    for (const recorded_search& r : reference_searches) {
      const ta::bfs_graph graph = make_graph(ctx, r.scale, r.edgefactor);
      const std::vector<std::int64_t> roots = ta::bfs_roots(ctx, graph, static_cast<int>(r.roots.size()), 2);
      EXPECT_EQ(roots, r.roots) << "SCALE " << r.scale;
      for (const auto algorithm : {ta::bfs_algorithm::top_down, ta::bfs_algorithm::direction_optimizing}) {
        ta::bfs_search search(ctx, graph, algorithm);
        ta::bfs_tree tree;
        for (const std::int64_t root : roots) {
          search.run(root, tree);
          const std::int64_t nedge = ta::bfs_edge_count(ctx, graph, tree);
          EXPECT_EQ(nedge, r.nedge) << "root " << root;
          const ta::bfs_validation v = ta::bfs_validate(ctx, graph, root, tree, nedge, true);
          EXPECT_TRUE(v.passed()) << "root " << root << " failed checks " << v.failed;
          if (algorithm == ta::bfs_algorithm::top_down) EXPECT_EQ(search.bottom_up_steps(), 0);
          else EXPECT_GT(search.bottom_up_steps(), 0) << "root " << root << ", " << search.levels() << " levels";
        }
      }
    }
  });
}

TEST(Bfs, BuildRefusesEdgesOutsideTheGraphOnEveryPe) {
  run_spmd([](context& ctx) {
    std::vector<ta::kronecker_edge> edges = {{1, 2}};
    if (ctx.rank() == 0) edges.push_back({3, 16});  // SCALE 4: vertices 0 to 15
    try {
      ta::build_bfs_graph(ctx, 4, edges);
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("1 edges have an end outside [0, 16)"), std::string::npos) << e.what();
    }
  });
}

/// Every PE's view of the whole search: parents and levels by global vertex, and the graph's
/// neighbours (the input edges without self loops, both directions).
struct whole_view {
  std::vector<std::int64_t> parent, level;
  std::vector<std::set<std::int64_t>> neighbours;
  std::vector<int> children;
};

whole_view gather(context& ctx, const ta::bfs_graph& graph, const ta::bfs_tree& tree, int scale, int edgefactor) {
  whole_view w;
  const auto n = static_cast<std::size_t>(graph.vertices);
  w.parent.assign(n, 0);
  w.level.assign(n, 0);
  for (std::int64_t i = 0; i < graph.local_vertices; ++i) {
    const auto v = static_cast<std::size_t>(graph.global(i, graph.rank));
    w.parent[v] = tree.parent[static_cast<std::size_t>(i)];
    w.level[v] = tree.level[static_cast<std::size_t>(i)];
  }
  ctx.allreduce(std::span<std::int64_t>(w.parent), reduce_op::sum);  // one PE adds each vertex
  ctx.allreduce(std::span<std::int64_t>(w.level), reduce_op::sum);
  w.neighbours.resize(n);
  for (const ta::kronecker_edge& e : ta::kronecker_edges(scale, 2, 3, 0, std::int64_t{edgefactor} << scale)) {
    if (e.v0 == e.v1) continue;
    w.neighbours[static_cast<std::size_t>(e.v0)].insert(e.v1);
    w.neighbours[static_cast<std::size_t>(e.v1)].insert(e.v0);
  }
  w.children.assign(n, 0);
  for (std::size_t v = 0; v < n; ++v)
    if (w.parent[v] >= 0 && w.parent[v] != static_cast<std::int64_t>(v)) ++w.children[static_cast<std::size_t>(w.parent[v])];
  return w;
}

/// Sets vertex v's parent and level in `tree` (on v's owner).
void set_vertex(const ta::bfs_graph& graph, ta::bfs_tree& tree, std::int64_t v, std::int64_t parent, std::int64_t level) {
  if (graph.owner(v) != graph.rank) return;
  tree.parent[static_cast<std::size_t>(graph.local(v))] = parent;
  tree.level[static_cast<std::size_t>(graph.local(v))] = level;
}

/// The first vertex for which `fits` holds, or nothing.
template <class Fits>
std::optional<std::int64_t> first_vertex(const whole_view& w, Fits&& fits) {
  for (std::int64_t v = 0; v < static_cast<std::int64_t>(w.parent.size()); ++v)
    if (fits(v)) return v;
  return std::nullopt;
}

TEST(Bfs, ValidationCatchesEachCheckOnACorruptedTree) {
  run_spmd([](context& ctx) {
    constexpr int scale = 10, edgefactor = 16;
    const ta::bfs_graph graph = make_graph(ctx, scale, edgefactor);
    const std::int64_t root = ta::bfs_roots(ctx, graph, 1, 2).at(0);
    ta::bfs_search search(ctx, graph);
    ta::bfs_tree good;
    search.run(root, good);
    const std::int64_t nedge = ta::bfs_edge_count(ctx, graph, good);
    const whole_view w = gather(ctx, graph, good, scale, edgefactor);
    const auto at = [](const std::vector<std::int64_t>& x, std::int64_t v) { return x[static_cast<std::size_t>(v)]; };
    const auto leaf = [&](std::int64_t v) {
      return v != root && at(w.parent, v) >= 0 && w.children[static_cast<std::size_t>(v)] == 0;
    };
    const auto neighbour_levels = [&](std::int64_t v) {
      std::set<std::int64_t> levels;
      for (const std::int64_t u : w.neighbours[static_cast<std::size_t>(v)]) levels.insert(at(w.level, u));
      return levels;
    };
    // Validates `tree` (the search's count unless `count` is given) and expects exactly `failed`.
    const auto expect_failed = [&](const ta::bfs_tree& tree, unsigned failed, const char* what,
                                   std::optional<std::int64_t> count = std::nullopt) {
      const ta::bfs_validation v =
          ta::bfs_validate(ctx, graph, root, tree, count ? *count : ta::bfs_edge_count(ctx, graph, tree), true);
      EXPECT_EQ(v.failed, failed) << what;
    };
    expect_failed(good, 0, "the search's own tree");

    {  // 1: a parent outside the graph
      ta::bfs_tree t = good;
      const std::int64_t v = *first_vertex(w, leaf);
      set_vertex(graph, t, v, graph.vertices, at(w.level, v));
      expect_failed(t, ta::bfs_check_tree, "parent out of range");
    }
    {  // 1: the root's parent not itself
      ta::bfs_tree t = good;
      set_vertex(graph, t, root, *w.neighbours[static_cast<std::size_t>(root)].begin(), 0);
      expect_failed(t, ta::bfs_check_tree, "root's parent");
    }
    {  // 1: a cycle of two neighbours, cut off from the root (levels and edges still fine)
      const auto a = first_vertex(w, [&](std::int64_t v) { return v != root && at(w.level, v) >= 1; });
      ASSERT_TRUE(a);
      const std::int64_t b = *std::find_if(w.neighbours[static_cast<std::size_t>(*a)].begin(),
                                           w.neighbours[static_cast<std::size_t>(*a)].end(),
                                           [&](std::int64_t u) { return u != root && at(w.level, u) >= 0; });
      ta::bfs_tree t = good;
      set_vertex(graph, t, *a, b, at(w.level, *a));
      set_vertex(graph, t, b, *a, at(w.level, b));
      expect_failed(t, ta::bfs_check_tree, "a cycle");
    }
    {  // 2: a leaf one level up, on its parent's level, with no neighbour below it
      const auto v = first_vertex(w, [&](std::int64_t u) {
        return leaf(u) && *neighbour_levels(u).rbegin() <= at(w.level, u);
      });
      ASSERT_TRUE(v);
      ta::bfs_tree t = good;
      set_vertex(graph, t, *v, at(w.parent, *v), at(w.level, *v) - 1);
      expect_failed(t, ta::bfs_check_tree_levels, "a tree edge within one level");
    }
    {  // 3: a leaf re-hung one level lower under a neighbour on its own level (tree edges fine,
       // its old parent's edge now spans two levels)
      std::int64_t q = -1;
      const auto v = first_vertex(w, [&](std::int64_t u) {
        if (!leaf(u) || *neighbour_levels(u).rbegin() > at(w.level, u)) return false;
        for (const std::int64_t x : w.neighbours[static_cast<std::size_t>(u)])
          if (at(w.level, x) == at(w.level, u)) {
            q = x;
            return true;
          }
        return false;
      });
      ASSERT_TRUE(v);
      ta::bfs_tree t = good;
      set_vertex(graph, t, *v, q, at(w.level, *v) + 1);
      expect_failed(t, ta::bfs_check_edge_levels, "an input edge spanning two levels");
    }
    {  // 4: a leaf left out of the tree (the search's count would differ too: not checked here)
      const std::int64_t v = *first_vertex(w, leaf);
      ta::bfs_tree t = good;
      set_vertex(graph, t, v, -1, -1);
      expect_failed(t, ta::bfs_check_spans, "a vertex of the component left out", -1);
    }
    {  // 5: a leaf hung under a vertex of its parent's level that is not its neighbour
      std::int64_t q = -1;
      const auto v = first_vertex(w, [&](std::int64_t u) {
        if (!leaf(u)) return false;
        const auto x = first_vertex(w, [&](std::int64_t y) {
          return y != u && at(w.level, y) == at(w.level, u) - 1 && !w.neighbours[static_cast<std::size_t>(u)].contains(y);
        });
        if (!x) return false;
        q = *x;
        return true;
      });
      ASSERT_TRUE(v);
      ta::bfs_tree t = good;
      set_vertex(graph, t, *v, q, at(w.level, *v));
      expect_failed(t, ta::bfs_check_tree_edges, "a tree edge that is not an input edge");
    }
    // The search's edge count against the validation's.
    expect_failed(good, ta::bfs_check_edge_count, "an edge count one too many", nedge + 1);
    // Not a vertex: refused on every PE, before any message.
    ta::bfs_tree t;
    EXPECT_THROW(search.run(graph.vertices, t), std::invalid_argument);
    EXPECT_THROW(search.run(-1, t), std::invalid_argument);
    EXPECT_THROW(ta::bfs_validate(ctx, graph, graph.vertices, good, nedge, false), std::invalid_argument);
    ta::bfs_tree short_on_one = good;  // one PE's tree short: every PE throws, none waits
    if (ctx.rank() == ctx.size() - 1) short_on_one.level.pop_back();
    EXPECT_THROW(ta::bfs_validate(ctx, graph, root, short_on_one, nedge, false), std::invalid_argument);
  });
}

TEST(Bfs, ProgramValidatesEveryRoot) {
  run_spmd([](context& ctx) {
    ta::bfs_options o;
    o.scale = 8;
    o.roots = 6;
    EXPECT_EQ(ta::bfs_main(ctx, o), 0);
    o.algorithm = "direction-optimizing";
    EXPECT_EQ(ta::bfs_main(ctx, o), 0);
    // The third root's tree loses a reached vertex: that validation fails, the program stops
    // there and says so (exit status 1, the reference's "No results printed for invalid run.").
    int searches = 0;
    const auto corrupt_third = [&](std::int64_t root, ta::bfs_tree& tree) {
      if (++searches != 3) return;
      for (std::size_t i = 0; i < tree.parent.size(); ++i)
        if (tree.parent[i] != -1 && tree.parent[i] != root) {
          tree.parent[i] = tree.level[i] = -1;
          break;
        }
    };
    EXPECT_EQ(ta::bfs_main(ctx, o, corrupt_third), 1);
    EXPECT_EQ(searches, 3);  // none after the failed one
    o.no_validate = true;
    o.seed = 11;
    EXPECT_EQ(ta::bfs_main(ctx, o), 0);
  });
}

}  // namespace
