// mapper::bisection: dual recursive bisection (Pellegrini's scheme, as Scotch applies it). The
// machine is halved along its longest node dimension, again and again, down to single nodes; at
// every halving the objects of that part of the machine are bisected in proportion to the PEs of
// the two halves, minimising
//
//   (bytes cut between the halves) x (distance between the halves)
//   + sum over edges leaving the part of bytes x (distance from the chosen half to the part of the
//     machine the other end already sits in).
//
// The second term is what makes the bisection topology-aware: an object whose neighbours went to
// the west is pulled into the western half. Parts are processed level by level, so the other end
// of an edge sits in a part of the same or the previous level. Distances are between part centres
// in half-hops (integers), torus wrap-around included.
//
// Each bisection is multilevel: heavy-edge clustering coarsens the graph to about a hundred
// vertices, several greedy growths (from different seeds, and one from the external pulls alone)
// start a partition that Fiduccia-Mattheyses refines, and FM refines again at every level on the
// way back. At the finest level the halves get exactly their share, so every PE ends with at most
// ceil(objects / PEs) objects.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "mapping_detail.hpp"
#include "transit/detail/core/error.hpp"

namespace transit::detail {
namespace {

using cost_t = std::int64_t;

// ---- one bisection --------------------------------------------------------------------------

// A graph to bisect: internal edges (weights already times the distance between the halves) and,
// per vertex, the external cost of putting it in half 0 or half 1.
struct bisection_graph {
  std::vector<int> offsets{0};
  std::vector<int> neighbours;
  std::vector<cost_t> weights;
  std::vector<cost_t> vertex_weight;
  std::vector<cost_t> external[2];

  int size() const noexcept { return static_cast<int>(vertex_weight.size()); }
  cost_t total_weight() const { return std::accumulate(vertex_weight.begin(), vertex_weight.end(), cost_t{0}); }
};

// Deterministic pseudo-random numbers (the mapping must not change between runs).
class lcg {
 public:
  explicit lcg(std::uint64_t seed) : state_(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
  std::uint32_t next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(state_ >> 33);
  }

