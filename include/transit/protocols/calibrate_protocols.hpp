#pragma once
// Measuring multi-region transfers: one timed point (transit bench vector) and the calibration
// of the protocol profiles (Iancu and Hofmeyr's microbenchmark; transit calibrate-protocols).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "transit/one_sided/regions.hpp"
#include "transit/one_sided/protocol_profile.hpp"

namespace transit {

// Only named here (by reference): include runtime/context.hpp and one_sided/global_array.hpp to
// make and fill the array a timed point runs on.
class context;
template <class T>
class global_array;

/// One point: every active PE puts `regions` regions of `region_bytes` bytes (stride twice the
/// region) into its target's block, then fences; the time of one transfer is the maximum over
/// PEs, and the result the median over iterations.
struct vector_point {
  std::size_t region_bytes = 8;  ///< S: bytes per region
  std::size_t regions = 1;       ///< N: regions per transfer
  int iterations = 10;           ///< timed transfers (the median is kept); 0: none, unverified
  transfer_protocol protocol = transfer_protocol::automatic;  ///< for time_vector_point()
  /// Target of each PE (-1: this PE does not transfer, it only joins the collective steps).
  int target = -1;
  /// Which of the target's slots this PE writes (PEs aiming at one target write apart).
  int slot = 0;
};

/// The outcome of timing one point with one protocol.
struct vector_timing {
  double seconds = 0;            ///< median over iterations of the maximum over PEs
  transfer_protocol chosen = transfer_protocol::automatic;  ///< this PE's: what automatic took
  bool verified = false;         ///< this PE's target block holds what was written (checked by get_regions)
};

/// Bytes each PE's block needs for a point with `slots` writers per target (a
/// global_array<std::uint8_t> of that many per PE). Local.
std::size_t vector_block_bytes(std::size_t region_bytes, std::size_t regions, int slots) noexcept;

/// Collective: times one point on `a` (at least vector_block_bytes per PE). Every PE passes the
/// same region_bytes, regions, iterations and protocol. Throws what the array's put_regions,
/// fence and get_regions throw (an exception on one PE leaves the others waiting: run() ends the job).
vector_timing time_vector_point(context& ctx, global_array<std::uint8_t>& a, const vector_point& point);

/// Collective: times one point with each of `protocols` (point.protocol is not used), interleaved:
/// after one untimed transfer with each, every iteration transfers once with each protocol, the
/// order rotated by one per iteration, so a slow stretch of the machine (another job, a page
/// fault, the first touch) falls on all of them alike and close protocols are compared fairly.
/// Points whose warm-up transfers took under 0.3 ms on average get 2x the iterations, under
/// 0.2 ms 3x: their medians are mostly scheduling noise, and the samples are cheap.
/// One timing per protocol, in the order given; each verified with its own put and get.
std::vector<vector_timing> time_vector_protocols(context& ctx, global_array<std::uint8_t>& a, const vector_point& point,
                                                 std::span<const transfer_protocol> protocols);

/// The target of `pe` for a kind of link: `same_node` another PE of its node (the next one, in
/// a ring), else the PE of the same local rank on the next node; -1 when there is none. Local:
/// from ctx.machine(), no communication.
int vector_partner(const context& ctx, int pe, bool same_node);
/// `pe`'s slot at its partner (PEs below it with the same partner) and the most PEs sharing a
/// partner, for vector_partner(ctx, pe, same_node).
struct vector_slots {
  int slot = 0;   ///< `pe`'s slot at its partner: the PEs below it with the same partner
  int slots = 1;  ///< the most PEs sharing a partner (at least 1)
};
/// Local: `pe`'s vector_slots for vector_partner(ctx, pe, same_node); no communication.
vector_slots vector_slot(const context& ctx, int pe, bool same_node);

/// What calibrate_protocols() measures: the (S, N) grid of powers of two, iterations, load.
struct protocol_calibration_options {
  /// The range of S, bytes per region: powers of two, min <= max (else std::invalid_argument).
  ///@{
  std::size_t min_region_bytes = 8, max_region_bytes = 64 * 1024;
  ///@}
  /// The range of N, regions per transfer: powers of two, min <= max (else std::invalid_argument).
  ///@{
  std::size_t min_regions = 1, max_regions = 1024;
  ///@}
  std::size_t max_transfer_bytes = std::size_t{1} << 20;  ///< points with S x N above are left out
  int iterations = 5;  ///< timed transfers per point and protocol (at least 1)
  bool loaded = true;  ///< every PE transfers (the pessimistic profile); false: one pair only
  /// Called on PE 0 after each point (for progress); may be empty.
  std::function<void(bool same_node, const protocol_point&)> on_point;
};

/// Collective: measures the intra- and inter-node tables over the (S, N) grid of powers of two
/// with every fixed protocol; a table is measured when the job has such a pair. The entry's key
/// is this job's backend, PEs per node and host. std::invalid_argument for bad options.
protocol_profile calibrate_protocols(context& ctx, const protocol_calibration_options& options);

}  // namespace transit
