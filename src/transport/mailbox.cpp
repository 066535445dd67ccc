#include "transit/transport/mailbox.hpp"

namespace transit::detail {

std::uint32_t mailbox::open_channel() {
  const std::uint32_t channel = next_channel_++;
  if (queues_.size() <= channel) queues_.resize(channel + 1);
  return channel;
}

void mailbox::pump() {
  arrivals_.clear();
  transport_.poll(arrivals_, 1024);
  for (auto& m : arrivals_) {
    if (m.channel < closed_.size() && closed_[m.channel]) {
      ++dropped_after_close_;
      continue;
    }
    if (queues_.size() <= m.channel) queues_.resize(m.channel + 1);
    queues_[m.channel].push_back(std::move(m));
  }
}

bool mailbox::take(std::uint32_t channel, std::vector<message>& out) {
  pump();
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
  const std::size_t n = queues_[channel].size();
  queues_[channel].clear();
  return n;
}

}  // namespace transit::detail