 private:
  std::uint64_t state_;
};

struct partition {
  std::vector<std::uint8_t> side;
  cost_t weight0 = 0;
  cost_t cost = 0;
};

cost_t cost_of(const bisection_graph& g, const std::vector<std::uint8_t>& side) {
  cost_t cost = 0;
  for (int v = 0; v < g.size(); ++v) {
    const int s = side[static_cast<std::size_t>(v)];
    cost += g.external[s][static_cast<std::size_t>(v)];
    for (int i = g.offsets[static_cast<std::size_t>(v)]; i < g.offsets[static_cast<std::size_t>(v) + 1]; ++i)
      if (side[static_cast<std::size_t>(g.neighbours[static_cast<std::size_t>(i)])] != s && g.neighbours[static_cast<std::size_t>(i)] > v)
        cost += g.weights[static_cast<std::size_t>(i)];
  }
  return cost;
}

partition make_partition(const bisection_graph& g, std::vector<std::uint8_t> side) {
  partition p;
  p.side = std::move(side);
  for (int v = 0; v < g.size(); ++v)
    if (p.side[static_cast<std::size_t>(v)] == 0) p.weight0 += g.vertex_weight[static_cast<std::size_t>(v)];
  p.cost = cost_of(g, p.side);
  return p;
}

// Cost decrease when v changes sides.
cost_t gain_of(const bisection_graph& g, const std::vector<std::uint8_t>& side, int v) {
  const int s = side[static_cast<std::size_t>(v)];
  cost_t gain = g.external[s][static_cast<std::size_t>(v)] - g.external[1 - s][static_cast<std::size_t>(v)];
  for (int i = g.offsets[static_cast<std::size_t>(v)]; i < g.offsets[static_cast<std::size_t>(v) + 1]; ++i)
    gain += side[static_cast<std::size_t>(g.neighbours[static_cast<std::size_t>(i)])] != s ? g.weights[static_cast<std::size_t>(i)]
                                                                                            : -g.weights[static_cast<std::size_t>(i)];
  return gain;
}

// Ordering of partitions: first the imbalance beyond `slack`, then the cost.
std::pair<cost_t, cost_t> rank(const partition& p, cost_t target0, cost_t slack) {
  return {std::max<cost_t>(0, std::abs(p.weight0 - target0) - slack), p.cost};
}

// Fiduccia-Mattheyses passes: each moves unlocked vertices one at a time, best gain first, keeping
// the weight of half 0 within target0 +- band (or moving towards it), then rolls back to the best
// state seen. Stops when a pass finds nothing better.
void refine(const bisection_graph& g, partition& p, cost_t target0, cost_t band, cost_t slack) {
  const int n = g.size();
  if (n == 0) return;
  const int patience = 100 + n / 50;  // moves without a new best before a pass gives up
  std::vector<cost_t> gain(static_cast<std::size_t>(n));
  std::vector<std::uint8_t> locked(static_cast<std::size_t>(n));
  std::vector<std::uint8_t>& side = p.side;
  using entry = std::pair<cost_t, int>;  // (gain, vertex): max gain, then highest vertex
  for (int pass = 0; pass < 8; ++pass) {
    std::priority_queue<entry> heap[2];
    for (int v = 0; v < n; ++v) {
      gain[static_cast<std::size_t>(v)] = gain_of(g, side, v);
      heap[side[static_cast<std::size_t>(v)]].emplace(gain[static_cast<std::size_t>(v)], v);
    }
    std::fill(locked.begin(), locked.end(), 0);
    std::vector<int> moves;
    partition now;  // weight and cost as moves go; the sides live in p.side
    now.weight0 = p.weight0;
    now.cost = p.cost;
    const auto start = rank(now, target0, slack);
    auto best = start;
    std::size_t best_moves = 0;
    cost_t best_weight0 = now.weight0, best_cost = now.cost;
    while (static_cast<int>(moves.size() - best_moves) < patience) {
      int chosen = -1;
      cost_t chosen_gain = std::numeric_limits<cost_t>::min();
      for (int s = 0; s < 2; ++s) {
        auto& h = heap[s];
        while (!h.empty()) {  // drop stale entries
          const auto [gv, v] = h.top();
          const auto vu = static_cast<std::size_t>(v);
          if (!locked[vu] && side[vu] == s && gain[vu] == gv) break;
          h.pop();
        }
        if (h.empty()) continue;
        const auto [gv, v] = h.top();
        const cost_t w = g.vertex_weight[static_cast<std::size_t>(v)];
        const cost_t after = now.weight0 + (s == 0 ? -w : w);
        const bool within = std::abs(after - target0) <= band;
        const bool closer = std::abs(after - target0) < std::abs(now.weight0 - target0);
        if ((within || closer) && gv > chosen_gain) {
          chosen_gain = gv;
          chosen = v;
        }
      }
      if (chosen < 0) break;
      const auto cu = static_cast<std::size_t>(chosen);
      const int s = side[cu];
      heap[s].pop();
      side[cu] = static_cast<std::uint8_t>(1 - s);
      locked[cu] = 1;
      now.weight0 += s == 0 ? -g.vertex_weight[cu] : g.vertex_weight[cu];
      now.cost -= chosen_gain;
      moves.push_back(chosen);
      for (int i = g.offsets[cu]; i < g.offsets[cu + 1]; ++i) {
        const auto u = static_cast<std::size_t>(g.neighbours[static_cast<std::size_t>(i)]);
        if (locked[u]) continue;
        // u on the side `chosen` left: their edge is now cut; on the other side: no longer cut.
        const cost_t delta = 2 * g.weights[static_cast<std::size_t>(i)];
        gain[u] += side[u] == s ? delta : -delta;
        heap[side[u]].emplace(gain[u], static_cast<int>(u));
      }
      const auto r = rank(now, target0, slack);
      if (r < best) {
        best = r;
        best_moves = moves.size();
        best_weight0 = now.weight0;
        best_cost = now.cost;
      }
    }
    for (std::size_t i = moves.size(); i-- > best_moves;) {  // roll back past the best state
      const auto v = static_cast<std::size_t>(moves[i]);
      side[v] = static_cast<std::uint8_t>(1 - side[v]);
    }
    p.weight0 = best_weight0;
    p.cost = best_cost;
    if (!(best < start)) break;
  }
}

// Moves the best-gain vertices off the heavier half until half 0 weighs exactly target0 (unit
// vertex weights at the finest level make that reachable).
void balance_exactly(const bisection_graph& g, partition& p, cost_t target0) {
  while (p.weight0 != target0) {
    const int from = p.weight0 > target0 ? 0 : 1;
    int best = -1;
    cost_t best_gain = std::numeric_limits<cost_t>::min();
    // One sweep per move is quadratic in the worst case, but the imbalance left by FM is a few
    // vertices, so this runs a handful of times.
    for (int v = 0; v < g.size(); ++v) {
      if (p.side[static_cast<std::size_t>(v)] != from) continue;
      if (g.vertex_weight[static_cast<std::size_t>(v)] > std::abs(p.weight0 - target0)) continue;
      const cost_t gv = gain_of(g, p.side, v);
      if (gv > best_gain) {
        best_gain = gv;
        best = v;
      }
    }
    TRANSIT_ASSERT(best >= 0, "unit weights make any share reachable");
    p.side[static_cast<std::size_t>(best)] = static_cast<std::uint8_t>(1 - from);
    p.weight0 += from == 0 ? -g.vertex_weight[static_cast<std::size_t>(best)] : g.vertex_weight[static_cast<std::size_t>(best)];
    p.cost -= best_gain;
  }
}

// Heavy-edge clustering: each vertex, in a shuffled order, joins the neighbour across its heaviest
// edge (or that neighbour's cluster) unless the cluster would weigh more than max_weight. Unlike
// pairwise matching, this contracts a star (a density object and the 128 states that report to it)
// in one level, so that the star stays whole. Returns the coarse graph and fills coarse_of.
bisection_graph coarsen(const bisection_graph& g, cost_t max_weight, lcg& rng, std::vector<int>& coarse_of) {
  const int n = g.size();
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  for (int i = n - 1; i > 0; --i) std::swap(order[static_cast<std::size_t>(i)], order[rng.next() % static_cast<std::uint32_t>(i + 1)]);
  coarse_of.assign(static_cast<std::size_t>(n), -1);
  std::vector<cost_t> cluster_weight;
  for (const int v : order) {
    const auto vu = static_cast<std::size_t>(v);
    if (coarse_of[vu] >= 0) continue;
    int best = -1;
    cost_t best_w = -1;
    for (int i = g.offsets[vu]; i < g.offsets[vu + 1]; ++i) {
      const auto u = static_cast<std::size_t>(g.neighbours[static_cast<std::size_t>(i)]);
      const cost_t joined = coarse_of[u] >= 0 ? cluster_weight[static_cast<std::size_t>(coarse_of[u])] : g.vertex_weight[u];
      if (joined + g.vertex_weight[vu] > max_weight) continue;
      if (g.weights[static_cast<std::size_t>(i)] > best_w) {
        best_w = g.weights[static_cast<std::size_t>(i)];
        best = static_cast<int>(u);
      }
    }
    if (best >= 0 && coarse_of[static_cast<std::size_t>(best)] >= 0) {
      coarse_of[vu] = coarse_of[static_cast<std::size_t>(best)];
      cluster_weight[static_cast<std::size_t>(coarse_of[vu])] += g.vertex_weight[vu];
      continue;
    }
    coarse_of[vu] = static_cast<int>(cluster_weight.size());
    cluster_weight.push_back(g.vertex_weight[vu]);
    if (best >= 0) {
      coarse_of[static_cast<std::size_t>(best)] = coarse_of[vu];
      cluster_weight.back() += g.vertex_weight[static_cast<std::size_t>(best)];
    }
  }
  const int coarse_n = static_cast<int>(cluster_weight.size());

  // Members of every cluster, then each cluster's row from its members' rows.
  std::vector<int> member_offsets(static_cast<std::size_t>(coarse_n) + 1, 0);
  for (int v = 0; v < n; ++v) ++member_offsets[static_cast<std::size_t>(coarse_of[static_cast<std::size_t>(v)]) + 1];
  std::partial_sum(member_offsets.begin(), member_offsets.end(), member_offsets.begin());
  std::vector<int> members(static_cast<std::size_t>(n));
  {
    std::vector<int> fill(member_offsets.begin(), member_offsets.end() - 1);
    for (int v = 0; v < n; ++v) members[static_cast<std::size_t>(fill[static_cast<std::size_t>(coarse_of[static_cast<std::size_t>(v)])]++)] = v;
  }
  bisection_graph c;
  c.vertex_weight = std::move(cluster_weight);
  c.external[0].assign(static_cast<std::size_t>(coarse_n), 0);
  c.external[1].assign(static_cast<std::size_t>(coarse_n), 0);
  for (int v = 0; v < n; ++v) {
    const auto cv = static_cast<std::size_t>(coarse_of[static_cast<std::size_t>(v)]);
    c.external[0][cv] += g.external[0][static_cast<std::size_t>(v)];
    c.external[1][cv] += g.external[1][static_cast<std::size_t>(v)];
  }
  std::vector<int> slot(static_cast<std::size_t>(coarse_n), -1);  // where a neighbour sits in the row being built
  c.offsets.reserve(static_cast<std::size_t>(coarse_n) + 1);
  for (int cv = 0; cv < coarse_n; ++cv) {
    const int row_start = static_cast<int>(c.neighbours.size());
    for (int m = member_offsets[static_cast<std::size_t>(cv)]; m < member_offsets[static_cast<std::size_t>(cv) + 1]; ++m) {
      const auto member = static_cast<std::size_t>(members[static_cast<std::size_t>(m)]);
      for (int i = g.offsets[member]; i < g.offsets[member + 1]; ++i) {
        const int cu = coarse_of[static_cast<std::size_t>(g.neighbours[static_cast<std::size_t>(i)])];
        if (cu == cv) continue;
        int& at = slot[static_cast<std::size_t>(cu)];
        if (at >= row_start) {
          c.weights[static_cast<std::size_t>(at)] += g.weights[static_cast<std::size_t>(i)];
        } else {
          at = static_cast<int>(c.neighbours.size());
          c.neighbours.push_back(cu);
          c.weights.push_back(g.weights[static_cast<std::size_t>(i)]);
        }
      }
    }
    c.offsets.push_back(static_cast<int>(c.neighbours.size()));
  }
  return c;
}

// Greedy growth of half 0 from `seed` (or, with seed < 0, from the external pulls alone): the
// vertex whose move lowers the cost most joins, until half 0 has its share.
partition grow(const bisection_graph& g, int seed, cost_t target0) {
  const int n = g.size();
  std::vector<std::uint8_t> side(static_cast<std::size_t>(n), 1);
  cost_t weight0 = 0;
  std::vector<cost_t> gain(static_cast<std::size_t>(n));
  std::priority_queue<std::pair<cost_t, int>> heap;
  for (int v = 0; v < n; ++v) gain[static_cast<std::size_t>(v)] = gain_of(g, side, v);
  const auto join = [&](int v) {
    side[static_cast<std::size_t>(v)] = 0;
    weight0 += g.vertex_weight[static_cast<std::size_t>(v)];
    for (int i = g.offsets[static_cast<std::size_t>(v)]; i < g.offsets[static_cast<std::size_t>(v) + 1]; ++i) {
      const auto u = static_cast<std::size_t>(g.neighbours[static_cast<std::size_t>(i)]);
      if (side[u] == 0) continue;
      gain[u] += 2 * g.weights[static_cast<std::size_t>(i)];
      heap.emplace(gain[u], static_cast<int>(u));
    }
  };
  if (seed >= 0) {
    join(seed);
  } else {
    for (int v = 0; v < n; ++v) heap.emplace(gain[static_cast<std::size_t>(v)], v);
  }
  bool refilled = false;  // the heap was refilled and nothing has joined since
  while (weight0 < target0) {
    if (heap.empty()) {  // a disconnected remainder: go on from any vertex still in half 1
      if (refilled) break;  // every vertex left would overshoot
      for (int u = 0; u < n; ++u)
        if (side[static_cast<std::size_t>(u)] == 1) heap.emplace(gain[static_cast<std::size_t>(u)], u);
      refilled = true;
      if (heap.empty()) break;
    }
    const auto [gv, v] = heap.top();
    heap.pop();
    const auto vu = static_cast<std::size_t>(v);
    if (side[vu] == 0 || gv != gain[vu]) continue;
    if (weight0 + g.vertex_weight[vu] > target0 + g.vertex_weight[vu] / 2) continue;  // overshoots
    join(v);
    refilled = false;
  }
  return make_partition(g, std::move(side));
}

std::vector<std::uint8_t> bisect(const bisection_graph& fine, cost_t target0, std::uint64_t seed) {
  const cost_t total = fine.total_weight();
  if (target0 <= 0) return std::vector<std::uint8_t>(static_cast<std::size_t>(fine.size()), 1);
  if (target0 >= total) return std::vector<std::uint8_t>(static_cast<std::size_t>(fine.size()), 0);
  lcg rng(seed);

  // Coarsen.
  constexpr int coarse_enough = 100;
  const cost_t max_weight = std::max<cost_t>(1, std::min(target0, total - target0) / 8);
  std::vector<bisection_graph> levels;
  std::vector<std::vector<int>> coarse_of;
  const bisection_graph* g = &fine;
  while (g->size() > coarse_enough) {
    std::vector<int> map;
    bisection_graph c = coarsen(*g, max_weight, rng, map);
    if (c.size() > g->size() * 9 / 10) break;  // matching stalls (a star, or weight limits)
    coarse_of.push_back(std::move(map));
    levels.push_back(std::move(c));
    g = &levels.back();
  }

  // Initial partitions on the coarsest graph: growth from a few seeds and from the pulls alone.
  const auto band_of = [](const bisection_graph& graph) {
    return std::max<cost_t>(1, *std::max_element(graph.vertex_weight.begin(), graph.vertex_weight.end()));
  };
  cost_t band = band_of(*g);
  partition best;
  bool have_best = false;
  std::vector<int> seeds{-1};
  for (int i = 0; i < 6 && i < g->size(); ++i) seeds.push_back(static_cast<int>(rng.next() % static_cast<std::uint32_t>(g->size())));
  for (const int s : seeds) {
    partition p = grow(*g, s, target0);
    refine(*g, p, target0, band, band);
    if (!have_best || rank(p, target0, band) < rank(best, target0, band)) {
      best = std::move(p);
      have_best = true;
    }
  }

  // Uncoarsen: project, refine.
  for (std::size_t level = levels.size(); level-- > 0;) {
    const bisection_graph& finer = level == 0 ? fine : levels[level - 1];
    std::vector<std::uint8_t> side(static_cast<std::size_t>(finer.size()));
    for (int v = 0; v < finer.size(); ++v)
      side[static_cast<std::size_t>(v)] = best.side[static_cast<std::size_t>(coarse_of[level][static_cast<std::size_t>(v)])];
    best.side = std::move(side);  // weight and cost carry over unchanged
    band = band_of(finer);
    refine(finer, best, target0, band, level == 0 ? 0 : band);
  }
  best.cost = cost_of(fine, best.side);
  balance_exactly(fine, best, target0);
  refine(fine, best, target0, 2, 0);
  return best.side;
}

// ---- the machine side: boxes of nodes -------------------------------------------------------

struct part {
  std::vector<int> lo, len;  // node coordinates [lo, lo + len) per dimension, never wrapping
  std::vector<int> pes;      // PEs of the job in the box
  std::vector<int> objects;
};

class mapper_state {
 public:
  mapper_state(const topology_manager& topo, int num_objects, const object_graph& graph)
      : topo_(topo), geo_(topo), graph_(graph), part_of_(static_cast<std::size_t>(num_objects), 0),
        local_(static_cast<std::size_t>(num_objects), -1), pe_of_(static_cast<std::size_t>(num_objects), -1),
        cap_(objects_per_pe_cap(num_objects, topo.num_pes())) {}

