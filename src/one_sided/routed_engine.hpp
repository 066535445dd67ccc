#pragma once
// Private to src/one_sided: the requesting half of a PE in both routed progress modes (tickets,
// backlog, fence accounting, waiting, the same-node path through the node's shared memory), and
// what the engines share (node plan, teardown waves).
#include <array>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hub.hpp"
#include "transit/grid/router.hpp"
#include "transit/grid/virtual_grid.hpp"
#include "transit/detail/one_sided/engine.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace transit::detail {

/// The virtual grid of nodes for a topology and its lowest-dimension-first router.
struct node_plan {
  virtual_grid grid;
  std::unique_ptr<router> route;
};
/// Throws std::invalid_argument for hypercube on a node count that is not a power of two.
node_plan make_node_plan(request_topology topology, int nodes);

/// Collective teardown helper: waves of non-blocking allreduces of `counts()` = (messages sent,
/// messages received) until two consecutive waves agree and balance (the four-counter method).
/// `poll` keeps the endpoint moving between waves.
void quiesce(context& ctx, collective_group& group, const std::function<bool()>& poll,
             const std::function<std::pair<std::uint64_t, std::uint64_t>()>& counts, std::string_view what);

/// Registers an engine for fence_all_engines; removes it when destroyed.
class engine_registration {
 public:
  engine_registration(context& ctx, one_sided_engine* engine);
  ~engine_registration();
  engine_registration(const engine_registration&) = delete;
  engine_registration& operator=(const engine_registration&) = delete;

 private:
  context& ctx_;
  one_sided_engine* engine_;
};

class node_memory;

class routed_engine : public one_sided_engine {
 public:
  std::span<std::byte> local_block() noexcept override { return block_; }
  void issue(const operation& op, completion* done, std::shared_ptr<completion> keep) final;
  void wait(completion& c, std::string_view what) final;
  void fence() final;
  void sync() final;
  bool progress() final { return poll(false); }
  /// One request buffer's piece; the polling engine allows more (packed_message_buffers).
  std::size_t max_packed_bytes() const noexcept override { return piece_bytes_; }

 protected:
  routed_engine(context& ctx, const engine_config& config);
  ~routed_engine() override;

  /// Hands a request to this PE's endpoint; false when it has no room now (the request stays in
  /// the backlog, in order, and is retried after polls).
  virtual bool submit(const request_record& r, const std::byte* payload) = 0;
  /// Receives replies (and in polling mode serves and forwards). `waiting`: this PE has nothing
  /// else to do, so partial buffers may go now.
  virtual bool poll_endpoint(bool waiting) = 0;

  bool poll(bool waiting);
  /// The hub settings every endpoint takes from the options (routes, links and identity aside).
  hub::config hub_basics() const;
  /// Makes [at, at + local elements) this PE's block and value-initialises it.
  void place_block(std::byte* at);
  /// From now on this PE applies operations on its node's elements itself, through the node's
  /// shared memory: the block of the node's PE with local rank l is at `block_at` in its part of
  /// `resources`. Every PE of the node must have placed its block before any of them issues (a
  /// barrier after set-up).
  void share_node_blocks(const node_memory& resources, std::size_t block_at);
  bool node_shared() const noexcept { return !node_blocks_.empty(); }
  /// The block of `pe`, a PE of this node (node_shared() only).
  std::byte* node_block(int pe) const { return node_blocks_[static_cast<std::size_t>(ctx_.machine().local_rank(pe))]; }
  /// The requesting half's counters: requests sent, operations applied in the node, the path;
  /// for mutexes, requests_served too (call it after the hub's counters).
  void add_requester_counters(one_sided_stats& s) const noexcept;
  void on_reply(std::uint32_t ticket, const std::byte* data, std::size_t bytes);
  void on_acks(std::uint64_t count) noexcept { acks_received_ += count; }
  /// Why a reply or acknowledgement record from the wire does not fit what this PE awaits (a
  /// ticket not live, a reply of another size, more acknowledgements than outstanding), or empty.
  std::string control_problem(const control_record& c) const;
  /// Everything this PE issued is complete (replies and acknowledgements received).
  bool settled() const noexcept {
    return backlog_.empty() && live_tickets_ == 0 && acks_received_ == acks_expected_ && node_locks_.empty();
  }
  /// True when the destructor runs because of an exception or a failed job: no collective waits.
  bool abandoning() const noexcept { return std::uncaught_exceptions() > uncaught_at_start_; }
  std::string describe_requests() const;

