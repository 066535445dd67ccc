#pragma once
// The random index streams of bale's histo and ig: PE `pe` seeds ranf as lgp_rand_seed(seed) does
// and draws `count` indices into a table of table_per_pe entries on each of `pes` PEs. bale's
// tables are cyclic: index i lives on PE i % pes at local offset i / pes.
#include <cstdint>
#include <vector>

#include "transit/transit.hpp"

namespace transit::apps {

/// Where a bale index lives: its PE and its offset in that PE's part of the table.
struct cyclic_place {
  int pe = 0;
  std::int64_t offset = 0;
};

/// Local: the place of global index `index` in a table spread cyclically over `pes` PEs.
inline cyclic_place cyclic_place_of(std::int64_t index, int pes) {
  return {static_cast<int>(index % pes), index / pes};
}

/// Local: how many of `count` cyclically placed entries (rows, indices) PE `pe` of `pes` holds:
/// bale's lnumrows, (count + pes - pe - 1) / pes, the first count % pes PEs one more.
inline std::int64_t cyclic_local_count(std::int64_t count, int pe, int pes) { return (count + pes - pe - 1) / pes; }

/// Local: the `count` indices bale's histo and ig draw on PE `pe` of `pes` for `seed`, each in
/// [0, pes * table_per_pe). Throws std::invalid_argument for count < 0, pes < 1, pe outside
/// [0, pes) or a table of pes * table_per_pe outside [1, 2^51) entries.
std::vector<std::int64_t> bale_index_stream(std::int64_t seed, int pe, int pes, std::int64_t count,
                                            std::int64_t table_per_pe);

/// One PE's draws with their places: bale's histo and ig keep both (index for the AGP style,
/// the places, packed in bale, for the others).
struct bale_draws {
  std::vector<std::int64_t> index;   ///< global indices, bale's draws
  std::vector<cyclic_place> places;  ///< the same as (PE, offset)
};

/// Local: bale_index_stream's draws and their places. Throws as bale_index_stream.
bale_draws bale_draw_places(std::int64_t seed, int pe, int pes, std::int64_t count, std::int64_t table_per_pe);

/// Local: PE `pe`'s share of a count bale's apps take per PE (-n, `per_pe`) or over all PEs (-N,
/// `total`, taking precedence when nonzero: the first total % pes PEs get one more).
inline std::int64_t bale_share(std::int64_t per_pe, std::int64_t total, int pe, int pes) {
  return total == 0 ? per_pe : cyclic_local_count(total, pe, pes);
}

/// Collective: whether a table of `table_per_pe` entries per PE stays below bale's 2^51 entries
/// (its draws' limit) on this job's PEs. When not, PE 0 says so once, naming `option` (as
/// "--table_size (-T)") and the limit, and every PE gets false (the program should end with status 2).
bool bale_table_fits(context& ctx, std::int64_t table_per_pe, const char* option);

}  // namespace transit::apps