  std::vector<int> run() {
    part root;
    const int nd = geo_.ndims();
    root.lo.assign(static_cast<std::size_t>(nd), 0);
    root.len.assign(geo_.physical().dims().begin(), geo_.physical().dims().end());
    root.pes.resize(static_cast<std::size_t>(topo_.num_pes()));
    std::iota(root.pes.begin(), root.pes.end(), 0);
    root.objects.resize(part_of_.size());
    std::iota(root.objects.begin(), root.objects.end(), 0);
    parts_.push_back(std::move(root));

    std::vector<int> level{0};
    std::uint64_t bisections = 0;
    while (!level.empty()) {
      std::vector<int> next;
      for (const int id : level) {
        if (parts_[static_cast<std::size_t>(id)].objects.empty()) continue;
        const int d = split_dimension(parts_[static_cast<std::size_t>(id)]);
        if (d < 0) {
          place_on_node(parts_[static_cast<std::size_t>(id)]);
          continue;
        }
        const auto [a, b] = split(id, d, ++bisections);
        if (a >= 0) next.push_back(a);
        if (b >= 0) next.push_back(b);
      }
      level = std::move(next);
    }
    return std::move(pe_of_);
  }

 private:
  // The longest dimension of the box (the first of equals), or -1 for a single node.
  static int split_dimension(const part& p) {
    int best = -1;
    for (std::size_t d = 0; d < p.len.size(); ++d)
      if (p.len[d] > 1 && (best < 0 || p.len[d] > p.len[static_cast<std::size_t>(best)])) best = static_cast<int>(d);
    return best;
  }

