#pragma once
// The mpi transport's wire format: the tags it sends on and the prefix before every message's
// payload (channel, flags, payload size). Private to src/transport/mpi/ and its tests.
#include <cstdint>

#include "transit/detail/transport/buffer.hpp"

namespace transit::detail::mpi_wire {

inline constexpr int data_tag = 1;
// Pieces of a large message, after its announcement: a tag per sending lane, so that the pieces
// of two lanes of one rank to one PE never match each other's receives.
constexpr int piece_tag(int source_lane) noexcept { return source_lane == 0 ? 2 : 4096 + source_lane; }
inline constexpr std::uint32_t announces_pieces = 1;
// The sending PE's lane (rank_lanes) in a prefix's flags, bits 8 to 15.
inline constexpr int lane_shift = 8;
inline constexpr int max_lanes = 256;
inline int source_lane_of(std::uint32_t flags) noexcept {
  return static_cast<int>((flags >> lane_shift) & (max_lanes - 1));
}
// The receiving PE's lane, bits 16 to 23: the communication thread receives for every lane.
inline constexpr int destination_lane_shift = 16;
// Every flag a prefix may carry; any other bit set is a corrupt prefix.
inline constexpr std::uint32_t known_flags = announces_pieces |
                                             std::uint32_t{max_lanes - 1} << lane_shift |
                                             std::uint32_t{max_lanes - 1} << destination_lane_shift;

// What precedes every message's payload on the wire.
struct wire_prefix {
  std::uint32_t channel;
  std::uint32_t flags;
  std::uint64_t payload_bytes;
};
static_assert(sizeof(wire_prefix) <= message_buffer::prefix_bytes);

}  // namespace transit::detail::mpi_wire
