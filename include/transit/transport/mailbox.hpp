#pragma once
// Channels over one transport: each streamer (or other endpoint) opens a channel and takes only
// its own messages. Channels are numbered in opening order, which is the same on every PE because
// endpoints are created collectively; a message for a channel not yet opened here waits for it.
#include <cstdint>
#include <vector>

#include "transit/transport/transport.hpp"

namespace transit::detail {

class mailbox {
 public:
  explicit mailbox(transport& t) : transport_(t) {}
  mailbox(const mailbox&) = delete;
  mailbox& operator=(const mailbox&) = delete;

  transport& net() noexcept { return transport_; }
  /// Local, but called in the same order on every PE (from collective constructors).
  std::uint32_t open_channel();
  /// Polls the transport and moves the messages of `channel` that have arrived into `out`.
  /// Returns true if any were moved.
  bool take(std::uint32_t channel, std::vector<message>& out);
  /// Polls the transport (completing sends, receiving) and queues what arrived, handing out
  /// nothing: for a channel that must not see its next step's messages yet.
  void pump();
  /// Closes `channel` (its endpoint is going away) and drops what is queued for it; returns how
  /// many messages. Later arrivals for it are dropped too and counted in dropped_after_close().
  std::size_t close_channel(std::uint32_t channel);
  std::size_t dropped_after_close() const noexcept { return dropped_after_close_; }

 private:
  transport& transport_;
  std::uint32_t next_channel_ = 0;
  std::vector<std::vector<message>> queues_;  // by channel
  std::vector<bool> closed_;                   // by channel
  std::size_t dropped_after_close_ = 0;
  std::vector<message> arrivals_;
};

}  // namespace transit::detail
