#pragma once
// bale's histo on transit: every PE adds one to random entries of a table spread over the PEs
// (bale's cyclic layout: index i on PE i % P at offset i / P), in each style -M selects, then
// subtracts every update back and checks the table is zero. The styles in transit's terms:
// conveyor -> streamer, exstack -> sparse_exchange, AGP -> global_array (accumulate).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/app_entry.hpp"
#include "common/bale_report.hpp"
#include "common/index_stream.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// histo's options (bale's names and defaults) beside the standard ones.
struct histo_options {
  std::int64_t updates_per_pe = 5000000;  ///< -n l_num_updates
  std::int64_t updates_total = 0;         ///< -N num_updates (takes precedence when nonzero)
  std::int64_t table_per_pe = 10000;      ///< -T table_size
  bale_std_options std{};
};

/// The updates of one PE: bale's indices (the AGP style's input) and their places in the cyclic
/// table (the other styles' input).
using histo_updates = bale_draws;

/// Local: PE `pe`'s updates as bale's histo draws them (-n per PE, or its share of -N).
histo_updates histo_draw(const histo_options& options, int pe, int pes);

/// Local: this PE's number of updates (-N split as bale splits it: the first N % P PEs one more).
std::int64_t histo_updates_per_pe(const histo_options& options, int pe, int pes);

// The kernels. Collective; each adds one per update to the table (whose local part on this PE is
// `counts.local()`: offsets in bale's cyclic layout) and returns this PE's wall time between its
// two barriers, as bale times its kernels.

/// conveyor -> streamer: each update is an 8-byte offset streamed to its PE.
double histo_streamer(context& ctx, const histo_updates& updates, global_array<std::int64_t>& counts);
/// exstack -> sparse_exchange: rounds of at most buf_cnt offsets per destination, until every
/// PE has sent all (bale's exstack_proceed / push / exchange / pull loop).
double histo_exchange(context& ctx, const histo_updates& updates, global_array<std::int64_t>& counts,
                      std::int64_t buf_cnt);
/// AGP -> global_array: an atomic add of one per update.
double histo_global_array(context& ctx, const histo_updates& updates, global_array<std::int64_t>& counts);

/// Local: where bale's cyclic index lands in the block-distributed global_array holding it
/// (PE p's block is bale's local part of PE p).
inline std::size_t histo_slot(const cyclic_place& place, std::int64_t table_per_pe) {
  return static_cast<std::size_t>(place.pe) * static_cast<std::size_t>(table_per_pe) +
         static_cast<std::size_t>(place.offset);
}

/// Collective: the whole histo program, bale's output included. Returns the exit status: 0, 1
/// when the self-check finds a nonzero entry (bale reports "FAILED"), 2 for options this PE
/// count cannot take (reported once, by PE 0). `command_line` is echoed in the banner.
int histo_main(context& ctx, const histo_options& options, const std::string& command_line);

/// Local: histo as `transit app histo` runs it: its option table (bale's names and defaults) bound to
/// options of its own, and its program (histo_main) with the banner echoing them.
app_entry histo_app();

}  // namespace transit::apps
