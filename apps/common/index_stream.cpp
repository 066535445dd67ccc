#include "common/index_stream.hpp"

#include <cinttypes>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "common/ranf.hpp"

namespace transit::apps {

namespace {
constexpr std::int64_t rand_limit = std::int64_t{1} << 51;  // bale's LGP_RAND_MAX: draws stay below it
}  // namespace

std::vector<std::int64_t> bale_index_stream(std::int64_t seed, int pe, int pes, std::int64_t count,
                                            std::int64_t table_per_pe) {
  if (pes < 1 || pe < 0 || pe >= pes)
    throw std::invalid_argument("bale_index_stream: PE " + std::to_string(pe) + " of " + std::to_string(pes) +
                                ", expected 0 <= PE < PEs");
  if (count < 0) throw std::invalid_argument("bale_index_stream: count " + std::to_string(count) + ", expected >= 0");
  if (table_per_pe < 1 || table_per_pe > (rand_limit - 1) / pes)
    throw std::invalid_argument("bale_index_stream: table of " + std::to_string(table_per_pe) +
                                " entries per PE, expected from 1 to " + std::to_string((rand_limit - 1) / pes) +
                                " on " + std::to_string(pes) + " PEs (bale draws below 2^51)");
  knuth_ranf random = knuth_ranf::for_pe(seed, pe);
  const std::int64_t table = table_per_pe * pes;
  std::vector<std::int64_t> indices(static_cast<std::size_t>(count));
  for (auto& index : indices) index = random.next_int(table);
  return indices;
}

bale_draws bale_draw_places(std::int64_t seed, int pe, int pes, std::int64_t count, std::int64_t table_per_pe) {
  bale_draws d;
  d.index = bale_index_stream(seed, pe, pes, count, table_per_pe);
  d.places.reserve(d.index.size());
  for (const std::int64_t index : d.index) d.places.push_back(cyclic_place_of(index, pes));
  return d;
}

bool bale_table_fits(context& ctx, std::int64_t table_per_pe, const char* option) {
  const int pes = ctx.size();
  if (table_per_pe <= (rand_limit - 1) / pes) return true;
  if (ctx.rank() == 0)
    std::fprintf(stderr, "transit: error: %s: got '%" PRId64 "', expected at most %" PRId64
                 " entries per PE on %d PEs (the table must stay below 2^51 entries, bale's limit)\n",
                 option, table_per_pe, (rand_limit - 1) / pes, pes);
  return false;
}

}  // namespace transit::apps
