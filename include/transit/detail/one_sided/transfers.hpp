#pragma once
// The untyped half of global_array's multi-region transfers, compiled once in src/one_sided.
//
// Layer direction: one_sided is below protocols. What `automatic` takes (the measured profile, or
// the built-in rule) is one_sided's own: src/one_sided/automatic_protocol.hpp, made from the
// profile file in src/one_sided/protocol_profile.cpp. protocols/ holds the calibration, which runs
// these transfers, and includes one_sided, never the other way round.
// The typed members (one_sided/global_array.hpp) pass element bytes; everything here runs per
// region or per message, never per element.
//
// A transfer splits its regions at block boundaries into pieces, one per (region, owner) (under
// the cyclic layout one per element: neighbours live on other PEs), and groups them by owner
// keeping their order. Each owner's pieces go by one protocol:
//   blocking:  per piece, issue it and wait until it is complete at its target (put: the
//              engine's fence) before the next;
//   pipelined: every piece issued at once as an ordinary put or get request, one wait at the end;
//   packed:    pieces of at most max_packed_bytes()/4 bytes gathered into put_packed /
//              get_packed requests of at most max_packed_bytes() (polling mode: up to 16 request
//              buffers, sent as one message of its own size when above one buffer), which the
//              owner unpacks; larger pieces go pipelined, in their place in the order (GASNet's
//              AMSize rule: a medium active message up to a size, RDMA beyond).
// Order: one owner's pieces are issued in the order of the regions and travel one route, so
// overlapping regions end with the later region's values, whatever the protocol.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "transit/detail/one_sided/block_layout.hpp"
#include "transit/detail/one_sided/engine.hpp"
#include "transit/one_sided/regions.hpp"

namespace transit {
class context;
}  // namespace transit

namespace transit::detail {

class automatic_protocol;  // src/one_sided/automatic_protocol.hpp

/// std::minstd_rand's generator (x = 48271 x mod 2^31 - 1, same seeding, same sequence), a
/// uniform random bit generator for std::uniform_int_distribution: protocol_selector holds one in
/// every global_array, and <random> would add 17k lines to every program that includes one.
class minstd_engine {
 public:
  using result_type = std::uint_fast32_t;
  static constexpr result_type min() noexcept { return 1; }
  static constexpr result_type max() noexcept { return modulus - 1; }
  explicit minstd_engine(result_type seed) noexcept
      : state_(seed % modulus == 0 ? 1 : static_cast<result_type>(seed % modulus)) {}
  result_type operator()() noexcept {
    state_ = static_cast<result_type>(std::uint64_t{state_} * 48271 % modulus);
    return state_;
  }

 private:
  static constexpr result_type modulus = 2147483647;
  result_type state_;
};

/// Which protocol a call uses: TRANSIT_PROTOCOL (read when the array is made) forces one or
/// draws one at random per call; otherwise the job's profile decides (read once per process).
class protocol_selector {
 public:
  /// Throws std::invalid_argument for a TRANSIT_PROTOCOL that is not random, blocking,
  /// pipelined or packed (automatic and empty mean the profile).
  explicit protocol_selector(const context& ctx);

  /// The protocol `automatic` resolves to for this target (a random draw under random).
  transfer_protocol choose(std::size_t region_bytes, std::size_t regions, int target) const;
  /// The one protocol every owner of a call takes, or automatic when each owner's is chosen.
  transfer_protocol for_call(transfer_protocol requested) const;

 private:
  enum class mode { profile, forced, random };
  transfer_protocol draw() const;
  mode mode_ = mode::profile;
  transfer_protocol forced_ = transfer_protocol::automatic;
  const context* ctx_;
  int self_node_ = 0;
  mutable minstd_engine random_;
  mutable std::shared_ptr<const automatic_protocol> profile_;  // at the first automatic choice
  // The profile's choices so far by (same node, floor(log2 S), floor(log2 N)), protocol + 1 (0:
  // not asked yet): a profile choice scans the table's points and smooths (about a microsecond),
  // which a small transfer should not pay per call. Sized with profile_ (arrays that never choose
  // automatically carry none).
  mutable std::vector<std::uint8_t> memo_;
};

enum class transfer_direction { put, get };

/// The largest piece packed gathers into a packed request (bytes); larger pieces go pipelined, so
/// for regions all above it packed and pipelined are the same transfer.
inline std::size_t packed_piece_limit(const one_sided_engine& engine) noexcept { return engine.max_packed_bytes() / 4; }

/// put: writes `elements` elements at `data` to the regions; get: reads them into `data`.
/// Checks the regions and the element count (std::out_of_range, std::invalid_argument).
void transfer_regions(one_sided_engine& engine, const element_layout& layout, const protocol_selector& selector,
                      transfer_direction direction, std::span<const region> regions, std::byte* data,
                      std::size_t elements, std::size_t element_size, transfer_protocol requested);

/// The regions of put_strided, checked (see global_array::put_strided).
std::vector<region> strided_regions(std::size_t index, std::size_t count, std::size_t stride, std::size_t blocks,
                                    std::size_t values, std::size_t array_size);

}  // namespace transit::detail
