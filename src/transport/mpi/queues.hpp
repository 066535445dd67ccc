#pragma once
#include <deque>
#include <unordered_map>

namespace transit::detail {

/// One queue per peer, made when first used: a rank queues towards few peers. Held by peer in a
/// hash map, not a vector of all peers: state of O(P) per rank is O(P^2) per job, and a simulated
/// job holds all its ranks in one process (an empty std::deque alone holds about 600 bytes:
/// 20 GB at 4096 ranks for a queue per peer).
template <class T>
class per_peer_queues {
 public:
  bool empty(int peer) const noexcept {
    const auto it = queues_.find(peer);
    return it == queues_.end() || it->second.empty();
  }
  /// Queues made so far (tests: peers never queued to cost nothing).
  std::size_t made() const noexcept { return queues_.size(); }
  std::deque<T>& operator[](int peer) { return queues_[peer]; }
  /// Calls f(peer, queue) for every queue made so far.
  template <class F>
  void for_each(F&& f) {
    for (auto& [peer, queue] : queues_) f(peer, queue);
  }

 private:
  std::unordered_map<int, std::deque<T>> queues_;
};

}  // namespace transit::detail