  // The PEs of one node are 0 hops apart: deal the objects out.
  void place_on_node(const part& p) {
    TRANSIT_ASSERT(!p.pes.empty(), "objects only go where there are PEs");
    TRANSIT_ASSERT(p.objects.size() <= p.pes.size() * static_cast<std::size_t>(cap_), "shares respect the cap");
    for (std::size_t i = 0; i < p.objects.size(); ++i)
      pe_of_[static_cast<std::size_t>(p.objects[i])] = p.pes[i % p.pes.size()];
  }

  // Distance in half-hops between the centres of two boxes.
  int distance(const part& x, const part& y) const {
    int total = 0;
    for (int d = 0; d < geo_.ndims(); ++d) {
      const auto du = static_cast<std::size_t>(d);
      const int size = geo_.physical().dims()[du];
      const int diff = std::abs((2 * x.lo[du] + x.len[du]) - (2 * y.lo[du] + y.len[du]));
      switch (geo_.physical().link(d)) {
        case link_kind::torus: total += std::min(diff, 2 * size - diff); break;
        case link_kind::mesh: total += diff; break;
        case link_kind::switched: total += (x.lo[du] == y.lo[du] && x.len[du] == y.len[du]) ? 0 : 2; break;
      }
    }
    return total;
  }

  // Halves part `id` along d; returns the ids of the halves that received objects (-1 for none).
  std::pair<int, int> split(int id, int d, std::uint64_t seed) {
    const auto du = static_cast<std::size_t>(d);
    part whole = std::move(parts_[static_cast<std::size_t>(id)]);
    part half[2];
    for (part& h : half) {
      h.lo = whole.lo;
      h.len = whole.len;
    }
    half[0].len[du] = whole.len[du] / 2;
    half[1].lo[du] = whole.lo[du] + half[0].len[du];
    half[1].len[du] = whole.len[du] - half[0].len[du];
    for (const int pe : whole.pes) {
      const int c = geo_.coord(geo_.node_of_pe(pe), d);
      half[c < half[1].lo[du] ? 0 : 1].pes.push_back(pe);
    }
    // Shares in proportion to the PEs, within what the cap allows on either side.
    const auto n = static_cast<cost_t>(whole.objects.size());
    const auto p0 = static_cast<cost_t>(half[0].pes.size());
    const auto p1 = static_cast<cost_t>(half[1].pes.size());
    cost_t share0 = (2 * n * p0 + (p0 + p1)) / (2 * (p0 + p1));  // rounded
    share0 = std::clamp(share0, n - cap_ * p1, cap_ * p0);

    // Half 0 keeps the id; half 1 is appended.
    const int ids[2] = {id, static_cast<int>(parts_.size())};
    parts_.emplace_back();
    std::vector<std::uint8_t> side;
    if (share0 == 0 || share0 == n) {
      side.assign(whole.objects.size(), share0 == 0 ? 1 : 0);
    } else {
      side = bisect(subgraph(whole, half), share0, seed);
    }
    for (std::size_t i = 0; i < whole.objects.size(); ++i) {
      const int o = whole.objects[i];
      half[side[i]].objects.push_back(o);
      part_of_[static_cast<std::size_t>(o)] = ids[side[i]];
    }
    const bool used0 = !half[0].objects.empty(), used1 = !half[1].objects.empty();
    parts_[static_cast<std::size_t>(ids[0])] = std::move(half[0]);
    parts_[static_cast<std::size_t>(ids[1])] = std::move(half[1]);
    return {used0 ? ids[0] : -1, used1 ? ids[1] : -1};
  }

