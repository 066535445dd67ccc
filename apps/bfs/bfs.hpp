#pragma once
// Graph500's kernel 2 (breadth-first search) on transit's streamer, as a transit user writes it:
// the specification's Kronecker graph (bfs/kronecker.hpp, the reference's graph bit for bit), a
// compressed sparse row graph distributed 1-D, the search roots the reference picks, a
// level-synchronous search producing each vertex's parent (and level): top-down as the
// reference's, or direction-optimizing (bfs_algorithm), the specification's five validation checks
// on every root, and the reference's output, so one parser reads both
// (`bfs  harmonic_mean_TEPS:     !  ...`).
//
// Distribution: cyclic, vertex v on PE v % P at local index v / P, as the reference distributes
// (any P here; the reference's masks need a power of two). A Kronecker graph's permuted labels
// spread the high-degree vertices evenly either way, and the same layout lets a reader compare
// the two programs PE by PE.
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "bfs/kronecker.hpp"
#include "common/app_entry.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// How a search steps from one level to the next.
enum class bfs_algorithm {
  /// The reference's: every frontier vertex's edges visited, through the streamer (top-down).
  top_down,
  /// Beamer, Asanovic and Patterson's direction optimization: top-down steps while the frontier
  /// is small; bottom-up steps (each unvisited vertex looks for a parent in the frontier, known
  /// on every PE as a bitmap, and stops at the first) while the frontier's edges outnumber a
  /// fourteenth of the unexplored ones, until the frontier falls below N / 24 vertices. Fewer
  /// edges looked at, none sent in a bottom-up step: a different algorithm, not a different
  /// library, so not the one compared with the reference's.
  direction_optimizing
};

/// `transit app bfs`'s options.
struct bfs_options {
  int scale = 16;            ///< -s: log2 of the vertex count
  int edgefactor = 16;       ///< -e: edges per vertex
  int roots = 64;            ///< -r: search roots
  std::uint64_t seed = 2;    ///< --seed: the generator's seeds are (seed, seed + 1), the reference's (2, 3)
  bool no_validate = false;  ///< -V: time only
  std::string algorithm = "top-down";  ///< -a: "top-down" or "direction-optimizing" (bfs_algorithm)
};

/// The undirected graph as compressed sparse rows, distributed cyclically: each input edge {a, b}
/// with a != b stored twice (b in a's row, a in b's); self loops left out, duplicates kept.
struct bfs_graph {
  std::int64_t vertices = 0;        ///< 2^SCALE
  int pes = 1, rank = 0;            ///< the PE count and this PE
  std::int64_t local_vertices = 0;  ///< vertices rank, rank + pes, ... below `vertices`
  std::vector<std::int64_t> offset; ///< local_vertices + 1 row starts
  /// Each row entry's neighbour as the search needs it, split once here rather than by a division
  /// per edge per search: its owner and its local index there.
  std::vector<std::int32_t> neighbour_owner;
  std::vector<std::uint32_t> neighbour_local;

  /// The global id of row entry k's neighbour.
  std::int64_t neighbour(std::size_t k) const { return global(neighbour_local[k], neighbour_owner[k]); }

  int owner(std::int64_t v) const { return static_cast<int>(v % pes); }
  std::int64_t local(std::int64_t v) const { return v / pes; }
  std::int64_t global(std::int64_t local_index, int pe) const { return local_index * pes + pe; }
  std::int64_t degree(std::int64_t local_index) const {
    return offset[static_cast<std::size_t>(local_index) + 1] - offset[static_cast<std::size_t>(local_index)];
  }
};

/// Local: this PE's share of the edge list of M = edgefactor 2^scale edges drawn from (seed,
/// seed + 1): a contiguous range of M / P edges, one more on the first M mod P PEs.
std::vector<kronecker_edge> bfs_edge_slice(const context& ctx, int scale, int edgefactor, std::uint64_t seed);

/// Collective: the graph of every PE's `edges` (each PE passes its share), built with a streamer:
/// each edge's two directions sent to their rows' owners, then sorted into rows by counting.
/// Throws std::invalid_argument on every PE (naming the value) when an endpoint on any PE is outside
/// [0, 2^scale), or when a PE would hold 2^32 vertices or more (the search's items carry 32-bit
/// local indices).
bfs_graph build_bfs_graph(context& ctx, int scale, std::span<const kronecker_edge> edges);

/// Collective: up to `count` search roots as the reference draws them: a vertex (d0 + d1) N mod N
/// from each pair of the root stream (graph500_random_numbers), skipping repeats and vertices
/// without edges, until 2N values were drawn. The same list on every PE.
std::vector<std::int64_t> bfs_roots(context& ctx, const bfs_graph& graph, int count, std::uint64_t seed);

/// A search's answer on one PE, indexed by local vertex: the parent (the root's is itself) and the
/// level (the root's 0), -1 for vertices not reached.
struct bfs_tree {
  std::vector<std::int64_t> parent, level;
};

