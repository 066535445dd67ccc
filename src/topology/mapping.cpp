#include "transit/topology/mapping.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>
#include <utility>

#include "transit/core/error.hpp"

namespace transit {
namespace {

void check_edges(std::span<const comm_edge> edges, int num_objects) {
  for (std::size_t i = 0; i < edges.size(); ++i) {
    for (const int object : {edges[i].a, edges[i].b}) {
      if (object < 0 || object >= num_objects)
        detail::throw_invalid(detail::concat("object of communication edge ", i), object,
                              detail::concat("0..", num_objects - 1));
    }
  }
}

}  // namespace

std::uint64_t hop_bytes(const topology_manager& topo, std::span<const comm_edge> edges,
                        std::span<const int> pe_of_object) {
  check_edges(edges, static_cast<int>(pe_of_object.size()));
  for (std::size_t object = 0; object < pe_of_object.size(); ++object) {
    const int pe = pe_of_object[object];
    if (pe < 0 || pe >= topo.num_pes())
      detail::throw_invalid(detail::concat("PE of object ", object), pe,
                            detail::concat("0..", topo.num_pes() - 1));
  }
  std::uint64_t total = 0;
  for (const comm_edge& e : edges) {
    const auto h = static_cast<std::uint64_t>(
        topo.hops(pe_of_object[static_cast<std::size_t>(e.a)], pe_of_object[static_cast<std::size_t>(e.b)]));
    total += e.bytes * h;
  }
  return total;
}

std::vector<int> greedy_mapping(const topology_manager& topo, int num_objects,
                                std::span<const comm_edge> edges) {
  if (num_objects < 0) detail::throw_invalid("number of objects", num_objects, "at least 0");
  check_edges(edges, num_objects);
  const auto n = static_cast<std::size_t>(num_objects);
  const int num_pes = topo.num_pes();

  std::vector<std::vector<std::pair<int, std::uint64_t>>> neighbours(n);
  std::vector<std::uint64_t> total_bytes(n, 0);
  for (const comm_edge& e : edges) {
    if (e.a == e.b) continue;  // costs nothing wherever the object goes
    neighbours[static_cast<std::size_t>(e.a)].emplace_back(e.b, e.bytes);
    neighbours[static_cast<std::size_t>(e.b)].emplace_back(e.a, e.bytes);
    total_bytes[static_cast<std::size_t>(e.a)] += e.bytes;
    total_bytes[static_cast<std::size_t>(e.b)] += e.bytes;
  }
  // Seeds of new components, heaviest first (stable: lower index first on ties).
  std::vector<int> seeds(n);
  std::iota(seeds.begin(), seeds.end(), 0);
  std::stable_sort(seeds.begin(), seeds.end(), [&](int x, int y) {
    return total_bytes[static_cast<std::size_t>(x)] > total_bytes[static_cast<std::size_t>(y)];
  });

  // Balance: without a cap the greedy choice would pile every object onto one PE (0 hops).
  const int cap = num_objects == 0 ? 0 : (num_objects + num_pes - 1) / num_pes;
  std::vector<int> load(static_cast<std::size_t>(num_pes), 0);
  std::vector<int> pe_of(n, -1);
  std::vector<std::uint64_t> gain(n, 0);  // bytes to placed neighbours
  // Max-heap on gain, lower object first on ties; stale entries are skipped when popped.
  auto lower_priority = [](const std::pair<std::uint64_t, int>& x, const std::pair<std::uint64_t, int>& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  };
  std::priority_queue<std::pair<std::uint64_t, int>, std::vector<std::pair<std::uint64_t, int>>,
                      decltype(lower_priority)>
      ready(lower_priority);

  std::size_t next_seed = 0;
  int last_pe = 0;
  for (std::size_t placed = 0; placed < n; ++placed) {
    int object = -1;
    while (!ready.empty() && object < 0) {
      const auto [g, candidate] = ready.top();
      ready.pop();
      if (pe_of[static_cast<std::size_t>(candidate)] < 0 && g == gain[static_cast<std::size_t>(candidate)])
        object = candidate;
    }
    while (object < 0) {
      const int seed = seeds[next_seed++];
      if (pe_of[static_cast<std::size_t>(seed)] < 0) object = seed;
    }

    // Cost of each free PE: hop-bytes to placed neighbours, or for a seed, hops from the last
    // placement so that separate components stay compact too.
    int best_pe = -1;
    std::uint64_t best_cost = std::numeric_limits<std::uint64_t>::max();
    const auto& adj = neighbours[static_cast<std::size_t>(object)];
    const bool seeded = gain[static_cast<std::size_t>(object)] == 0;
    for (int pe = 0; pe < num_pes; ++pe) {
      if (load[static_cast<std::size_t>(pe)] >= cap) continue;
      std::uint64_t cost = 0;
      if (seeded) {
        cost = static_cast<std::uint64_t>(topo.hops(last_pe, pe));
      } else {
        for (const auto& [other, bytes] : adj) {
          const int other_pe = pe_of[static_cast<std::size_t>(other)];
          if (other_pe >= 0) cost += bytes * static_cast<std::uint64_t>(topo.hops(pe, other_pe));
        }
      }
      if (cost < best_cost) {
        best_cost = cost;
        best_pe = pe;
      }
    }
    TRANSIT_ASSERT(best_pe >= 0, "the cap leaves room for every object");
    pe_of[static_cast<std::size_t>(object)] = best_pe;
    ++load[static_cast<std::size_t>(best_pe)];
    last_pe = best_pe;
    for (const auto& [other, bytes] : adj) {
      const auto o = static_cast<std::size_t>(other);
      if (pe_of[o] >= 0) continue;
      gain[o] += bytes;
      ready.emplace(gain[o], other);
    }
  }
  return pe_of;
}

}  // namespace transit
