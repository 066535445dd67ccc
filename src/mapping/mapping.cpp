#include "transit/mapping/mapping.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <utility>

#include "mapping_detail.hpp"
#include "transit/detail/core/error.hpp"
#include "scotch.hpp"

namespace transit {
namespace detail {

void check_edges(std::span<const comm_edge> edges, int num_objects) {
  for (std::size_t i = 0; i < edges.size(); ++i) {
    for (const int object : {edges[i].a, edges[i].b}) {
      if (object < 0 || object >= num_objects)
        throw_invalid(concat("object of communication edge ", i), object, concat("0..", num_objects - 1));
    }
  }
}

int objects_per_pe_cap(int num_objects, int num_pes) {
  return num_objects == 0 ? 0 : (num_objects + num_pes - 1) / num_pes;
}

object_graph build_object_graph(int num_objects, std::span<const comm_edge> edges) {
  const auto n = static_cast<std::size_t>(num_objects);
  object_graph g;
  g.offsets.assign(n + 1, 0);
  for (const comm_edge& e : edges) {
    if (e.a == e.b) continue;
    ++g.offsets[static_cast<std::size_t>(e.a) + 1];
    ++g.offsets[static_cast<std::size_t>(e.b) + 1];
  }
  std::partial_sum(g.offsets.begin(), g.offsets.end(), g.offsets.begin());
  std::vector<std::pair<int, std::uint64_t>> slots(static_cast<std::size_t>(g.offsets.back()));
  std::vector<int> fill(g.offsets.begin(), g.offsets.end() - 1);
  for (const comm_edge& e : edges) {
    if (e.a == e.b) continue;
    slots[static_cast<std::size_t>(fill[static_cast<std::size_t>(e.a)]++)] = {e.b, e.bytes};
    slots[static_cast<std::size_t>(fill[static_cast<std::size_t>(e.b)]++)] = {e.a, e.bytes};
  }
  // Sort each row and merge parallel edges.
  std::vector<int> merged_offsets{0};
  merged_offsets.reserve(n + 1);
  for (std::size_t v = 0; v < n; ++v) {
    const auto first = slots.begin() + g.offsets[v];
    const auto last = slots.begin() + g.offsets[v + 1];
    std::sort(first, last, [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto it = first; it != last; ++it) {
      if (!g.neighbours.empty() && static_cast<int>(g.neighbours.size()) > merged_offsets.back() &&
          g.neighbours.back() == it->first) {
        g.weights.back() += it->second;
      } else {
        g.neighbours.push_back(it->first);
        g.weights.push_back(it->second);
      }
    }
    merged_offsets.push_back(static_cast<int>(g.neighbours.size()));
  }
  g.offsets = std::move(merged_offsets);
  return g;
}

node_geometry::node_geometry(const topology_manager& topo)
    : physical_(&topo.physical()), ndims_(topo.physical().ndims()) {
  node_of_pe_.resize(static_cast<std::size_t>(topo.num_pes()));
  for (int pe = 0; pe < topo.num_pes(); ++pe) node_of_pe_[static_cast<std::size_t>(pe)] = topo.node_of(pe);
  coords_.resize(static_cast<std::size_t>(physical_->num_nodes() * ndims_));
  for (int node = 0; node < physical_->num_nodes(); ++node) {
    int rest = node;  // row-major, the last dimension fastest
    for (int d = ndims_; d-- > 0;) {
      coords_[static_cast<std::size_t>(node * ndims_ + d)] = rest % physical_->dims()[static_cast<std::size_t>(d)];
      rest /= physical_->dims()[static_cast<std::size_t>(d)];
    }
  }
}

int node_geometry::node_at(std::span<const int> coords) const {
  int node = 0;
  for (int d = 0; d < ndims_; ++d) node = node * physical_->dims()[static_cast<std::size_t>(d)] + coords[static_cast<std::size_t>(d)];
  return node;
}

void enforce_capacity(const topology_manager& topo, const object_graph& graph, std::vector<int>& pe_of_object,
                      int cap) {
  const node_geometry geo(topo);
  std::vector<std::vector<int>> on_pe(static_cast<std::size_t>(topo.num_pes()));
  for (std::size_t o = 0; o < pe_of_object.size(); ++o) on_pe[static_cast<std::size_t>(pe_of_object[o])].push_back(static_cast<int>(o));
  std::vector<int> with_room;
  for (int pe = 0; pe < topo.num_pes(); ++pe)
    if (static_cast<int>(on_pe[static_cast<std::size_t>(pe)].size()) < cap) with_room.push_back(pe);
  for (int pe = 0; pe < topo.num_pes(); ++pe) {
    auto& here = on_pe[static_cast<std::size_t>(pe)];
    while (static_cast<int>(here.size()) > cap) {
      TRANSIT_ASSERT(!with_room.empty(), "cap x PEs covers every object");
      // The move (object here, PE with room) that adds the fewest hop-bytes; ties: nearest PE.
      std::size_t best_index = 0;
      int best_to = -1;
      std::int64_t best_delta = 0;
      int best_hops = 0;
      for (std::size_t i = 0; i < here.size(); ++i) {
        const int o = here[i];
        const auto adj = graph.adjacent(o);
        const auto w = graph.adjacent_weights(o);
        for (const int to : with_room) {
          std::int64_t delta = 0;
          for (std::size_t k = 0; k < adj.size(); ++k) {
            const int other = pe_of_object[static_cast<std::size_t>(adj[k])];
            delta += static_cast<std::int64_t>(w[k]) * (geo.pe_hops(to, other) - geo.pe_hops(pe, other));
          }
          const int h = geo.pe_hops(pe, to);
          if (best_to < 0 || delta < best_delta || (delta == best_delta && h < best_hops)) {
            best_index = i;
            best_to = to;
            best_delta = delta;
            best_hops = h;
          }
        }
      }
      const int o = here[best_index];
      here.erase(here.begin() + static_cast<std::ptrdiff_t>(best_index));
      pe_of_object[static_cast<std::size_t>(o)] = best_to;
      auto& there = on_pe[static_cast<std::size_t>(best_to)];
      there.push_back(o);
      if (static_cast<int>(there.size()) == cap) std::erase(with_room, best_to);
    }
  }
}

}  // namespace detail

namespace {

void check_pes(const topology_manager& topo, std::span<const int> pe_of_object) {
  for (std::size_t object = 0; object < pe_of_object.size(); ++object) {
    const int pe = pe_of_object[object];
    if (pe < 0 || pe >= topo.num_pes())
      detail::throw_invalid(detail::concat("PE of object ", object), pe,
                            detail::concat("0..", topo.num_pes() - 1));
  }
}

void check_count(int num_objects) {
  if (num_objects < 0) detail::throw_invalid("number of objects", num_objects, "at least 0");
}

// Dimension-order routing from node `from` to node `to`: calls visit(link) for every link crossed.
// Dimension 0 is corrected first. In a torus the shorter way round is taken; at exactly half a ring
// both ways are equally short and the route goes up (increasing coordinates, wrapping), which for
// a ring of two uses both of its cables (0->1 on cable 0, 1->0 on cable 1) and spreads uniform
// traffic evenly. A switched dimension is crossed in one hop that loads the port of the node it
// leaves and the port of the node it reaches. visit(link, up): up is the direction, for a cable from
// the lower node to the upper (wrapping), for a port out of its node into the switch.
template <class Visit>
void route(const detail::node_geometry& geo, int from, int to, Visit&& visit) {
  const physical_topology& phys = geo.physical();
  const int nd = geo.ndims();
  std::vector<int> at(static_cast<std::size_t>(nd));
  for (int d = 0; d < nd; ++d) at[static_cast<std::size_t>(d)] = geo.coord(from, d);
  int node = from;
  for (int d = 0; d < nd; ++d) {
    const int target = geo.coord(to, d);
    int& c = at[static_cast<std::size_t>(d)];
    if (c == target) continue;
    const int size = phys.dims()[static_cast<std::size_t>(d)];
    // Stride of dimension d in the row-major node index.
    int stride = 1;
    for (int e = d + 1; e < nd; ++e) stride *= phys.dims()[static_cast<std::size_t>(e)];
    const link_kind kind = phys.link(d);
    if (kind == link_kind::switched) {
      visit(node * nd + d, true);
      node += (target - c) * stride;
      c = target;
      visit(node * nd + d, false);
      continue;
    }
    bool up = target > c;
    if (kind == link_kind::torus) {
      const int up_steps = (target - c + size) % size;
      up = up_steps <= size - up_steps;  // ties (half a ring) go up
    }
    while (c != target) {
      if (up) {
        visit(node * nd + d, true);  // the cable from this node one step up
        const int next = c + 1 == size ? 0 : c + 1;
        node += (next - c) * stride;
        c = next;
      } else {
        const int next = c == 0 ? size - 1 : c - 1;
        node += (next - c) * stride;
        c = next;
        visit(node * nd + d, false);  // the cable from the lower node up to where we came from
      }
    }
  }
}

std::vector<int> block_mapping(const topology_manager& topo, int num_objects) {
  const int per_pe = detail::objects_per_pe_cap(num_objects, topo.num_pes());
  std::vector<int> pe_of(static_cast<std::size_t>(num_objects));
  for (int o = 0; o < num_objects; ++o) pe_of[static_cast<std::size_t>(o)] = o / per_pe;
  return pe_of;
}

// The objects Scotch put on a node spread over the node's PEs, then any beyond the per-PE cap
// moved to the nearest PE with room.
std::vector<int> scotch_mapping(const topology_manager& topo, int num_objects, std::span<const comm_edge> edges) {
  const detail::scotch_answer answer = detail::scotch_map_nodes(topo, num_objects, edges);
  const detail::node_geometry geo(topo);
  std::vector<std::vector<int>> pes_of_node(static_cast<std::size_t>(geo.num_nodes()));
  for (int pe = 0; pe < topo.num_pes(); ++pe) pes_of_node[static_cast<std::size_t>(geo.node_of_pe(pe))].push_back(pe);
  std::vector<std::size_t> next(pes_of_node.size(), 0);
  std::vector<int> pe_of(static_cast<std::size_t>(num_objects));
  for (std::size_t o = 0; o < pe_of.size(); ++o) {
    const auto node = static_cast<std::size_t>(answer.node_of_object[o]);
    const auto& pes = pes_of_node[node];
    pe_of[o] = pes[next[node]++ % pes.size()];
  }
  detail::enforce_capacity(topo, detail::build_object_graph(num_objects, edges), pe_of,
                           detail::objects_per_pe_cap(num_objects, topo.num_pes()));
  return pe_of;
}

}  // namespace

std::uint64_t hop_bytes(const topology_manager& topo, std::span<const comm_edge> edges,
                        std::span<const int> pe_of_object) {
  detail::check_edges(edges, static_cast<int>(pe_of_object.size()));
  check_pes(topo, pe_of_object);
  const detail::node_geometry geo(topo);
  std::uint64_t total = 0;
  for (const comm_edge& e : edges) {
    const auto h = static_cast<std::uint64_t>(
        geo.pe_hops(pe_of_object[static_cast<std::size_t>(e.a)], pe_of_object[static_cast<std::size_t>(e.b)]));
    total += e.bytes * h;
  }
  return total;
}

std::vector<std::uint64_t> link_loads(const topology_manager& topo, std::span<const comm_edge> edges,
                                      std::span<const int> pe_of_object) {
  const std::vector<std::uint64_t> directed = directed_link_loads(topo, edges, pe_of_object);
  std::vector<std::uint64_t> load(directed.size() / 2);
  for (std::size_t l = 0; l < load.size(); ++l) load[l] = directed[2 * l] + directed[2 * l + 1];
  return load;
}

std::vector<std::uint64_t> directed_link_loads(const topology_manager& topo, std::span<const comm_edge> edges,
                                               std::span<const int> pe_of_object) {
  detail::check_edges(edges, static_cast<int>(pe_of_object.size()));
  check_pes(topo, pe_of_object);
  const detail::node_geometry geo(topo);
  std::vector<std::uint64_t> load(static_cast<std::size_t>(2 * geo.num_nodes() * geo.ndims()), 0);
  for (const comm_edge& e : edges) {
    const int from = geo.node_of_pe(pe_of_object[static_cast<std::size_t>(e.a)]);
    const int to = geo.node_of_pe(pe_of_object[static_cast<std::size_t>(e.b)]);
    if (from == to || e.bytes == 0) continue;
    route(geo, from, to, [&](int link, bool up) { load[static_cast<std::size_t>(2 * link + (up ? 0 : 1))] += e.bytes; });
  }
  return load;
}

mapping_quality evaluate_mapping(const topology_manager& topo, std::span<const comm_edge> edges,
                                 std::span<const int> pe_of_object) {
  const std::vector<std::uint64_t> loads = link_loads(topo, edges, pe_of_object);  // checks the input
  const detail::node_geometry geo(topo);
  mapping_quality q;
  std::uint64_t total_bytes = 0;
  for (const comm_edge& e : edges) {
    const int h = geo.pe_hops(pe_of_object[static_cast<std::size_t>(e.a)], pe_of_object[static_cast<std::size_t>(e.b)]);
    q.hop_bytes += e.bytes * static_cast<std::uint64_t>(h);
    total_bytes += e.bytes;
    q.dilation = std::max(q.dilation, h);
  }
  q.average_hops = total_bytes == 0 ? 0.0 : static_cast<double>(q.hop_bytes) / static_cast<double>(total_bytes);
  q.max_link_bytes = loads.empty() ? 0 : *std::max_element(loads.begin(), loads.end());
  std::vector<int> per_pe(static_cast<std::size_t>(topo.num_pes()), 0);
  for (const int pe : pe_of_object) q.max_objects_per_pe = std::max(q.max_objects_per_pe, ++per_pe[static_cast<std::size_t>(pe)]);
  return q;
}

std::vector<int> greedy_mapping(const topology_manager& topo, int num_objects,
                                std::span<const comm_edge> edges) {
  check_count(num_objects);
  detail::check_edges(edges, num_objects);
  const auto n = static_cast<std::size_t>(num_objects);
  const int num_pes = topo.num_pes();
  const detail::node_geometry geo(topo);
  const detail::object_graph graph = detail::build_object_graph(num_objects, edges);

  std::vector<std::uint64_t> total_bytes(n, 0);
  for (int v = 0; v < num_objects; ++v)
    for (const std::uint64_t w : graph.adjacent_weights(v)) total_bytes[static_cast<std::size_t>(v)] += w;
  // Seeds of new components, heaviest first (stable: lower index first on ties).
  std::vector<int> seeds(n);
  std::iota(seeds.begin(), seeds.end(), 0);
  std::stable_sort(seeds.begin(), seeds.end(), [&](int x, int y) {
    return total_bytes[static_cast<std::size_t>(x)] > total_bytes[static_cast<std::size_t>(y)];
  });

  // Balance: without a cap the greedy choice would pile every object onto one PE (0 hops).
  const int cap = detail::objects_per_pe_cap(num_objects, num_pes);
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

  // The PEs of a node cost the same, so costs are computed once per node and step.
  std::vector<std::uint64_t> node_cost(static_cast<std::size_t>(geo.num_nodes()));
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
    const auto adj = graph.adjacent(object);
    const auto adj_bytes = graph.adjacent_weights(object);
    const bool seeded = gain[static_cast<std::size_t>(object)] == 0;
    for (int node = 0; node < geo.num_nodes(); ++node) {
      std::uint64_t cost = 0;
      if (seeded) {
        cost = static_cast<std::uint64_t>(geo.node_hops(geo.node_of_pe(last_pe), node));
      } else {
        for (std::size_t i = 0; i < adj.size(); ++i) {
          const int other_pe = pe_of[static_cast<std::size_t>(adj[i])];
          if (other_pe >= 0)
            cost += adj_bytes[i] * static_cast<std::uint64_t>(geo.node_hops(node, geo.node_of_pe(other_pe)));
        }
      }
      node_cost[static_cast<std::size_t>(node)] = cost;
    }
    int best_pe = -1;
    std::uint64_t best_cost = std::numeric_limits<std::uint64_t>::max();
    for (int pe = 0; pe < num_pes; ++pe) {
      if (load[static_cast<std::size_t>(pe)] >= cap) continue;
      const std::uint64_t cost = node_cost[static_cast<std::size_t>(geo.node_of_pe(pe))];
      if (cost < best_cost) {
        best_cost = cost;
        best_pe = pe;
      }
    }
    TRANSIT_ASSERT(best_pe >= 0, "the cap leaves room for every object");
    pe_of[static_cast<std::size_t>(object)] = best_pe;
    ++load[static_cast<std::size_t>(best_pe)];
    last_pe = best_pe;
    for (std::size_t i = 0; i < adj.size(); ++i) {
      const auto o = static_cast<std::size_t>(adj[i]);
      if (pe_of[o] >= 0) continue;
      gain[o] += adj_bytes[i];
      ready.emplace(gain[o], adj[i]);
    }
  }
  return pe_of;
}

std::string_view to_string(mapper m) noexcept {
  switch (m) {
    case mapper::block: return "block";
    case mapper::greedy: return "greedy";
    case mapper::bisection: return "bisection";
    case mapper::scotch: return "scotch";
  }
  return "?";
}

std::vector<int> map_objects(const topology_manager& topo, int num_objects,
                             std::span<const comm_edge> edges, mapper m) {
  check_count(num_objects);
  detail::check_edges(edges, num_objects);
  switch (m) {
    case mapper::block: return block_mapping(topo, num_objects);
    case mapper::greedy: return greedy_mapping(topo, num_objects, edges);
    case mapper::bisection:
      return detail::bisection_mapping(topo, num_objects, detail::build_object_graph(num_objects, edges));
    case mapper::scotch: return scotch_mapping(topo, num_objects, edges);
  }
  detail::throw_invalid("mapper", static_cast<int>(m), "block, greedy, bisection or scotch");
}

std::vector<int> shuffle_nodes(const topology_manager& topo, std::span<const int> pe_of_object, std::uint64_t seed) {
  check_pes(topo, pe_of_object);
  const int ppn = topo.physical().pes_per_node();
  const auto slot_of = [&](int pe) { return topo.coords(pe).back(); };
  // pe_at_slot[node * ppn + slot]: the PE of the job there, or -1. Nodes are grouped by the slots
  // they hold, so that a node trades places only with nodes that can take its PEs slot for slot.
  std::vector<int> pe_at_slot(static_cast<std::size_t>(topo.physical().capacity()), -1);
  for (int pe = 0; pe < topo.num_pes(); ++pe)
    pe_at_slot[static_cast<std::size_t>(topo.node_of(pe) * ppn + slot_of(pe))] = pe;
  std::map<std::vector<bool>, std::vector<int>> nodes_by_slots;
  for (int node = 0; node < topo.physical().num_nodes(); ++node) {
    std::vector<bool> held(static_cast<std::size_t>(ppn));
    for (int s = 0; s < ppn; ++s) held[static_cast<std::size_t>(s)] = pe_at_slot[static_cast<std::size_t>(node * ppn + s)] >= 0;
    if (std::find(held.begin(), held.end(), true) != held.end()) nodes_by_slots[held].push_back(node);
  }
  // Fisher-Yates with splitmix64, not std::shuffle: the same seed gives the same baseline everywhere.
  detail::splitmix rng(seed);
  std::vector<int> new_node(static_cast<std::size_t>(topo.physical().num_nodes()), -1);
  for (const auto& [held, nodes] : nodes_by_slots) {
    std::vector<int> order = nodes;
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    for (std::size_t i = 0; i < nodes.size(); ++i) new_node[static_cast<std::size_t>(nodes[i])] = order[i];
  }
  std::vector<int> out(pe_of_object.size());
  for (std::size_t o = 0; o < out.size(); ++o) {
    const int pe = pe_of_object[o];
    out[o] = pe_at_slot[static_cast<std::size_t>(new_node[static_cast<std::size_t>(topo.node_of(pe))] * ppn + slot_of(pe))];
  }
  return out;
}

// ---- multiple instances ---------------------------------------------------------------------

topology_manager sub_partition_topology(const topology_manager& topo, int parts) {
  const int split = topo.longest_dimension();
  const std::vector<int> first = topo.sub_partition(parts, 0);  // checks parts
  const physical_topology& phys = topo.physical();
  // A slice of a dragonfly or fat tree is not the same network on fewer nodes (a dragonfly's global
  // links hang on routers chosen by group number), so its instances would not be alike.
  if (parts > 1 && phys.network() != network_kind::direct)
    detail::throw_invalid("machine for multiple instances", phys.str(), "a torus, mesh or switch network");
  std::vector<int> dims(phys.dims().begin(), phys.dims().end());
  std::vector<link_kind> links;
  for (int d = 0; d < phys.ndims(); ++d) links.push_back(phys.link(d));
  dims[static_cast<std::size_t>(split)] /= parts;
  if (parts > 1 && links[static_cast<std::size_t>(split)] == link_kind::torus)
    links[static_cast<std::size_t>(split)] = link_kind::mesh;  // the ring is cut
  topology_manager sub(physical_topology(std::move(dims), std::move(links), phys.pes_per_node()),
                       static_cast<int>(first.size()));
  // The sub-topology numbers its PEs row-major from its first slot; every sub-partition must have
  // its PEs in exactly those slots for one mapping to fit them all.
  for (int index = 0; index < parts; ++index) {
    const std::vector<int> pes = topo.sub_partition(parts, index);
    bool same = pes.size() == first.size();
    for (std::size_t q = 0; same && q < pes.size(); ++q) {
      std::vector<int> c = topo.coords(pes[q]);
      c[static_cast<std::size_t>(split)] -= index * (phys.dims()[static_cast<std::size_t>(split)] / parts);
      same = sub.pe_at(c) == static_cast<int>(q);
    }
    if (!same)
      detail::throw_invalid(detail::concat("PEs of sub-partition ", index, " of ", parts), pes.size(),
                            detail::concat("the same slots in every sub-partition (", first.size(),
                                           " PEs from the first slot on); a job that leaves slots "
                                           "empty cannot hold identical instances"));
  }
  return sub;
}

std::vector<int> translate_mapping(const topology_manager& topo, int parts, int index,
                                   std::span<const int> pe_in_sub) {
  const std::vector<int> pes = topo.sub_partition(parts, index);
  std::vector<int> out(pe_in_sub.size());
  for (std::size_t o = 0; o < pe_in_sub.size(); ++o) {
    const int q = pe_in_sub[o];
    if (q < 0 || q >= static_cast<int>(pes.size()))
      detail::throw_invalid(detail::concat("PE of object ", o, " in the sub-partition"), q,
                            detail::concat("0..", static_cast<int>(pes.size()) - 1));
    out[o] = pes[static_cast<std::size_t>(q)];
  }
  return out;
}

}  // namespace transit
