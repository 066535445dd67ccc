#pragma once
// Test access to a streamer's internals: forcing counter values, reading its channel and links.
// The streamer declares this struct a friend; only tests define it.
#include <cstdint>
#include <utility>
#include <vector>

#include "transit/streamer/streamer.hpp"

namespace transit::detail {

struct streamer_test_access {
  /// Sets every link's cumulative message count, outgoing and incoming, to `value`. Collective in
  /// effect: every PE must do it between the same two barriers, before any item moves.
  template <class T>
  static void start_link_counts_at(streamer<T>& s, std::uint64_t value) {
    streamer_core& core = s;
    for (auto& l : core.links_) l.sent = value;
    for (auto& il : core.in_links_) il.received = value;
  }
  template <class T>
  static std::uint32_t channel(streamer<T>& s) {
    streamer_core& core = s;
    return core.channel_;
  }
  /// (source PE, phase) of every incoming link.
  template <class T>
  static std::vector<std::pair<int, int>> in_links(streamer<T>& s) {
    streamer_core& core = s;
    std::vector<std::pair<int, int>> out;
    for (const auto& il : core.in_links_) out.emplace_back(il.pe, il.phase);
    return out;
  }
};

}  // namespace transit::detail
