#pragma once
// Private to the library: the concrete routers behind transit::router (see docs/routing.md).
// make_router builds the public schemes; one_sided builds ldf_router itself (not a public scheme).
#include <vector>

#include "transit/grid/router.hpp"

namespace transit::detail {

/// Links and broadcast trees derived from next_hop alone, shared by every router.
class routing_base : public router {
 public:
  /// Every distinct next_hop(self, t) over all destinations t. Broadcast trees only use links
  /// that some unicast route uses, so this is complete.
  std::vector<hop> out_links(int self) const override;
  std::vector<hop> in_links(int self) const override;
  /// Generic tree: every PE receives from the link with the smallest phase that delivers the item
  /// to it on any unicast route from root (ties: the smaller sender). Costs O(P * max_hops).
  void broadcast_children(int self, int root, int arrived_phase,
                          std::vector<hop>& out) const override;

 protected:
  using router::router;
};

/// A hop of the grid router together with the dimension it runs along.
struct grid_step {
  int pe = -1;
  int phase = -1;
  int dim = -1;
};

/// Thesis section 3.3.1 (highest differing dimension first), extended to partially populated
/// grids by "pre" phases; see grid_router.cpp for the rule and why it is safe.
class grid_router final : public routing_base {
 public:
  explicit grid_router(virtual_grid grid);

  routing kind() const noexcept override { return routing::grid; }
  int num_phases() const noexcept override { return num_pre_phases_ + grid().ndims(); }
  int max_hops() const noexcept override { return grid().ndims(); }
  hop next_hop(int self, int dest, int arrived_phase) const override;
  /// Routes from one root form a tree here, so a PE's parent is its predecessor on its own route.
  void broadcast_children(int self, int root, int arrived_phase,
                          std::vector<hop>& out) const override;

  grid_step step(int self, int dest, int arrived_phase) const;
  /// A main hop along d ends every route when all dimensions below d have size 1.
  bool ends_route(int phase) const noexcept override;
  bool is_pre_phase(int phase) const noexcept { return phase < num_pre_phases_; }
  int dim_of_phase(int phase) const noexcept {
    return is_pre_phase(phase) ? phase : grid().ndims() - 1 - (phase - num_pre_phases_);
  }

 private:
  int num_pre_phases_ = 0;
  // block_population_[j][prefix]: PEs in the sub-block whose coordinates 0..j form `prefix`.
  std::vector<std::vector<int>> block_population_;
};

/// HiCOO's lowest-dimension-first routing (Yu et al. 2012, Algorithm 1 with its rule for
/// partially populated grids); see ldf_router.cpp for the rule, the numbering and the phases.
/// Only one_sided routes with it (its node grid), so the public `routing` enum does not name it.
class ldf_router final : public routing_base {
 public:
  /// Throws std::invalid_argument unless the PEs fill slots 0..num_pes-1.
  explicit ldf_router(virtual_grid grid);

  /// The public family it belongs to: one dimension per phase, as grid (in the other order).
  /// Nothing that reads kind() (the streamer) ever runs this router.
  routing kind() const noexcept override { return routing::grid; }
  int num_phases() const noexcept override { return grid().ndims(); }
  int max_hops() const noexcept override { return grid().ndims(); }
  hop next_hop(int self, int dest, int arrived_phase) const override;
};

/// TRAM thesis chapter 5: base (Algorithm 1) or advanced (Algorithms 2 to 4) node-aware routing.
/// The last grid dimension holds the PEs of a node; the leading dimensions form the node grid.
class node_aware_router final : public routing_base {
 public:
  node_aware_router(virtual_grid grid, bool advanced);

  routing kind() const noexcept override {
    return advanced_ ? routing::node_aware_advanced : routing::node_aware;
  }
  int num_phases() const noexcept override { return kinds_ * (node_router_.num_phases() + 1); }
  int max_hops() const noexcept override { return kinds_ * grid().ndims(); }
  hop next_hop(int self, int dest, int arrived_phase) const override;

 private:
  struct team {
    int first = 0;  // local rank of the first member
    int size = 1;
  };
  team team_of(int row, int dim) const noexcept;
  int position(int row, int local) const noexcept;
  int pe_on_row(int row, int local) const noexcept {
    return grid().pe_at_slot(row * width_ + local);
  }

  bool advanced_;
  int kinds_;  // hops per node phase: forward to team [, distribute in team], send
  int width_;  // slots per row (PEs per node)
  std::vector<int> row_size_;
  grid_router node_router_;
};

}  // namespace transit::detail
