#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "transit/detail/core/chrono.hpp"
#include "transit/grid/routing.hpp"
#include "transit/grid/virtual_grid.hpp"

namespace transit {

/// How a streamer aggregates and routes. The defaults suit all-to-all traffic of small items.
/// Equal on every PE (grid and routing are checked at construction); checked by the streamer's
/// constructor, which throws std::invalid_argument naming the field.
struct streamer_options {
  /// Virtual grid the items are routed over; default: virtual_grid::node_pe(machine).
  std::optional<virtual_grid> grid;
  /// How items are routed over the grid (make_router() must accept the pair).
  routing route = routing::grid;
  /// Capacity of one peer buffer, in items (thesis: g), at most 2^32 - 1. 0 = automatic, from
  /// the calibrated profile of this backend, PEs per node and host (`transit calibrate`): the
  /// smallest buffer at which the per-message cost, spread over the buffer's items, is at most
  /// 2% of an item's own cost, g = (alpha + e beta) / (0.02 (c + m beta)), for messages of at
  /// most 1 MiB. A profile without calibrated costs (an older version's) gives the 75% bandwidth
  /// point instead, and no profile a built-in 16 KiB of items. Every PE takes PE 0's answer;
  /// current_options() shows it. In a step where a deliver callback inserts (dynamic work,
  /// latency-bound), automatic buffers hold an eighth of that. See docs/tuning.md, "buffer_items = 0".
  std::size_t buffer_items = 1024;
  /// Send partial buffers when this long passed without an item inserted or received; 0 = never.
  std::chrono::microseconds flush_period{0};
  /// Per-PE bound on items held in aggregation buffers; when an item would exceed it, the fullest
  /// buffer is sent first. 0 = no bound.
  std::size_t max_buffered_items = 0;
  /// Tune buffer size and grid online: at the end of each step (wait or quiesce) all PEs agree on
  /// the configuration of the next (the three grids the cost model ranks best, then buffer sizes
  /// in powers of two from a quarter to four times the automatic one, then a confirm round of
  /// the three best), keep the best measured and settle within 25 steps (stats().tuning lists
  /// the steps). `grid`, `route` and `buffer_items` are where it starts. Costs two allreduces per
  /// step while exploring, none once settled. See docs/tuning.md, "tune = true". `transit bench`
  /// sets it with --tune (under mpirun --online-tune, or TRANSIT_TUNE=1).
  bool tune = false;
};

/// One step of a streamer with tune = true, as stats().tuning records it.
struct tuning_step {
  std::uint32_t step = 0;          ///< the step's number (0 = the first step of the streamer)
  std::string grid;                ///< the grid the step ran on ("4x4", "direct")
  routing route = routing::grid;   ///< the routing the step ran with
  std::size_t buffer_items = 0;    ///< the buffer capacity the step ran with, in items
  double seconds = 0;              ///< the step's wall time (the longest of the PEs')
  std::uint64_t items = 0;         ///< items inserted in the step, summed over PEs
  bool explored = false;           ///< this configuration was being tried (not yet the settled one)
};

/// Counters of one PE's streamer since construction.
struct streamer_stats {
  std::uint64_t items_inserted = 0;    ///< insert() calls (broadcast counts once)
  std::uint64_t items_delivered = 0;   ///< deliver callbacks run on this PE
  std::uint64_t items_forwarded = 0;   ///< items that arrived here and were buffered for a next hop
  std::uint64_t messages_sent = 0;     ///< transport messages (final markers included)
  std::uint64_t marker_messages = 0;   ///< of those, bare final markers: messages that carry no item
  /// Acknowledgements sent (steps that end by acknowledgement, docs/streamer.md): not in messages_sent
  std::uint64_t acknowledgement_messages = 0;
  /// Of messages_sent, those whose delivery the transport confirmed instead (steps that end by
  /// acknowledgement, on a phase that ends every route, over MPI: synchronous sends)
  std::uint64_t confirmed_messages = 0;
  /// Of confirmed_messages, those sent around the grid, straight to their items' destination (a
  /// near-empty last flush of a step that ends by acknowledgement: docs/streamer.md)
  std::uint64_t direct_messages = 0;
  std::uint64_t inter_node_messages = 0; ///< those sent to a PE on another node (machine())
  std::uint64_t messages_received = 0;  ///< transport messages received (final markers included)
  std::uint64_t bytes_sent = 0;        ///< payload bytes of those messages
  std::uint64_t buffers_peak = 0;      ///< most peer buffers allocated at once
  std::uint64_t buffer_bytes_peak = 0; ///< most bytes held by those buffers at once
  std::uint64_t items_buffered_peak = 0; ///< most items buffered at once (kept with max_buffered_items)
  std::uint64_t flushes_full = 0;      ///< buffers sent because they filled
  std::uint64_t flushes_timer = 0;     ///< partial buffers sent by the flush_period timer
  std::uint64_t flushes_final = 0;     ///< partial buffers sent by done/wait/quiesce
  std::uint64_t flushes_bound = 0;     ///< buffers sent early to honour max_buffered_items
  /// With tune = true: every step measured while tuning, in order (the same on every PE). Empty
  /// otherwise; it stops growing once tuning has settled.
  std::vector<tuning_step> tuning;
};

/// Local: adds the counters of another streamer (of the same PE). Peaks add up too: the streamers may
/// hold their peaks at the same time, so the sum is what the PE may need at once.
inline streamer_stats& operator+=(streamer_stats& into, const streamer_stats& s) noexcept {
  into.items_inserted += s.items_inserted;
  into.items_delivered += s.items_delivered;
  into.items_forwarded += s.items_forwarded;
  into.messages_sent += s.messages_sent;
  into.marker_messages += s.marker_messages;
  into.acknowledgement_messages += s.acknowledgement_messages;
  into.confirmed_messages += s.confirmed_messages;
  into.direct_messages += s.direct_messages;
  into.inter_node_messages += s.inter_node_messages;
  into.messages_received += s.messages_received;
  into.bytes_sent += s.bytes_sent;
  into.buffers_peak += s.buffers_peak;
  into.buffer_bytes_peak += s.buffer_bytes_peak;
  into.items_buffered_peak += s.items_buffered_peak;
  into.flushes_full += s.flushes_full;
  into.flushes_timer += s.flushes_timer;
  into.flushes_final += s.flushes_final;
  into.flushes_bound += s.flushes_bound;
  return into;
}

}  // namespace transit
