#pragma once
// Index gather, bale's most common pattern (ig, and permute_matrix's column renaming): each PE
// reads entries of a table spread over the PEs, by their places (PE, offset), into its own
// target array, in transit's three styles.
#include <cstdint>
#include <span>
#include <vector>

#include "common/index_stream.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// conveyor -> streamer: a 16-byte request (offset, the requester's slot) to the entry's PE,
/// whose callback (told the request's source) inserts a 16-byte reply (value, slot) back; the
/// reply's callback writes the target. Collective construction and destruction (two streamers), so that a timed kernel does
/// not include them, as bale builds its conveyors before its clock starts.
class streamer_gather {
 public:
  /// Collective. `local` is this PE's part of the table; it must outlive the object.
  streamer_gather(context& ctx, std::span<const std::int64_t> local);
  /// Collective: target[i] = the entry at places[i], for every i. Throws std::invalid_argument
  /// (before communicating) for a target of another size than places.
  void run(std::span<const cyclic_place> places, std::span<std::int64_t> target);

 private:
  struct request {
    std::int64_t offset;
    std::int64_t slot;
  };
  struct reply {
    std::int64_t value;
    std::int64_t slot;
  };
  context& ctx_;
  std::span<std::int64_t> target_{};  // the run's target, written by the replies' callback
  streamer<reply> replies_;
  streamer<request> requests_;
};

/// Collective, exstack -> sparse_exchange: target[i] = the entry at places[i], in rounds of at
/// most buf_cnt requests per destination (bale's exstack_push refuses the next), each round's
/// replies exchanged back in the same order, until every PE has sent all (bale's exstack_proceed
/// loop). `local` is this PE's part of the table. Throws std::invalid_argument (before
/// communicating) for a target of another size than places, or buf_cnt < 1.
void exchange_gather(context& ctx, std::span<const cyclic_place> places, std::span<const std::int64_t> local,
                     std::span<std::int64_t> target, std::int64_t buf_cnt);

/// Local, AGP -> global_array: target[i] = the entry at places[i] of `table`, which holds
/// `per_pe` entries per PE (PE p's block is its part), 16384 entries per get_regions call (as
/// bale lets the compiler defer its gets' completion; one get per entry is a round trip each).
/// Throws std::invalid_argument for a target of another size than places.
void global_array_gather(global_array<std::int64_t>& table, std::size_t per_pe, std::span<const cyclic_place> places,
                         std::span<std::int64_t> target);

}  // namespace transit::apps
