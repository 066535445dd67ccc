#pragma once
// Private to src/one_sided: what helper mode needs from the backend. Every PE of a node gets a
// part of memory all of the node's PEs (and its helper) can reach, and each node's first PE gets
// the transport its helper sends and receives on (one rank per node, rank = node), and a driver
// that runs the helper's rounds.
// Local backend: one allocation per node, and a local_world of one inbox per node; the addresses
// travel to the node's PEs as messages (one process, one address space); the helper is a thread.
// Mpi backend: an MPI_Win_allocate_shared window per node (a rank's segment holds the parts of its
// PE threads) and a communicator of the nodes' first ranks; the helper is a thread, or, under a
// communication thread (docs/hybrid.md), a service of that thread, which then makes every MPI call.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "transit/detail/transport/transport.hpp"

namespace transit {
class context;
}

namespace transit::detail {

/// Bytes rounded up to a whole number of 64-byte cache lines: parts and segments start on one.
constexpr std::size_t align64(std::size_t n) { return (n + 63) / 64 * 64; }

class node_resources {
 public:
  virtual ~node_resources();
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

/// Collective over all PEs; setup messages travel on `channel`. Throws std::invalid_argument on
/// mpi when MPI was initialised below MPI_THREAD_MULTIPLE and no communication thread calls MPI
/// for the PEs (the helper would call MPI from a thread of its own).
std::unique_ptr<node_resources> make_node_resources(context& ctx, std::uint32_t channel, std::size_t part_bytes);

/// The messages of the set-up, between PEs of a node (local) or of a rank (mpi): a tag and 64-bit
/// values (sizes or addresses).
enum class setup_tag : std::uint64_t { part_size = 1, parts = 2, world = 3 };
void send_setup_values(context& ctx, std::uint32_t channel, int dest, setup_tag tag, const std::vector<std::uint64_t>& values);
/// Hands each setup message arriving on `channel` to `take` until `complete()`, polling the PE's
/// transport meanwhile; `what` names the wait in a diagnostic.
void receive_setup_values(context& ctx, std::uint32_t channel,
                          const std::function<void(setup_tag, const std::vector<std::uint64_t>&)>& take,
                          const std::function<bool()>& complete, const char* what);

#ifdef TRANSIT_WITH_MPI
std::unique_ptr<node_resources> make_mpi_node_resources(context& ctx, std::uint32_t channel, std::size_t part_bytes);
#endif

}  // namespace transit::detail
