// Lowest-dimension-first routing (HiCOO, Yu et al. 2012, section 3.2.2, Algorithm 1).
//
// Numbering. HiCOO numbers dimensions from the fastest-varying one (dimension 0) and fills nodes
// lower dimensions first, so only its highest dimension is partly populated. virtual_grid is
// row-major with the last dimension fastest and virtual_grid(dims, n) fills slots 0..n-1, which
// is the same layout read the other way round: HiCOO's dimension i is virtual_grid dimension
// ndims-1-i, and "lowest dimension first" corrects virtual_grid's last differing dimension first.
// (On full grids that is also grid_router's order; the two differ on partially populated grids.)
//
// Rule, at PE s for destination t: take the lowest (HiCOO order) dimension i where s and t differ
// whose move D = s with s_i replaced by t_i is populated (HiCOO's extra condition "D <= M", M the
// highest populated slot); hop to D. Such a move always exists when the PEs fill a prefix of the
// slots: let h be the slowest-varying dimension where s and t differ. If t_h < s_h, the move along
// h lands below s. Otherwise the move along h agrees with t on h and every slower dimension; it
// lies below t unless, at the slowest of the faster dimensions where s and t differ (g), s_g > t_g,
// and then the move along g lands below s. Slots below a populated slot are populated.
//
// Every hop fixes one coordinate and never unfixes another, so a route has exactly
// distance(s, t) hops, visits only populated slots, and next_hop depends on (self, dest) only.
// Phases: a hop from s towards t has phase ndims - distance(s, t). Distance drops by one per
// hop, so phases strictly increase along every route and the last hop (distance 1) is in the last
// phase, whatever order the partial-grid rule corrects dimensions in. That ordering is what makes
// buffer dependencies acyclic (docs/one_sided.md). Broadcast trees come from routing_base.
#include "routers.hpp"
#include "transit/detail/core/error.hpp"

namespace transit::detail {

ldf_router::ldf_router(virtual_grid routed) : routing_base(std::move(routed)) {
  const virtual_grid& g = grid();
  for (int slot = 0; slot < g.num_pes(); ++slot) {
    if (g.pe_at_slot(slot) < 0)
      throw_invalid(concat("empty slot ", slot, " of grid ", g.str(), " for lowest-dimension-first routing"),
                    concat(g.num_pes(), " PEs not filling slots 0..", g.num_pes() - 1),
                    "PEs in the leading slots, as virtual_grid(dims, num_pes) places them");
  }
}

hop ldf_router::next_hop(int self, int dest, int /*arrived_phase*/) const {
  const virtual_grid& g = grid();
  const int n = g.ndims();
  const int s = g.slot_of(self);
  const int t = g.slot_of(dest);
  const auto coordinate = [&](int slot, int d) { return (slot / g.stride(d)) % g.dims()[d]; };
  int distance = 0;
  for (int d = 0; d < n; ++d) distance += coordinate(s, d) != coordinate(t, d) ? 1 : 0;
  TRANSIT_ASSERT(distance > 0, "next_hop needs self != dest");
  for (int d = n - 1; d >= 0; --d) {
    const int delta = coordinate(t, d) - coordinate(s, d);
    if (delta == 0) continue;
    const int next = g.pe_at_slot(s + delta * g.stride(d));
    if (next >= 0) return {next, n - distance};
  }
  assertion_failed("a populated move exists", __FILE__, __LINE__,
                   "lowest-dimension-first routing needs PEs in the leading slots");
}

}  // namespace transit::detail
