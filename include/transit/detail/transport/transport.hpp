#pragma once
// The transport seam: the only interface between the backend-agnostic layers and a backend.
// Per-message operations are virtual; nothing here runs per item.
//
//  - send: non-blocking, takes ownership of the buffer. Messages between one pair of PEs on one
//    channel arrive in the order sent.
//  - poll: non-blocking; hands over messages that have arrived, for every channel.
//  - collective groups: independent ordered sequences of non-blocking collectives, so that two
//    streamers (each with its own group) never interleave their termination rounds.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/transport/buffer_pool.hpp"
#include "transit/detail/transport/message.hpp"

namespace transit::detail {

class mpi_access;          // src/transport/mpi_access.hpp: what layers above may ask of MPI
namespace trace {
class recorder;            // src/trace/recorder.hpp: the timeline trace (--transit-trace)
}
class node_memory;         // src/transport/node_memory.hpp: the one-sided engines' node-shared memory
struct node_memory_setup;  // (both private to the library)

/// A count of a PE's sends made by transport::send_confirmed and not yet confirmed. Shared: the
/// transport holds it while a send is in flight, so it may outlive its owner (a failing step).
/// Atomic: on the local backend the receiving PE's thread confirms.
struct send_confirmations {
  std::atomic<std::uint64_t> pending{0};
};

class transport {
 public:
  virtual ~transport() = default;
  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;
  /// The backend's name, a label for reports: layers above ask what the transport can do
  /// (process(), threads_of_one_process(), mpi()), never which backend it is.
  virtual std::string_view backend() const noexcept = 0;
  /// The operating-system process this PE runs in, numbered from 0 across the job: its MPI rank,
  /// or 0 when the job's PEs are all threads of one process (threads_of_one_process()).
  virtual int process() const noexcept = 0;
  /// Whether every PE of the job is a thread of this one process on this host (the local
  /// backend), so that they share its cores whatever machine the options describe.
  virtual bool threads_of_one_process() const noexcept { return false; }
  /// Whether a poll that finds nothing calls a library that may hand the core away when idle (MPI's
  /// progress: Open MPI yields there on an oversubscribed host, each time a context switch), so
  /// that a PE with work of its own should space its polls on a shared core (mailbox::pump_due).
  virtual bool idle_poll_may_yield() const noexcept { return false; }

  /// A buffer with room for `payload_bytes`, from this PE's recycled buffers when one fits.
  message_buffer allocate(std::size_t payload_bytes) { return pool_.take(payload_bytes); }
  /// Returns a consumed buffer (a received message's) for reuse.
  void recycle(message_buffer&& b) { pool_.give(std::move(b)); }
  /// Non-blocking send of data.size() payload bytes to `dest` (which may be this PE).
  void send(int dest, std::uint32_t channel, message_buffer&& data) {
    if (trace_ != nullptr) [[unlikely]] {
      traced_send(dest, channel, std::move(data), nullptr);
      return;
    }
    send_message(dest, channel, std::move(data));
  }
  /// The largest payload send_confirmed takes; 0 when this transport cannot confirm delivery.
  virtual std::size_t confirmable_bytes() const noexcept { return 0; }
  /// As send(), and counts the message in `pending` until the receiving PE has taken it off the
  /// network whole: from then on it is in that PE's hands, handed over by its polls at the latest
  /// before it returns from any collective it is in. mpi: a synchronous send, whose completion
  /// MPI's own acknowledgement reports, where a layer above would send one of its own; local: the
  /// receiving PE's poll that drains its inbox confirms it. Requires
  /// data.size() <= confirmable_bytes() and `dest` != rank().
  void send_confirmed(int dest, std::uint32_t channel, message_buffer&& data,
                      const std::shared_ptr<send_confirmations>& pending) {
    if (trace_ != nullptr) [[unlikely]] {
      traced_send(dest, channel, std::move(data), &pending);
      return;
    }
    send_confirmed_message(dest, channel, std::move(data), pending);
  }
  /// Whether a confirmed send may complete before the receiving PE's poll handed the message over
  /// (a receive posted ahead completes without it): then that PE polls again after the step's
  /// closing collective. Where not, the poll that took the message off the network handed it over.
  virtual bool confirms_before_hand_over() const noexcept { return false; }
  /// Appends arrived messages to `sink`; returns how many. Also completes sends. `max` bounds the
  /// messages taken from the network in one call (mpi); messages already queued in this process
  /// (the local backend's inbox, messages to this PE) are handed over whole.
  std::size_t poll(std::vector<message>& sink, std::size_t max) {
    if (trace_ != nullptr) [[unlikely]] return traced_poll(sink, max);
    return poll_messages(sink, max);
  }
  /// The timeline trace this PE records into, or null (off, the default). Every send and every
  /// received message then passes through it, on every backend: this seam is where they all meet.
  trace::recorder* tracer() const noexcept { return trace_; }
  void set_tracer(trace::recorder* t) noexcept { trace_ = t; }
  /// Sends accepted but not yet complete (queued or in flight).
  virtual std::size_t pending_sends() const noexcept = 0;
  /// Collective: a new, independent group of collectives.
  virtual std::unique_ptr<collective_group> make_group() = 0;
  /// For a PE with nothing to do until the network moves: blocks until a message arrives, a send
  /// completes or a collective of one of this transport's groups completes, and returns true; or
  /// returns false at once when this transport does not block (then the caller backs off and
  /// polls). Only the mpi transport under SimGrid blocks (a simulated poll costs the simulator a
  /// context switch; a real rank shares its core, where MPI's own waits would spin), and only in
  /// its posted receive mode, while no polling_hold is alive, nothing waits in its queue for
  /// this PE, and this PE has anything in flight at all.
  virtual bool wait_for_activity() { return false; }
  /// For a PE with nothing to do: waits up to `longest` (a backoff nap), or less when this
  /// transport can tell that a message arrived for it. Default: the whole nap.
  virtual void nap(std::chrono::nanoseconds longest) { sleep_for(longest); }

