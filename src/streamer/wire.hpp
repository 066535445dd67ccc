#pragma once
// Private to src/streamer: what core.cpp and termination.cpp both read off a message.
#include <cstdint>
#include <cstring>

#include "streamer/core_state.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transit/detail/streamer/core.hpp"

namespace transit::detail {

/// The step as the wire header carries it (16 bits).
inline std::uint16_t step_tag(std::uint32_t step) { return static_cast<std::uint16_t>(step); }

/// A message on the streamer's control channel (a peer's streamer is gone).
inline bool is_control(const message& m) { return (m.channel & mailbox::control_bit) != 0; }

/// An acknowledgement (steps ending by acknowledgement): a header alone, with that flag.
inline bool is_acknowledgement(const message& m) {
  wire_header h{};
  if (is_control(m) || m.data.size() != sizeof h) return false;
  std::memcpy(&h, m.data.payload(), sizeof h);
  return (h.flags & acknowledgement) != 0;
}

}  // namespace transit::detail
