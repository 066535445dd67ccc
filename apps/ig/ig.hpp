#pragma once
// bale's ig (index gather) on transit: every PE reads random entries of a table spread over the
// PEs (bale's cyclic layout: index i on PE i % P at offset i / P, holding -(i + 1)) into its own
// target array, in each style -M selects, and checks every gathered entry. The styles in
// transit's terms: conveyor -> streamer (a request to the entry's PE, its reply back), exstack ->
// sparse_exchange (rounds of requests and replies), AGP -> global_array (gets of entries).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/app_entry.hpp"
#include "common/bale_report.hpp"
#include "common/index_stream.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// ig's options (bale's names and defaults) beside the standard ones.
struct ig_options {
  std::int64_t requests_per_pe = 5000000;  ///< -n l_num_req
  std::int64_t requests_total = 0;         ///< -N num_req (takes precedence when nonzero)
  std::int64_t table_per_pe = 10000;       ///< -T l_tbl_size
  bale_std_options std{};
};

/// The requests of one PE: bale's indices (the AGP style's input) and their places in the
/// cyclic table (the other styles' input).
using ig_requests = bale_draws;

/// Local: this PE's number of requests (-N split as bale splits it: the first N % P PEs one more).
std::int64_t ig_requests_per_pe(const ig_options& options, int pe, int pes);

/// Local: PE `pe`'s requests as bale's ig draws them (-n per PE, or its share of -N). Throws
/// std::invalid_argument as bale_index_stream.
ig_requests ig_draw(const ig_options& options, int pe, int pes);

/// Local: the table's entry at global index `index`, as bale fills it (its negative, minus one).
inline std::int64_t ig_table_value(std::int64_t index) { return -(index + 1); }

/// Local: fills this PE's part of `table`, a cyclic array (element i on PE i % P at offset
/// i / P, bale's SHARED layout), as bale fills its local part (ig_table_value). Throws
/// std::invalid_argument for a table of the block layout.
void ig_fill_table(global_array<std::int64_t>& table);

// The kernels. Collective; each writes the entry requests.index[i] of `table` (ig_fill_table) to
// target[i] (target.size() == the number of requests) and returns this PE's wall time between
// its two barriers, as bale times its kernels. Throw std::invalid_argument for a target of
// another size.

/// conveyor -> streamer: a 16-byte request (offset, the requester's slot) to the entry's PE,
/// whose callback inserts a 16-byte reply (value, slot) back; the reply's callback writes target.
double ig_streamer(context& ctx, const ig_requests& requests, global_array<std::int64_t>& table,
                   std::span<std::int64_t> target);
/// exstack -> sparse_exchange: rounds of at most buf_cnt requests per destination (bale's
/// exstack_push refuses the next), the replies exchanged back in the same order, until every PE
/// has sent all (bale's exstack_proceed loop).
double ig_exchange(context& ctx, const ig_requests& requests, global_array<std::int64_t>& table,
                   std::span<std::int64_t> target, std::int64_t buf_cnt);
/// AGP -> global_array: bale's lgp_get_int64 per entry at its global index, by
/// global_array_gather (gets of 16384 entries per call, as bale lets the compiler defer them).
double ig_global_array(context& ctx, const ig_requests& requests, global_array<std::int64_t>& table,
                       std::span<std::int64_t> target);

/// Local: bale's ig_check_and_zero without its barriers: counts the entries of `target` that are
/// not the table's value at requests.index (printing the first few as bale does, naming `style`
/// and `pe`), and zeroes `target`.
std::int64_t ig_check_and_zero(std::int64_t style, int pe, std::span<std::int64_t> target,
                               const ig_requests& requests);

/// Collective: the whole ig program, bale's output included. Returns the exit status: 0, 1 when
/// the self-check finds a wrong entry (bale reports "YOU FAILED"), 2 for options this PE count
/// cannot take (reported once, by PE 0). `command_line` is echoed in the banner.
int ig_main(context& ctx, const ig_options& options, const std::string& command_line);

/// Local: ig as `transit app ig` runs it: its option table (bale's names and defaults) bound to
/// options of its own, and its program (ig_main) with the banner echoing them.
app_entry ig_app();

}  // namespace transit::apps