  /// While one lives, wait_for_activity returns false: for a layer that waits on MPI requests of
  /// its own (the mpi_rma engine), which the transport cannot see complete.
  class polling_hold {
   public:
    explicit polling_hold(transport& t) noexcept : t_(&t) { ++t_->polling_holds_; }
    polling_hold(const polling_hold&) = delete;
    polling_hold& operator=(const polling_hold&) = delete;
    ~polling_hold() { --t_->polling_holds_; }

   private:
    transport* t_;
  };
  /// True once another PE has failed; waiting loops then stop (local backend; MPI aborts instead).
  virtual bool aborted() const noexcept = 0;
  /// Ends the whole job because of this PE: prints "transit: PE <r>: <why>" (once per job) and
  /// aborts (mpi, does not return), or records the failure and flags the job aborted so that the
  /// other PEs unwind at their next wait (local, returns).
  virtual void end_job(const std::string& why) = 0;
  /// The mpi backend's answers for a layer that calls MPI itself; null on other backends. Non-null
  /// is the capability: MPI calls and windows over the job's ranks are available.
  virtual mpi_access* mpi() noexcept { return nullptr; }
  const mpi_access* mpi() const noexcept { return const_cast<transport*>(this)->mpi(); }
  /// Collective over all PEs: the memory the one-sided engines share within each node, made by
  /// the backend from the job's shared state (src/transport/node_memory.hpp). Where a node cannot
  /// share memory: throws for helper mode (std::logic_error on a transport that has none), returns
  /// null for polling mode (setup.helper false), alike on all of the node's PEs.
  virtual std::unique_ptr<node_memory> make_node_memory(const node_memory_setup& setup);
  /// Messages this PE has sent through the network library (MPI) so far; a message handed to a
  /// PE of its own process by pointer is not one (0 on the local backend).
  std::uint64_t network_messages() const noexcept { return network_messages_; }

 protected:
  /// The backend's send and poll, behind send() and poll() (same contracts).
  virtual void send_message(int dest, std::uint32_t channel, message_buffer&& data) = 0;
  virtual std::size_t poll_messages(std::vector<message>& sink, std::size_t max) = 0;
  /// send_confirmed's (a transport whose confirmable_bytes() is above 0 overrides it).
  virtual void send_confirmed_message(int dest, std::uint32_t channel, message_buffer&& data,
                                      const std::shared_ptr<send_confirmations>& pending);
  bool polling_held() const noexcept { return polling_holds_ > 0; }
  buffer_pool pool_;
  std::uint64_t network_messages_ = 0;

 private:
  // Out of line (src/transport/traced.cpp), so that the inline send and poll stay a branch and a call.
  void traced_send(int dest, std::uint32_t channel, message_buffer&& data,
                   const std::shared_ptr<send_confirmations>* confirmed);
  std::size_t traced_poll(std::vector<message>& sink, std::size_t max);
  int polling_holds_ = 0;
  trace::recorder* trace_ = nullptr;
};

}  // namespace transit::detail
