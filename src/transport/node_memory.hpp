#pragma once
// Private to the library: the memory the one-sided engines share within a node, made by the
// transport (transport::make_node_memory) from the job's shared state, so that no address travels
// in a message. Every PE of a node gets a part all of the node's PEs (and its helper) can reach;
// in helper mode each node's first PE also gets the transport its helper sends and receives on
// (one rank per node, rank = node), and a driver that runs the helper's rounds. Polling mode asks
// without a helper, and takes no for an answer (the node's PEs then keep sending requests).
//  - local (src/transport/local/node_memory.cpp): one allocation per node, and a world of one
//    inbox per node for the helpers, met in the job's local_world; the helper is a thread.
//  - mpi (src/transport/mpi/node_memory.cpp): an MPI_Win_allocate_shared window per node (a rank's
//    segment holds the parts of its PE threads, met in the rank's rank_lanes) and a communicator of
//    the nodes' first ranks; the helper is a thread, or, under a communication thread
//    (docs/hybrid.md), a service of that thread, which then makes every MPI call.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "transit/detail/transport/transport.hpp"
#include "transit/topology/machine.hpp"

namespace transit::detail {

/// Bytes rounded up to a whole number of 64-byte cache lines: parts and segments start on one.
constexpr std::size_t align64(std::size_t n) { return (n + 63) / 64 * 64; }

/// What the transport needs from the layer that asks for node memory.
struct node_memory_setup {
  const machine* m = nullptr;  // the job's machine
  std::size_t part_bytes = 0;  // this PE's part
  /// A helper will run (helper mode): its transport is made, MPI must allow it, and a node that
  /// cannot share memory is an error. False (polling mode): no helper, and make_node_memory
  /// returns null where the node cannot share memory, alike on all of the node's PEs.
  bool helper = true;
  /// Without a helper: why the node cannot share memory, when make_node_memory returns null.
  std::string* why_not = nullptr;
  /// Returns once `done()` is true, keeping this PE's transport polled meanwhile (and unwinding if
  /// the job aborts); `what` names the wait in a diagnostic.
  std::function<void(const std::function<bool()>& done, const char* what)> wait;
};

class node_memory {
 public:
  virtual ~node_memory();
  /// The shared part of the PE with local rank `local` on this PE's node (64-byte aligned).
  virtual std::byte* part(int local) const = 0;
  /// The node's first PE only, once, inside on_helper_side: the transport of its helper (to be
  /// destroyed inside on_helper_side too).
  virtual std::unique_ptr<transport> make_helper_transport() = 0;
  /// Runs `work` on the thread that may make the helper transport's calls: here, or on the rank's
  /// communication thread. Rethrows what `work` throws.
  virtual void on_helper_side(const std::function<void()>& work) { work(); }
  /// Calls `round` (true: it made progress) over and over until stop_helper: on a thread of its
  /// own that backs off while idle, or as a service of the communication thread. An exception from
  /// `round` goes to `failed` on the helper's thread (the communication thread ends the job itself).
  virtual void start_helper(std::function<bool()> round, std::function<void(const std::exception&)> failed);
  /// After this returns, `round` is never called again. Idempotent.
  virtual void stop_helper();
  /// The job is failing: keep the shared memory (peers may still touch it) instead of freeing it.
  virtual void abandon() noexcept = 0;

 private:
  std::thread helper_;
  std::atomic<bool> stop_{false};
};

/// Where the PEs of one group (a node's, local; a rank's PE threads, mpi) meet to set up their
/// shared memory: each member gives its part's size; the member that allocates, once all sizes are
/// in, publishes every part's address. Shared by the members (meeting_board).
class part_rendezvous {
 public:
  explicit part_rendezvous(int members) : sizes_(static_cast<std::size_t>(members), 0) {}
  virtual ~part_rendezvous() = default;
  void give_size(int member, std::uint64_t bytes);
  bool sizes_given() const;
  std::vector<std::uint64_t> sizes() const;
  void publish(std::vector<std::byte*> parts);
  bool published() const;
  std::vector<std::byte*> parts() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::uint64_t> sizes_;
  std::size_t given_ = 0;
  std::vector<std::byte*> parts_;
  bool published_ = false;
};

/// Objects the members of a group share, met by key in state they already share (the job's
/// local_world, a rank's rank_lanes): the first member to come makes the object, and once all
/// `members` have come it leaves the board (they hold it on).
class meeting_board {
 public:
  template <class T, class Make>
  std::shared_ptr<T> meet(std::uint64_t key, int members, Make&& make) {
    std::lock_guard lock(mutex_);
    auto& [object, came] = table_[key];
    if (!object) object = make();
    auto met = std::static_pointer_cast<T>(object);
    if (++came == members) table_.erase(key);
    return met;
  }

 private:
  std::mutex mutex_;
  std::map<std::uint64_t, std::pair<std::shared_ptr<void>, int>> table_;
};

}  // namespace transit::detail