/// The level-synchronous search: in a top-down step each frontier vertex sends (vertex, parent) to
/// every neighbour's owner through one streamer, and the owner keeps the first visit of an
/// unvisited vertex and puts it in the next frontier; a bottom-up step (direction_optimizing only)
/// sends nothing; an allreduce of the frontier sizes ends the search. Construction and
/// destruction are collective.
class bfs_search {
 public:
  /// Collective: the search's streamer over `graph`, which must outlive this object; every PE
  /// passes the same algorithm.
  bfs_search(context& ctx, const bfs_graph& graph, bfs_algorithm algorithm = bfs_algorithm::top_down);
  bfs_search(const bfs_search&) = delete;
  bfs_search& operator=(const bfs_search&) = delete;

  /// Collective: searches from `root` (the same on every PE, a vertex of the graph) and writes
  /// every local vertex's parent and level into `tree` (resized to the local vertex count).
  /// Throws std::invalid_argument on every PE when `root` is not a vertex.
  void run(std::int64_t root, bfs_tree& tree);

  /// Local: the levels the last run stepped to, and how many of those steps went bottom-up (the
  /// same on every PE).
  std::int64_t levels() const noexcept { return levels_; }
  std::int64_t bottom_up_steps() const noexcept { return bottom_up_steps_; }
  /// Local: this PE's streamer counters since construction (every run's top-down steps).
  streamer_stats stats() const { return stream_.stats(); }

 private:
  struct visit {
    std::uint32_t vertex;  // local index at the destination
    std::uint32_t parent;  // local index at the source PE
  };
  void visit_vertex(std::uint32_t vertex, std::int64_t parent);
  void step_top_down();
  void step_bottom_up();

  context& ctx_;
  const bfs_graph& graph_;
  bfs_algorithm algorithm_;
  std::int64_t levels_ = 0, bottom_up_steps_ = 0;
  std::vector<std::uint64_t> frontier_bits_;  // bottom-up steps: the frontier by global id, on every PE
  bfs_tree* tree_ = nullptr;
  std::int64_t next_level_ = 0;
  std::vector<std::uint32_t> frontier_, next_;
  std::vector<std::uint64_t> visited_;  // a bit per local vertex: a cache's worth where levels take 64
  streamer<visit> stream_;  // last: its callback uses the members above
};

/// Collective: the edges a search traversed, counted as the reference counts them for TEPS: the
/// input edges (self loops left out) whose larger end was reached, each once.
std::int64_t bfs_edge_count(context& ctx, const bfs_graph& graph, const bfs_tree& tree);

/// The specification's five checks, and the edge count, as bits of bfs_validation::failed.
enum bfs_check : unsigned {
  bfs_check_tree = 1,          ///< 1: the parents form a tree rooted at the root (no cycles)
  bfs_check_tree_levels = 2,   ///< 2: each tree edge joins levels that differ by exactly one
  bfs_check_edge_levels = 4,   ///< 3: each input edge joins levels at most one apart, or two unreached vertices
  bfs_check_spans = 8,         ///< 4: the tree spans the root's whole connected component
  bfs_check_tree_edges = 16,   ///< 5: each tree edge (vertex, parent) is an input edge
  bfs_check_edge_count = 32    ///< the search's edge count equals the validation's
};

/// What bfs_validate found, the same on every PE.
struct bfs_validation {
  unsigned failed = 0;                   ///< bfs_check bits of the checks that failed
  std::array<std::int64_t, 6> errors{};  ///< errors per check, in bfs_check order
  bool passed() const noexcept { return failed == 0; }
};

/// Collective: the five checks of `tree` as the search from `root` over `graph` left it, each with
/// messages of its own (four streamer passes: parents to children, levels down the tree from the
/// root, every input edge with its ends' levels, and the count). `edges_counted` (bfs_edge_count's
/// answer; negative: not checked) must equal the validation's count of input edges with an end
/// reached. When `report` (the same on every PE), every failed check prints one line on stderr
/// (its errors: vertices, or input edges each counted once), from the PE holding its
/// first error: "Validation error: check N (what): K errors, the first: ...". Throws
/// std::invalid_argument on every PE when `root` is not a vertex, or when `tree` does not hold
/// one parent and one level per local vertex.
bfs_validation bfs_validate(context& ctx, const bfs_graph& graph, std::int64_t root, const bfs_tree& tree,
                            std::int64_t edges_counted, bool report);

/// Collective: the whole program: graph generation and construction, the roots, a warm-up search,
/// then for each root the timed search, its edge count and its validation (unless -V), with the
/// reference's progress lines on stderr and its results on stdout from PE 0. Returns 0, or 1 when
/// a validation failed (the reference's "No results printed for invalid run."), 2 for input the
/// options could not refuse (a PE count leaving a PE 2^32 vertices or more, a graph without a
/// root: SCALE 1 and edge factor 1 may draw self loops only).
/// `after_search`, when given, is called on every PE after each timed search (its root and this
/// PE's tree) and before the tree is counted and validated: the tests' way to corrupt a tree.
int bfs_main(context& ctx, const bfs_options& options,
             const std::function<void(std::int64_t root, bfs_tree& tree)>& after_search = {});

/// Local: bfs as `transit app bfs` runs it: its options (-s -e -r --seed -V) bound to options of its
/// own, and its program (bfs_main).
app_entry bfs_app();

}  // namespace transit::apps