  context& ctx_;
  const int rank_;
  const engine_config config_;
  const std::size_t piece_bytes_;
  std::span<std::byte> block_;
  std::uint32_t channel_;
  std::unique_ptr<collective_group> group_;
  bool in_wait_ = false;  // this engine's own wait loop runs: its progress hook stays quiet
  std::uint64_t requests_sent_ = 0;

 private:
  struct ticket_slot {
    std::byte* out = nullptr;
    std::size_t bytes = 0;
    completion* done = nullptr;
    std::shared_ptr<completion> keep;
  };
  struct pending {
    request_record record;
    const std::byte* payload;              // the caller's values (put, accumulate)...
    std::array<std::byte, 16> small;       // ...or a copy of a small payload (atomics)
    completion* done;                      // completes when submitted (no ticket)
  };
  std::uint32_t new_ticket(std::byte* out, std::size_t bytes, completion* done, std::shared_ptr<completion> keep);
  /// Applies r at once when its owner is on this PE's node and the node shares memory (atomics
  /// atomically, words of 1 to 8 bytes as single atomic words), writing any result to `out`;
  /// false to send it.
  bool apply_in_node(const request_record& r, const std::byte* payload, std::byte* out);
  /// Takes or releases a mutex homed on this PE's node through the node's shared memory; false
  /// to send the request.
  bool take_in_node(const operation& op, completion* done);
  bool apply_at_once(const operation& op) override;
  /// Completes the node_locks_ whose tickets are served; whether any was.
  bool grant_node_locks();
  /// Every 32 issues that sent requests, or 1024 applied in the node: this engine's endpoint, then
  /// every other engine's (progress hooks), as a wait would; an operation applied in the node
  /// never waits, and a PE that only issues those must still serve its peers.
  void serve_while_issuing();
  // Serving may yield the core (Open MPI's progress does, under mpi_yield_when_idle): every 32
  // issues cost little beside requests, but 1024 operations applied in the node (about 20 us of
  // them) between serves, or a yield would cost more than the operations themselves.
  static constexpr std::uint32_t applied_between_serves = 1024;
  bool drain_backlog();
  template <class Done>
  void wait_for(Done&& finished, std::string_view what);

  std::vector<ticket_slot> tickets_;
  std::vector<std::uint32_t> free_tickets_;
  std::size_t live_tickets_ = 0;
  std::uint64_t acks_expected_ = 0;
  std::uint64_t acks_received_ = 0;
  std::deque<pending> backlog_;
  std::uint32_t issued_since_poll_ = 0;
  std::uint32_t applied_since_serve_ = 0;
  std::vector<std::byte*> node_blocks_;  // by local rank; empty: the node shares no memory
  int node_ = -1;
  std::uint64_t applied_in_node_ = 0;
  struct node_lock {
    const std::byte* mutex;
    std::uint64_t ticket;
    completion* done;
  };
  std::vector<node_lock> node_locks_;  // locks taken in the node, waiting for their tickets
  int uncaught_at_start_;
  engine_registration registration_;
};

/// Polling mode: this PE is its own endpoint and serves inside every transit call it makes.
std::unique_ptr<one_sided_engine> make_polling_engine(context& ctx, const engine_config& config);
/// Helper mode: one helper thread per node serves the node's PEs through shared memory.
std::unique_ptr<one_sided_engine> make_helper_engine(context& ctx, const engine_config& config);
#ifdef TRANSIT_WITH_MPI
/// mpi_rma: MPI-3 windows, the baseline (mpi backend only).
std::unique_ptr<one_sided_engine> make_mpi_rma_engine(context& ctx, const engine_config& config);
#endif

}  // namespace transit::detail
