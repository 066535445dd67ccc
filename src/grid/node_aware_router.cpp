// Node-aware routing (TRAM thesis chapter 5). The last grid dimension holds the PEs of a node
// (one grid row per node); the leading N-1 dimensions form the node grid. The PEs of a node are
// split into N teams: team d (d < N-1) sends items along node dimension d, team N-1 delivers
// inside the node. An item moves between nodes along the node grid's own grid route (highest
// dimension first, with the pre-phase detour of grid_router on partially populated node grids).
//
// Teams (generalising "T = floor(s_{N-1} / N)" to every node size S of a row):
//  - S >= N: T = floor(S / N); team d is local ranks [d*T, (d+1)*T). Ranks >= N*T belong to no
//    team (as in the thesis); they only forward their own items to a team.
//  - S < N: one PE per team, team d = {floor(d * S / N)}; a PE then serves several dimensions.
// A PE's position in a team is its local rank mod T (0 when S < N); forwarding to another team
// keeps the position, and a send to a node of another size takes the position mod its team size.
//
// Base scheme (Algorithm 1), at PE j for destination k: let (phi, i) be the next node hop of the
// node route from j's node to k's (i = N-1 once the nodes agree). If j is not in team i, forward
// to team i on this node; else send along i to the team of the next dimension in routing order
// on the next node (i-1; N-1 after dimension 0; after a pre hop, N-2, the first main dimension),
// or, for i = N-1, deliver to k.
// Advanced scheme (Algorithms 2 to 4): team members split the coordinates along their dimension
// into T blocks; an item in team i first moves to the member whose block holds k_i (Algorithm 3,
// an ordinary intra-node hop), and sends go to the member of the next team at the position of the
// block holding the sender's own coordinate (the offset o of Algorithm 2).
//
// Phases: for every node phase phi in order, [forward, (distribute,) send]; then the final
// [forward, (distribute,) deliver] inside the destination node. Every route visits them in this
// order, so phases strictly increase and the last phase (deliver) is never followed by a hop.
// Hops per node phase are at most 2 (3 advanced), plus as many at the destination node: the bound
// is 2N (3N advanced); typical routes take N+1 hops (thesis table 5.1).
#include <algorithm>

#include "routers.hpp"
#include "transit/detail/core/error.hpp"

namespace transit::detail {

namespace {

virtual_grid node_grid_of(const virtual_grid& grid) {
  const auto dims = grid.dims();
  std::vector<int> node_dims(dims.begin(), dims.end() - 1);
  const int width = dims.back();
  int rows = 0;
  for (int pe = 0; pe < grid.num_pes(); ++pe) rows = std::max(rows, grid.slot_of(pe) / width + 1);
  return virtual_grid(std::move(node_dims), rows);
}

/// Algorithm 3: index of the block holding coordinate c when `extent` coordinates are split into
/// `members` blocks, the first r of them one larger.
int block_of(int c, int extent, int members) noexcept {
  const int b = extent / members;
  const int r = extent - b * members;
  return c < r * (b + 1) ? c / (b + 1) : r + (c - r * (b + 1)) / b;
}

}  // namespace

node_aware_router::node_aware_router(virtual_grid routed, bool advanced)
    : routing_base(std::move(routed)),
      advanced_(advanced),
      kinds_(advanced ? 3 : 2),
      width_(grid().dims().back()),
      node_router_(node_grid_of(grid())) {
  const virtual_grid& g = grid();
  row_size_.assign(node_router_.grid().num_pes(), 0);
  for (int pe = 0; pe < g.num_pes(); ++pe) ++row_size_[g.slot_of(pe) / width_];
  for (int row = 0; row < static_cast<int>(row_size_.size()); ++row) {
    for (int local = 0; local < row_size_[row]; ++local)
      TRANSIT_ASSERT(pe_on_row(row, local) >= 0,
                     "node-aware routing needs node rows filled from local rank 0");
  }
}

node_aware_router::team node_aware_router::team_of(int row, int dim) const noexcept {
  const int n = grid().ndims();
  const int size = row_size_[row];
  if (size >= n) return {dim * (size / n), size / n};
  return {dim * size / n, 1};
}

int node_aware_router::position(int row, int local) const noexcept {
  const int n = grid().ndims();
  const int size = row_size_[row];
  return size >= n ? local % (size / n) : 0;
}

hop node_aware_router::next_hop(int self, int dest, int arrived_phase) const {
  const virtual_grid& g = grid();
  const int n = g.ndims();
  const int row = g.slot_of(self) / width_;
  const int local = g.slot_of(self) % width_;
  const int dest_row = g.slot_of(dest) / width_;

  int dim = n - 1;
  int node_phase = node_router_.num_phases();  // the final, intra-node phase group
  int next_row = -1;
  int next_team = n - 1;
  if (row != dest_row) {
    // Spec 14: after a send the node route resumes below the dimension the item arrived along.
    const bool arrived_by_send = arrived_phase >= 0 && arrived_phase % kinds_ == kinds_ - 1;
    const grid_step node_hop =
        node_router_.step(row, dest_row, arrived_by_send ? arrived_phase / kinds_ : -1);
    dim = node_hop.dim;
    node_phase = node_hop.phase;
    next_row = node_hop.pe;
    if (node_router_.is_pre_phase(node_phase))
      next_team = n - 2;
    else if (dim > 0)
      next_team = dim - 1;
  }
  const int first_phase = kinds_ * node_phase;
  const team own = team_of(row, dim);
  if (local < own.first || local >= own.first + own.size)
    return {pe_on_row(row, own.first + position(row, local) % own.size), first_phase};

  const int member = local - own.first;
  if (advanced_) {
    const int wanted = block_of(dim == n - 1 ? g.slot_of(dest) % width_ : g.coord(dest, dim),
                                g.dims()[dim], own.size);
    if (wanted != member) return {pe_on_row(row, own.first + wanted), first_phase + 1};
  }
  const int send_phase = first_phase + kinds_ - 1;
  if (dim == n - 1) return {dest, send_phase};
  const int target = advanced_ ? block_of(g.coord(self, dim), g.dims()[dim], own.size) : member;
  const team next = team_of(next_row, next_team);
  return {pe_on_row(next_row, next.first + target % next.size), send_phase};
}

}  // namespace transit::detail
