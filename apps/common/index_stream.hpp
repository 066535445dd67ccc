#pragma once
// The random index streams of bale's histo and ig: PE `pe` seeds ranf as lgp_rand_seed(seed) does
// and draws `count` indices into a table of table_per_pe entries on each of `pes` PEs. bale's
// tables are cyclic: index i lives on PE i % pes at local offset i / pes.
#include <cstdint>
#include <vector>

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

/// Local: the `count` indices bale's histo and ig draw on PE `pe` of `pes` for `seed`, each in
/// [0, pes * table_per_pe). Throws std::invalid_argument for count < 0, pes < 1, pe outside
/// [0, pes) or a table of pes * table_per_pe outside [1, 2^51) entries.
std::vector<std::int64_t> bale_index_stream(std::int64_t seed, int pe, int pes, std::int64_t count,
                                            std::int64_t table_per_pe);

}  // namespace transit::apps
