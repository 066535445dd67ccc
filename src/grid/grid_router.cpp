// Grid routing (TRAM thesis 3.3.1): correct the highest differing dimension first, so the last
// dimension (PEs of a node) is handled at the source, before data leaves the node.
//
// Partially populated grids. Highest-first routing visits (s_0..s_{i-1}, t_i..t_{n-1}), which may
// be an empty slot when the source lies in a sub-block with fewer PEs than the destination's.
// Rule, evaluated at the source: let j be the first dimension where s and t differ. If the
// sub-block of s at level j (all slots sharing s_0..s_j) holds fewer PEs than the sub-block of t
// (sharing s_0..s_{j-1}, t_j), first hop along dimension j to (s_0..s_{j-1}, t_j, s_{j+1}..) in the
// "pre" phase j; then route highest-first inside t's sub-block. Otherwise route highest-first.
//  - Row-major filling: sibling sub-blocks are full except the last populated one, so the pre
//    hop lands in a full sub-block and every later slot there is populated; when s's sub-block is
//    not smaller it is full and highest-first stays inside it.
//  - node_pe grids (2-D, holes at the end of small nodes): a pre hop happens when s's node is
//    smaller than t's, so (t's node, s's local rank) exists; otherwise t's local rank exists on
//    s's node.
// Phases are [pre_0 .. pre_{n-2}, main_{n-1} .. main_0]: a route is at most one pre hop followed by
// main hops in decreasing dimension order, so phases strictly increase (the streamer's staged
// completion is deadlock-free) and no route is longer than the number of differing dimensions.
// A route's intermediate PEs reach each other by the same hops, so the routes from one root form
// a tree, which is the broadcast tree.
#include <algorithm>

#include "routers.hpp"
#include "transit/detail/core/error.hpp"

namespace transit::detail {

grid_router::grid_router(virtual_grid routed) : routing_base(std::move(routed)) {
  const virtual_grid& g = grid();
  const int n = g.ndims();
  if (g.num_pes() == g.num_slots() || n < 2) return;  // no holes, or nowhere to detour
  num_pre_phases_ = n - 1;
  block_population_.resize(n - 1);
  for (int j = 0; j < n - 1; ++j) {
    auto& population = block_population_[j];
    population.assign(g.num_slots() / g.stride(j), 0);
    for (int pe = 0; pe < g.num_pes(); ++pe) ++population[g.slot_of(pe) / g.stride(j)];
  }
}

grid_step grid_router::step(int self, int dest, int arrived_phase) const {
  const virtual_grid& g = grid();
  const int n = g.ndims();
  const int s = g.slot_of(self);
  const int t = g.slot_of(dest);
  const auto coordinate = [&](int slot, int d) { return (slot / g.stride(d)) % g.dims()[d]; };
  const auto move = [&](int d, int phase) {
    const int pe = g.pe_at_slot(s + (coordinate(t, d) - coordinate(s, d)) * g.stride(d));
    TRANSIT_ASSERT(pe >= 0, "grid routing must never visit an empty slot");
    return grid_step{pe, phase, d};
  };

  // Thesis spec 14: the arrival phase tells which dimensions already agree, so decoding resumes
  // below the dimension the item arrived along. The pre-phase test only matters at the source.
  int top = n - 1;
  if (arrived_phase >= 0 && !is_pre_phase(arrived_phase)) {
    top = dim_of_phase(arrived_phase) - 1;
  } else if (arrived_phase < 0 && num_pre_phases_ > 0) {
    int j = 0;
    while (s / g.stride(j) == t / g.stride(j)) ++j;  // prefixes 0..j first differ at j
    if (j < n - 1) {
      const auto& population = block_population_[j];
      if (population[s / g.stride(j)] < population[t / g.stride(j)]) return move(j, j);
    }
  }
  for (int d = top; d >= 0; --d) {
    if (coordinate(s, d) != coordinate(t, d)) return move(d, num_pre_phases_ + n - 1 - d);
  }
  assertion_failed("self != dest", __FILE__, __LINE__, "next_hop needs a consistent arrived_phase");
}

bool grid_router::ends_route(int phase) const noexcept {
  if (phase < 0 || phase >= num_phases() || is_pre_phase(phase)) return phase == num_phases() - 1;
  const auto dims = grid().dims();
  for (int d = dim_of_phase(phase) - 1; d >= 0; --d) {
    if (dims[d] > 1) return false;
  }
  return true;
}

hop grid_router::next_hop(int self, int dest, int arrived_phase) const {
  const grid_step next = step(self, dest, arrived_phase);
  return {next.pe, next.phase};
}

void grid_router::broadcast_children(int self, int root, int /*arrived_phase*/,
                                     std::vector<hop>& out) const {
  const virtual_grid& g = grid();
  const int slot = g.slot_of(self);
  for (int d = 0; d < g.ndims(); ++d) {
    const int own = g.coord(self, d);
    for (int c = 0; c < g.dims()[d]; ++c) {
      const int child = c == own ? -1 : g.pe_at_slot(slot + (c - own) * g.stride(d));
      if (child < 0 || child == root) continue;
      int at = root;
      hop last;
      while (last.pe != child) {  // the last hop of root's route to child
        const int from = at;
        last = next_hop(at, child, last.phase);
        at = last.pe;
        if (at == child && from == self) out.push_back(last);
      }
    }
  }
}

}  // namespace transit::detail
