#pragma once
// bale's random permutation (spmat's rand_permp_agp, _exstack, _conveyor) on transit: the dart
// throwing algorithm. Each PE throws its entries (i * P + PE, a cyclic array) at random slots of
// a target array of 2N slots spread cyclically over the PEs; a slot keeps the first dart that
// lands in it and a dart that finds its slot taken is thrown again; then the darts are read out
// of the target in order (PE 0's slots, then PE 1's, ...), squeezing out the empty slots, into the
// permutation, a cyclic array of N entries (bale's SHARED int64_t: entry g on PE g % P at local
// offset g / P). toposort and permute_matrix draw their permutations here (rand_perm).
//
// Which styles give bale's permutation: bale's exstack version is bulk synchronous, so its
// permutation depends only on N, the seed, the PE count and buf_cnt, and rand_perm_exchange
// gives the same one at every PE count. bale's AGP and conveyor versions depend on message
// timing as soon as there are two PEs (which PE's dart reaches a slot first; for the conveyor,
// also when a push is refused, which wastes a draw); on one PE, rand_perm_global_array gives
// bale's AGP permutation (its conveyor on one PE is a one-item buffer refusing every other push,
// an artifact rand_perm_streamer does not copy: it never wastes a draw).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/app_entry.hpp"
#include "common/bale_report.hpp"
#include "common/index_stream.hpp"  // cyclic_local_count
#include "transit/transit.hpp"

namespace transit::apps {

// The styles. Collective: every PE passes the same n (and buf_cnt). `seed` is the seed bale's
// rand_permp_* receives on this PE (an int in bale: only its low 32 bits count; each PE then
// draws from lgp_rand_seed(seed), knuth_ranf::for_pe). Each returns this PE's part of the
// permutation of [0, n): entry g of the cyclic array at local offset g / P. Throw
// std::invalid_argument on every PE for n < 0 or 2n >= 2^51 (bale's draws stay below 2^51), or a
// buf_cnt below 1.

/// AGP -> global_array, cyclic as bale's: a compare_exchange per dart (bale's lgp_cmp_and_swap),
/// non-blocking, up to 1024 throws in flight (a throw within the node is done at once, so one PE
/// draws as bale does), then each PE's darts put in the permutation from its first place on
/// (bale's lgp_put_int64 per dart, issued as one batch).
std::vector<std::int64_t> rand_perm_global_array(context& ctx, std::int64_t n, std::int64_t seed);
/// exstack -> sparse_exchange: rounds of at most buf_cnt darts per destination (a draw for a full
/// destination is lost and the round ends, as bale's refused exstack_push), the rejected darts
/// exchanged back and thrown again; then the darts dealt out cyclically in rounds of buf_cnt,
/// each PE taking them in the order they arrive (bale's exstack_pop: by source PE). The same
/// permutation as bale's rand_permp_exstack for the same n, seed, PE count and buf_cnt.
std::vector<std::int64_t> rand_perm_exchange(context& ctx, std::int64_t n, std::int64_t seed, std::int64_t buf_cnt);
/// conveyor -> streamer: darts streamed to their slots' PEs in rounds, the rejected ones streamed
/// back and thrown again in the next round; then each dart streamed with its place in the
/// permutation.
std::vector<std::int64_t> rand_perm_streamer(context& ctx, std::int64_t n, std::int64_t seed);

/// Collective: bale's rand_permp (what toposort and permute_matrix use): the exstack version with
/// buffers of 128. Throws as rand_perm_exchange.
inline std::vector<std::int64_t> rand_perm(context& ctx, std::int64_t n, std::int64_t seed) {
  return rand_perm_exchange(ctx, n, seed, 128);
}

/// Collective: bale's is_perm: whether the cyclic array whose part on this PE is `local` (n
/// entries over all PEs, cyclic_local_count(n, ...) here) holds every value of [0, n) once. false, not
/// an exception, for a part of the wrong size or values outside [0, n).
bool is_perm(context& ctx, std::span<const std::int64_t> local, std::int64_t n);

/// randperm's options (bale's names and defaults) beside the standard ones.
struct randperm_options {
  std::int64_t entries_per_pe = 1000000;  ///< -n l_perm_size
  std::int64_t entries_total = 0;         ///< -N perm_size (takes precedence when nonzero)
  bale_std_options std{};
};

/// Collective: the whole randperm program, bale's output included: each style -M selects draws
/// the permutation with bale's seeds (-s plus the PE's rank, as bale's randperm passes them), timed
/// as bale times it (the whole call, mean over PEs), and is checked by is_perm. Returns the exit
/// status: 0, 1 when a permutation fails the check (bale's "BALE FAIL!!!!"), 2 for a permutation
/// too large for bale's draws (2N >= 2^51, reported once by PE 0). `command_line` is echoed in the
/// banner.
int randperm_main(context& ctx, const randperm_options& options, const std::string& command_line);

/// Local: randperm as `transit app randperm` runs it: its option table (bale's names and defaults) bound to
/// options of its own, and its program (randperm_main) with the banner echoing them.
app_entry randperm_app();

}  // namespace transit::apps
