#pragma once
// Channels over one transport: each streamer (or other endpoint) opens a channel and takes only
// its own messages. Channels are numbered in opening order, which is the same on every PE because
// endpoints are created collectively; a message for a channel not yet opened here waits for it.
//
// A message sent on `channel | control_bit` is a control message of that channel (an endpoint
// telling its peers about its own life, such as "I was destroyed"): it is queued with the
// channel's other messages, keeps the bit so the endpoint can tell, and is dropped silently once
// the channel is closed. Any other message arriving for a closed channel means a peer still used
// an endpoint that this PE had destroyed: it is dropped, counted, and reported through the
// late-arrival handler (the context ends the job: items were lost).
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "transit/detail/transport/transport.hpp"

namespace transit::detail {

class mailbox {
 public:
  static constexpr std::uint32_t control_bit = std::uint32_t{1} << 31;
  /// The endpoint (the channel as opened) a message sent on `channel` belongs to: the channel of
  /// its control messages decoded. The one place that reads the channel's bits, for the mailbox
  /// and for whoever names a message's endpoint (the trace's transport hooks).
  static constexpr std::uint32_t endpoint_of(std::uint32_t channel) noexcept { return channel & ~control_bit; }

  explicit mailbox(transport& t) : transport_(t) {}
  mailbox(const mailbox&) = delete;
  mailbox& operator=(const mailbox&) = delete;

  transport& net() noexcept { return transport_; }
  /// Called with (channel, source) for each non-control message that arrives for a closed channel.
  void on_late_arrival(std::function<void(std::uint32_t, int)> handler) { late_arrival_ = std::move(handler); }
  /// Local, but called in the same order on every PE (from collective constructors).
  std::uint32_t open_channel();
  /// Polls the transport and moves the messages of `channel` (control ones included) that have
  /// arrived into `out`. Returns true if any were moved.
  bool take(std::uint32_t channel, std::vector<message>& out) {
    pump();
    return take_queued(channel, out);
  }
  /// As take, without polling the transport: for endpoints polled together after one pump().
  bool take_queued(std::uint32_t channel, std::vector<message>& out);
  /// Polls the transport (completing sends, receiving) and queues what arrived, handing out
  /// nothing: for a channel that must not see its next step's messages yet.
  void pump();
  /// For a pump a PE makes while it has work of its own (an insert loop's progress, a send's
  /// poll), not while it waits: whether one is due now, which then counts as made. Always, unless
  /// space_pumps set a spacing: then at most once per spacing.
  bool pump_due() {
    if (pump_spacing_.count() == 0) return true;
    const auto now = steady_clock::now();
    if (now < next_pump_) return false;
    next_pump_ = now + pump_spacing_;
    return true;
  }
  /// Spaces the pumps pump_due allows at least `spacing` apart (0, the default: no spacing).
  void space_pumps(std::chrono::nanoseconds spacing) noexcept { pump_spacing_ = spacing; }
  std::chrono::nanoseconds pump_spacing() const noexcept { return pump_spacing_; }
  /// Closes `channel` (its endpoint is going away) and drops what is queued for it; returns how
  /// many non-control messages. Later arrivals for it are dropped too (see above).
  std::size_t close_channel(std::uint32_t channel);
  std::size_t dropped_after_close() const noexcept { return dropped_after_close_; }
  /// Messages pump() has queued since construction, for any channel: a wait that sees this grow
  /// polls its endpoints again before it blocks (the message may be another endpoint's).
  std::uint64_t queued() const noexcept { return queued_; }

 private:
  transport& transport_;
  std::chrono::nanoseconds pump_spacing_{0};
  steady_clock::time_point next_pump_{};
  std::uint32_t next_channel_ = 0;
  std::vector<std::vector<message>> queues_;  // by channel, for the channels opened here
  std::map<std::uint32_t, std::vector<message>> early_;  // for channels peers opened first
  std::vector<bool> closed_;                   // by channel
  std::size_t dropped_after_close_ = 0;
  std::uint64_t queued_ = 0;
  std::vector<message> arrivals_;
  std::function<void(std::uint32_t, int)> late_arrival_;
};

}  // namespace transit::detail