  // The objects of `whole` as a graph to bisect between `half`; edges leaving it become external
  // costs towards the part their other end is in now.
  bisection_graph subgraph(const part& whole, const part (&half)[2]) {
    bisection_graph g;
    const std::size_t n = whole.objects.size();
    for (std::size_t i = 0; i < n; ++i) local_[static_cast<std::size_t>(whole.objects[i])] = static_cast<int>(i);
    g.vertex_weight.assign(n, 1);
    g.external[0].assign(n, 0);
    g.external[1].assign(n, 0);
    const cost_t between = distance(half[0], half[1]);
    // Distances to other parts, cached per part for this bisection.
    std::vector<std::pair<int, int>> cache(parts_.size(), {-1, -1});
    for (std::size_t i = 0; i < n; ++i) {
      const int v = whole.objects[i];
      const auto adj = graph_.adjacent(v);
      const auto w = graph_.adjacent_weights(v);
      for (std::size_t k = 0; k < adj.size(); ++k) {
        const int u = adj[k];
        const int local = local_[static_cast<std::size_t>(u)];
        if (local >= 0) {
          g.neighbours.push_back(local);
          g.weights.push_back(static_cast<cost_t>(w[k]) * between);
          continue;
        }
        const auto other = static_cast<std::size_t>(part_of_[static_cast<std::size_t>(u)]);
        if (cache[other].first < 0) cache[other] = {distance(half[0], parts_[other]), distance(half[1], parts_[other])};
        g.external[0][i] += static_cast<cost_t>(w[k]) * cache[other].first;
        g.external[1][i] += static_cast<cost_t>(w[k]) * cache[other].second;
      }
      g.offsets.push_back(static_cast<int>(g.neighbours.size()));
    }
    for (const int v : whole.objects) local_[static_cast<std::size_t>(v)] = -1;
    return g;
  }

  const topology_manager& topo_;
  node_geometry geo_;
  const object_graph& graph_;
  std::vector<part> parts_;
  std::vector<int> part_of_;  // object -> part it is in now
  std::vector<int> local_;    // object -> index in the part being bisected, or -1
  std::vector<int> pe_of_;
  cost_t cap_;
};

}  // namespace

std::vector<int> bisection_mapping(const topology_manager& topo, int num_objects, const object_graph& graph) {
  return mapper_state(topo, num_objects, graph).run();
}

}  // namespace transit::detail
