#include "transit/grid/router.hpp"

#include <algorithm>
#include <climits>
#include <map>

#include "routers.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/topology/machine.hpp"

namespace transit {

namespace {

bool by_phase_then_pe(const hop& a, const hop& b) {
  return a.phase != b.phase ? a.phase < b.phase : a.pe < b.pe;
}

void sort_unique(std::vector<hop>& links) {
  std::sort(links.begin(), links.end(), by_phase_then_pe);
  links.erase(std::unique(links.begin(), links.end()), links.end());
}

/// Node-aware schemes read each grid row (all coordinates but the last) as one machine node.
void check_rows_are_nodes(const virtual_grid& grid, const machine& m) {
  const std::string scheme = "node-aware routing";
  if (grid.ndims() < 2)
    detail::throw_invalid(detail::concat("grid for ", scheme), grid.str(),
                          "at least 2 dimensions, the last one holding the PEs of a node");
  const int width = grid.dims().back();
  if (width != m.max_pes_per_node())
    detail::throw_invalid(detail::concat("last dimension of grid ", grid.str(), " for ", scheme),
                          width,
                          detail::concat("the machine's ", m.max_pes_per_node(), " PEs per node"));
  std::map<int, int> node_of_row;
  std::map<int, int> row_of_node;
  for (int pe = 0; pe < grid.num_pes(); ++pe) {
    const int row = grid.slot_of(pe) / width;
    const int node = m.node_of(pe);
    if (node_of_row.emplace(row, node).first->second != node ||
        row_of_node.emplace(node, row).first->second != row)
      detail::throw_invalid(
          detail::concat("placement of PE ", pe, " in grid ", grid.str(), " for ", scheme),
          detail::concat("node ", node, ", grid row ", row),
          "every grid row (all coordinates but the last) to hold the PEs of exactly "
          "one node, as virtual_grid::node_pe does");
  }
}

}  // namespace

std::string_view to_string(routing r) noexcept {
  switch (r) {
    case routing::grid:
      return "grid";
    case routing::node_aware:
      return "node-aware";
    case routing::node_aware_advanced:
      return "node-aware-advanced";
  }
  return "unknown";
}

routing parse_routing(std::string_view name) {
  for (const routing r : {routing::grid, routing::node_aware, routing::node_aware_advanced}) {
    if (name == to_string(r)) return r;
  }
  detail::throw_invalid("routing scheme", name, "'grid', 'node-aware' or 'node-aware-advanced'");
}

std::unique_ptr<router> make_router(routing kind, const virtual_grid& grid, const machine& m) {
  if (grid.num_pes() != m.num_pes())
    detail::throw_invalid(detail::concat("number of PEs in grid ", grid.str()), grid.num_pes(),
                          detail::concat("the machine's ", m.num_pes(), " PEs"));
  if (kind == routing::grid) return std::make_unique<detail::grid_router>(grid);
  check_rows_are_nodes(grid, m);
  return std::make_unique<detail::node_aware_router>(grid, kind == routing::node_aware_advanced);
}

namespace detail {

std::vector<hop> routing_base::out_links(int self) const {
  std::vector<hop> links;
  for (int dest = 0; dest < grid().num_pes(); ++dest) {
    if (dest != self) links.push_back(next_hop(self, dest, -1));
  }
  sort_unique(links);
  return links;
}

std::vector<hop> routing_base::in_links(int self) const {
  // Every router hops within a node or between nodes that differ in one leading coordinate.
  const virtual_grid& g = grid();
  const auto may_send_to_self = [&](int sender) {
    int differing = 0;
    for (int d = 0; d + 1 < g.ndims(); ++d)
      differing += g.coord(sender, d) != g.coord(self, d) ? 1 : 0;
    return differing <= 1;
  };
  std::vector<hop> links;
  for (int sender = 0; sender < g.num_pes(); ++sender) {
    if (sender == self || !may_send_to_self(sender)) continue;
    for (int dest = 0; dest < g.num_pes(); ++dest) {
      if (dest == sender) continue;
      const hop next = next_hop(sender, dest, -1);
      if (next.pe == self) links.push_back({sender, next.phase});
    }
  }
  sort_unique(links);
  return links;
}

void routing_base::broadcast_children(int self, int root, int /*arrived_phase*/,
                                      std::vector<hop>& out) const {
  // Each PE takes the earliest-phase arrival among all routes from root. The parent received the
  // item no later than on that route, and routes raise phases, so the tree is phase-monotone.
  const int num_pes = grid().num_pes();
  std::vector<hop> parent(num_pes, hop{-1, INT_MAX});
  for (int dest = 0; dest < num_pes; ++dest) {
    hop arrived{root, -1};
    while (arrived.pe != dest) {
      const hop next = next_hop(arrived.pe, dest, arrived.phase);
      hop& best = parent[next.pe];
      if (next.phase < best.phase || (next.phase == best.phase && arrived.pe < best.pe))
        best = {arrived.pe, next.phase};
      arrived = next;
    }
  }
  for (int child = 0; child < num_pes; ++child) {
    if (child != root && parent[child].pe == self) out.push_back({child, parent[child].phase});
  }
}

}  // namespace detail
}  // namespace transit
