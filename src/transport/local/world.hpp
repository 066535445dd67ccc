#pragma once
// The state all PEs of one local job share: an inbox per PE, the collective groups' state, the
// job's first failure, and where PEs meet to share what they set up together.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transit/detail/transport/transport.hpp"
#include "transport/node_memory.hpp"

namespace transit::detail {

struct local_group_state;

/// State shared by all PEs of one local job.
class local_world {
 public:
  explicit local_world(int num_pes);
  int size() const noexcept { return static_cast<int>(inboxes_.size()); }

  /// Puts `m` into `dest`'s inbox; with `confirm`, counts it there as pending until `dest` drains it.
  void deliver(int dest, message&& m, const std::shared_ptr<send_confirmations>& confirm = nullptr);
  /// Moves everything in `pe`'s inbox into sink, and confirms the confirmed sends among it; returns
  /// how many.
  std::size_t drain(int pe, std::vector<message>& sink);
  /// Waits up to `longest` for a message to reach `pe`'s inbox (or the job to abort): the nap of
  /// an idle PE, ended by the delivery it waits for instead of running out (transport::nap).
  void nap(int pe, std::chrono::nanoseconds longest);

  std::shared_ptr<local_group_state> group(std::uint64_t id);
  /// Records the first failure of the job (later ones are consequences) and aborts the job.
  void fail(int pe, std::string what);
  /// The first failure, if any: (PE, message).
  std::optional<std::pair<int, std::string>> first_failure() const;
  bool aborted() const noexcept { return aborted_.load(std::memory_order_acquire); }
  /// Where PEs meet to share what they set up together (helper mode's node memory).
  meeting_board& board() noexcept { return board_; }

 private:
  struct alignas(64) inbox {
    std::mutex mutex;
    std::vector<message> queue;
    std::vector<std::shared_ptr<send_confirmations>> confirms;  // of the messages in queue
    std::atomic<std::size_t> pending{0};  // lets an idle poll skip the lock
    std::atomic<bool> napping{false};     // lets deliver skip the notify
    std::condition_variable arrived;
  };
  std::vector<std::unique_ptr<inbox>> inboxes_;
  std::atomic<bool> aborted_{false};
  mutable std::mutex failure_mutex_;
  std::optional<std::pair<int, std::string>> first_failure_;
  std::mutex groups_mutex_;
  std::map<std::uint64_t, std::shared_ptr<local_group_state>> groups_;
  meeting_board board_;
};

/// A collective group of one PE over the state the job's PEs share for it (local_world::group).
std::unique_ptr<collective_group> make_local_group(std::shared_ptr<local_group_state> state);

}  // namespace transit::detail
