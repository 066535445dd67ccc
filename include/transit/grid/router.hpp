#pragma once
// Routers decide, for an item at PE `self` bound for PE `dest`, the next PE and the routing phase
// of that hop. The streamer caches next_hop for every destination in a table, so routers favour
// clarity over speed; next_hop itself must not allocate.
//
// Contract every router keeps (the streamer's termination and broadcast rely on it):
//  1. Memoryless: next_hop(self, dest) depends only on (self, dest). Following it from any source
//     reaches dest in at most max_hops() hops, never visiting an empty grid slot.
//  2. Phases strictly increase along every route; no hop follows a hop in the last phase
//     (num_phases() - 1), so items sent in the last phase are always at their destination.
//  3. out_links(self) lists every (pe, phase) that next_hop or broadcast_children can return at
//     self, each once; in_links(self) lists every (pe, phase) such that self is in
//     out_links(pe) with that phase. Staged completion flushes and counts messages per link.
//  4. broadcast_children: for a broadcast from `root`, the union over all PEs of their children
//     covers every PE except root exactly once, and each child's phase is greater than the phase
//     in which the item arrived (arrived_phase, -1 at the root).
#include <memory>
#include <string_view>
#include <vector>

#include "transit/grid/routing.hpp"
#include "transit/grid/virtual_grid.hpp"

namespace transit {

class machine;

/// One hop: the next PE and the routing phase of the message that carries the item there.
struct hop {
  int pe = -1;     ///< the next PE (-1: none)
  int phase = -1;  ///< the routing phase of the hop (-1: none)
  /// Same PE and phase.
  friend bool operator==(const hop&, const hop&) = default;
};

/// A routing scheme on one grid: the next hop of an item, broadcast trees and the links each PE
/// uses, keeping the contract at the top of this header. Immutable; every query is local and
/// thread-safe. Built by make_router().
class router {
 public:
  virtual ~router() = default;

  /// The grid it routes over.
  const virtual_grid& grid() const noexcept { return grid_; }
  /// The routing scheme.
  virtual routing kind() const noexcept = 0;
  /// Number of routing phases; phases are 0..num_phases()-1 in the order items traverse them.
  virtual int num_phases() const noexcept = 0;
  /// Upper bound on the hops of any route.
  virtual int max_hops() const noexcept = 0;
  /// True when no hop (unicast or broadcast) ever follows a hop in `phase`: items sent in it are
  /// at their destination, so the streamer sends them without destination indices. Always true
  /// for the last phase; a router may say so for earlier ones (e.g. dimensions of size 1).
  virtual bool ends_route(int phase) const noexcept { return phase == num_phases() - 1; }
  /// Next hop from self towards dest (self != dest). `arrived_phase` is the phase of the hop that
  /// brought the item to self (-1 at the source); a router may use it to skip dimensions already
  /// corrected, but must return the same hop as for any other arrived_phase.
  virtual hop next_hop(int self, int dest, int arrived_phase) const = 0;
  /// Children of self in the broadcast tree rooted at root; appended to `out`. Uses only links of
  /// out_links(self). May cost O(num_pes() * max_hops()) next-hop evaluations: cache per root.
  virtual void broadcast_children(int self, int root, int arrived_phase,
                                  std::vector<hop>& out) const = 0;
  /// Every link self may send on, sorted by (phase, pe). Costs O(num_pes()) next-hop evaluations.
  virtual std::vector<hop> out_links(int self) const = 0;
  /// Every link that may deliver to self, as (source pe, phase), sorted by (phase, pe).
  virtual std::vector<hop> in_links(int self) const = 0;

 protected:
  /// For the schemes' implementations: the grid they route over.
  explicit router(virtual_grid grid) : grid_(std::move(grid)) {}

 private:
  virtual_grid grid_;
};

/// Local: builds the router for `kind` on `grid`. Node-aware schemes read the last grid dimension as the
/// PEs of a node and need it to match `m`. Throws std::invalid_argument naming the mismatch.
std::unique_ptr<router> make_router(routing kind, const virtual_grid& grid, const machine& m);

}  // namespace transit
