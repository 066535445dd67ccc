#pragma once
// The cost model of aggregation (TRAM thesis chapter 2, table 2.3, and chapter 3's grid analysis):
// the time of one streamer step predicted from calibrated per-message, per-byte and per-item
// costs, for a grid, routing, buffer size, item size, items per PE and destination distribution.
// Its message, byte and hop counts are exact for a done()/wait() step (docs/tuning.md derives
// them), so tests hold them equal to what a streamer measures. A module below the streamer, which
// asks it (with the step tuner, src/model/tuner.hpp) for buffer_items = 0 and tune = true; above
// the runtime, the grids and the profile file it reads. transit/tuning/model.hpp forwards here.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "transit/grid/router.hpp"
#include "transit/grid/virtual_grid.hpp"
#include "transit/topology/machine.hpp"
#include "transit/topology/topology_manager.hpp"
#include "transit/profile/profile.hpp"

namespace transit {

/// The costs the model works with: intra- and inter-node links, and how many PEs share a core
/// (more than 1 when PEs outnumber the cores, as 8 local PEs on 2 cores: the step then takes as
/// long as the work of all PEs of a host divided among its cores).
struct machine_costs {
  /// Links between PEs of one node (intra) and of two nodes (inter).
  ///@{
  link_costs intra, inter;
  ///@}
  double pes_per_core = 1;  ///< PEs per core of a host, at least 1 (see pes_per_core())
  /// intra and inter measure one kind of link (the local backend, whose nodes are labels on one
  /// host): the model uses their mean for both.
  bool same_link = false;
};

class context;

/// How many of this job's PEs share a core of this PE's host, at least 1: all PEs on the local
/// backend and with emulated nodes (one host), the PEs of this PE's node otherwise. Local.
double pes_per_core(const context& ctx);

/// The job's PEs on its physical topology when the job named one (--transit-physical or
/// TRANSIT_PHYSICAL), for predict_step's links; nullptr on the default machine (nodes one switch
/// apart, a network nobody described). Local; the pointer lives as long as `ctx`.
const topology_manager* named_network(const context& ctx);

/// Local: costs from a calibrated profile (an unmeasured inter-node link takes the intra-node
/// costs); `sharing` is pes_per_core(). Does not throw.
machine_costs costs_from(const streamer_profile& profile, double sharing = 1);
/// Built-in costs for a backend without a profile ("local" or "mpi"): measured on a 2-core KVM
/// guest (BENCHMARKS.md); right in their ratios more than in their values. Local; a backend
/// other than "local" gets the mpi costs.
machine_costs built_in_costs(std::string_view backend, double sharing = 1);

/// Local: the profile this PE's streamers use (the file at default_profile_path() and the closest
/// streamer entry for the job's backend, PEs per node and host). Never throws: a file that cannot
/// be used is reported in profile_status::error.
profile_status profile_in_use(const context& ctx);

/// Local: what buffer_items = 0 stands for with this profile, for items of `item_bytes`: the
/// smallest buffer whose per-message cost is at most 2% of an item's, g = (alpha + 16 beta) /
/// (0.02 (per_item + item_bytes beta)) with the inter-node costs (intra-node on one node), at most
/// 1 MiB messages; the 75% point without costs (docs/tuning.md).
std::size_t automatic_buffer_items(const streamer_profile& profile, std::size_t item_bytes);

/// Where the items of a step go.
enum class destinations {
  uniform,      ///< every PE alike, the source included (histogram, randomaccess)
  others,       ///< every other PE alike (alltoall)
  self_others,  ///< self_fraction to the source itself, the rest alike over the others (phold)
  histogram,    ///< relative weights per destination PE, the same for every source
  matrix,       ///< exact counts per (source, destination)
};

/// One step's work, as predict_step() models it: item size, items per PE and where they go.
struct step_workload {
  std::size_t item_bytes = 8;  ///< bytes of one item
  double items_per_pe = 0;  ///< items each PE inserts in the step (ignored for matrix)
  destinations pattern = destinations::uniform;  ///< where the items go
  double self_fraction = 0;           ///< self_others: the fraction each PE sends to itself
  std::vector<double> histogram;      ///< histogram: one weight per PE
  std::vector<std::uint64_t> matrix;  ///< matrix: matrix[source * P + destination] items
  /// Walk every source's routes even beyond 2048 PEs (P^2 routes: seconds per grid at 4096 PEs)
  /// instead of sampling 256 sources; `transit model --grids` sets it.
  bool walk_every_source = false;
};

/// The model's answer for one configuration. Counts are sums over all PEs; for a workload with
/// exact counts (matrix, or uniform shares that divide evenly) they are exact for a step ended
/// with wait(): every out-link sends floor(n / g) full buffers and one final message.
struct step_prediction {
  double seconds = 0;            ///< predicted step time
  double message_seconds = 0;    ///< of the busiest PE: per-message costs
  double byte_seconds = 0;       ///< of the busiest PE: per-byte costs
  double item_seconds = 0;       ///< of the busiest PE: per-item costs
  double flush_seconds = 0;      ///< filling and flushing the pipeline along the phases (0 with links)
  /// With the network given: the busiest physical link's exposed share of each phase, summed.
  double link_seconds = 0;
  std::uint64_t messages = 0;              ///< streamer_stats::messages_sent, summed
  std::uint64_t inter_node_messages = 0;   ///< streamer_stats::inter_node_messages, summed
  std::uint64_t bytes = 0;                 ///< streamer_stats::bytes_sent, summed
  std::uint64_t item_hops = 0;             ///< item transmissions (an item crossing h links: h)
  std::uint64_t items_forwarded = 0;       ///< streamer_stats::items_forwarded, summed
  double average_hops = 0;                 ///< hops per item that leaves its source
  std::size_t links_per_pe = 0;            ///< most out-links of any PE (buffers, thesis 3.4.2)
  bool exact = true;                       ///< false when sampled (more than 2048 PEs)
};

/// Local: predicts one step. With `network` (the job's PEs on a known physical topology), the
/// bytes between nodes are routed over its links (directed_link_loads) and each phase adds the
/// exposed share of its busiest link at `costs.inter.beta` seconds per byte, in place of the
/// fill-and-flush term (docs/tuning.md); exact counts only (up to 2048 PEs, or walk_every_source).
/// Throws std::invalid_argument as make_router for a grid the routing cannot use, for
/// buffer_items = 0, for a workload that does not fit the PEs (histogram or matrix of the wrong
/// size), or for a network with another PE count.
step_prediction predict_step(const machine& m, const virtual_grid& grid, routing route, std::size_t buffer_items,
                             const step_workload& workload, const machine_costs& costs,
                             const topology_manager* network = nullptr);

/// A grid and routing to consider.
struct grid_candidate {
  virtual_grid grid;               ///< the grid
  routing route = routing::grid;   ///< how items are routed over it
  /// "4x4", "direct", "node-aware 2x4": the --grid and --scheme a bench run takes. Local.
  std::string name() const;
  /// The --grid spec ("direct", "4x4", "node"). Local.
  std::string spec() const;
};

/// Local: the candidate grids of a job (thesis 3.4.4 and 6.1.2): every grid of 1 to 4 dimensions
/// whose sizes multiply to the PE count (dimension order matters), near-equal grids of 2 to 4
/// dimensions (partially populated when the PE count does not factor), the nodes x PEs grid and
/// the grids that keep routes minimal on the physical topology, with grid routing; and with
/// node-aware routing (base and advanced), those whose last dimension holds the PEs of a node.
/// No grid has a dimension of size 1. Sorted by dimensions, then sizes, then routing.
std::vector<grid_candidate> candidate_grids(const machine& m, const physical_topology& physical);

/// Spearman's rank correlation of two equally long series (ties take their mean rank); 1 when the
/// orders agree, -1 when reversed. NaN for fewer than 2 values or a constant series.
/// Local; never throws (NaN as well for series of different lengths).
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace transit
