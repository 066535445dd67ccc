#include "transit/detail/transport/mailbox.hpp"

#include "transit/detail/core/error.hpp"

namespace transit::detail {

std::uint32_t mailbox::open_channel() {
  TRANSIT_ASSERT(next_channel_ < control_bit, "too many channels opened");
  const std::uint32_t channel = next_channel_++;
  if (queues_.size() <= channel) queues_.resize(channel + 1);
  if (const auto early = early_.find(channel); early != early_.end()) {
    queues_[channel] = std::move(early->second);
    early_.erase(early);
  }
  return channel;
}

void mailbox::pump() {
  arrivals_.clear();
  transport_.poll(arrivals_, 1024);
  for (auto& m : arrivals_) {
    const std::uint32_t channel = endpoint_of(m.channel);
    if (channel < closed_.size() && closed_[channel]) {
      if ((m.channel & control_bit) == 0) {
        ++dropped_after_close_;
        if (late_arrival_) late_arrival_(channel, m.source);
      }
      transport_.recycle(std::move(m.data));
      continue;
    }
    // A channel this PE has not opened yet waits apart, so that the number a peer's message carries
    // (bytes from the wire) never sizes a table here: memory grows with messages, not channels.
    if (channel >= next_channel_) {
      early_[channel].push_back(std::move(m));
    } else {
      queues_[channel].push_back(std::move(m));
    }
    ++queued_;
  }
}

bool mailbox::take_queued(std::uint32_t channel, std::vector<message>& out) {
  auto& mine = queues_[channel];
  if (mine.empty()) return false;
  if (out.empty()) {
    out.swap(mine);
  } else {
    for (auto& m : mine) out.push_back(std::move(m));
    mine.clear();
  }
  return true;
}

std::size_t mailbox::close_channel(std::uint32_t channel) {
  pump();
  if (closed_.size() <= channel) closed_.resize(channel + 1, false);
  closed_[channel] = true;
  if (channel >= queues_.size()) return 0;
  std::size_t data = 0;
  for (auto& m : queues_[channel]) {
    if ((m.channel & control_bit) == 0) ++data;
    transport_.recycle(std::move(m.data));
  }
  queues_[channel].clear();
  return data;
}

}  // namespace transit::detail
