#pragma once
// Private to src/streamer: the part of streamer_core's state that core.hpp only names (its
// standard headers stay out of every program that includes the streamer).
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "transit/detail/streamer/core.hpp"
#include "model/tuner.hpp"
#include "transit/detail/transport/transport.hpp"
#include "transit/grid/router.hpp"

namespace transit::detail {

struct streamer_core::impl {
  std::unique_ptr<router> plan;               // the router; replaced when tuning changes the grid or routing
  std::unique_ptr<collective_group> group;    // this streamer's own collectives
  std::unique_ptr<step_tuner> tuner;          // with tune = true
  std::unordered_map<std::int64_t, int> in_index;   // source * num_phases + phase -> in_links_
  /// in_links_'s index of the link from `source` in `phase`, or -1 when there is none. Every data
  /// message asks it twice (checked_header, count_arrival), mostly of the peer before: the last
  /// answer is kept. Valid until in_index changes (forget_in_link).
  int in_link(int source, int phase) {
    if (source != last_in_source || phase != last_in_phase) {
      const auto it = in_index.find(std::int64_t{source} * plan->num_phases() + phase);
      last_in = it == in_index.end() ? -1 : it->second;
      last_in_source = source;
      last_in_phase = phase;
    }
    return last_in;
  }
  void forget_in_link() { last_in_source = -1; }
  int last_in_source = -1, last_in_phase = -1, last_in = -1;
  std::unordered_map<std::int64_t, int> out_index;  // pe * num_phases + phase -> links_
  std::unordered_map<std::int64_t, std::vector<int>> broadcast_cache;  // root * 65536 + arrived phase + 1
  // Steps ending by acknowledgement: messages sent on links confirmed_by_transport and not yet
  // confirmed. Shared with the transport, which counts them down as its sends complete.
  std::shared_ptr<send_confirmations> confirmations = std::make_shared<send_confirmations>();

  // What inserters (the application's threads) handed over, for this PE to send.
  std::mutex handed_mutex;
  std::vector<handed_buffer> handed;  // under handed_mutex
  std::uint64_t handed_items = 0;     // under handed_mutex
  bool accepting_handed = true;       // under handed_mutex: false from done() to the step's end
  std::atomic<bool> has_handed{false};
  std::vector<handed_buffer> handed_scratch;
};

}  // namespace transit::detail
