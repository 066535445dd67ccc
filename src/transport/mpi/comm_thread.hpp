#pragma once
// The communication-thread design of PE threads in MPI ranks (--transit-threads-per-rank with
// --transit-comm-thread, docs/hybrid.md): one thread per rank owns MPI, as Charm++'s SMP mode's
// communication thread does; the PE threads never call MPI. A PE thread hands a message for
// another rank to the communication thread (a pointer into its outbox, no copy), and the
// communication thread sends it on its own endpoint, receives for every PE thread of the rank and
// delivers each arrival into its PE's inbox (rank_lanes::inboxes, as for a message between PE
// threads of one rank). It also runs the rank's collectives once the PE threads have combined
// their values. MPI then needs only MPI_THREAD_FUNNELED, when the communication thread is the one
// that initialised MPI (transit::run's calling thread).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "trace/recorder.hpp"
#include "transport/mpi/transport.hpp"

namespace transit::detail {

class comm_thread_hub {
 public:
  /// Collective over `parent`, on the thread that will run(): the endpoint for `lanes` PE threads.
  /// With a `trace_dir` (--transit-trace), the thread records its hand-offs, at most `trace_events`
  /// (docs/trace.md), and writes them when run() returns.
  comm_thread_hub(MPI_Comm parent, int lanes, const std::string& trace_dir = {}, std::size_t trace_events = 0);
  ~comm_thread_hub();
  comm_thread_hub(const comm_thread_hub&) = delete;
  comm_thread_hub& operator=(const comm_thread_hub&) = delete;

  /// The communication thread's loop: sends what the PE threads hand over, delivers arrivals to
  /// `inboxes`, runs collectives; returns once every lane has called lane_finished() and nothing
  /// it was handed is still queued here. Ends the job (MPI_Abort) if a lane asked to (abort_from_lane).
  void run(local_world& inboxes);
  /// The endpoint's drain and teardown barrier (every rank's sends matched): after run().
  void close();

  // Called by PE threads:
  /// Queues a message from PE thread `source_lane` for PE `dest` of another rank.
  void hand_over(int source_lane, int dest, std::uint32_t channel, message_buffer&& data);
  /// Messages `lane` handed over that have not left yet (its transport's pending_sends()).
  std::size_t pending(int lane) const noexcept { return lanes_[static_cast<std::size_t>(lane)]->pending.load(std::memory_order_acquire); }
  /// The last lane to arrive at a collective asks for the rank's one: run on point-to-point
  /// messages of `group`'s tag; the communication thread sets slot->done under the group's mutex.
  void start_collective(const std::shared_ptr<lane_group_state>& group, lane_group_state::slot* slot, bool barrier,
                        int count, scalar_type type, reduce_op op);
  /// Runs `task` on the communication thread between two of its rounds and returns when it has run
  /// (rethrowing what it threw): the way a PE thread gets MPI called for its rank (MPI calls that
  /// are collective over the ranks must come from one lane per rank, in one order).
  void run_on_comm_thread(std::function<void()> task);
  /// Calls `round` once per round of the communication thread from now on (the one-sided helper of
  /// the rank's node: docs/hybrid.md); `round` returns whether it made progress. An exception from
  /// it ends the job. Returns the service's number for stop_service.
  int start_service(std::function<bool()> round);
  /// After this returns, the service is never called again.
  void stop_service(int id);
  /// The communication thread's endpoint communicator, for tasks (run_on_comm_thread) only.
  MPI_Comm comm() const noexcept { return endpoint_->comm(); }
  /// The endpoint's piece size.
  std::size_t max_message_bytes() const noexcept { return endpoint_->max_message_bytes(); }

  /// The lane's PE is done (its transport is destroyed): run() returns when all are.
  void lane_finished();
  /// A failing PE thread (already reported): the communication thread ends the job. Never returns.
  [[noreturn]] void abort_from_lane();

  /// The tag of the rank's k-th collective group: tags from 16384 up, the first 16384 groups of a job
  /// each its own and then in turn (a group's messages are all received before its collective
  /// completes, so a later group may reuse the tag).
  static int group_tag(std::size_t k) noexcept { return 16384 + static_cast<int>(k % 16384); }

 private:
  struct outgoing {
    int dest;
    std::uint32_t channel;
    message_buffer data;
  };
  struct alignas(64) lane_state {
    std::mutex mutex;
    std::vector<outgoing> outbox;
    std::atomic<std::size_t> pending{0};
  };
  struct collective_request {
    std::shared_ptr<lane_group_state> group;
    lane_group_state::slot* slot;
    bool barrier;
    int count;
    scalar_type type;
    reduce_op op;
    bool started;
  };
  struct task {
    std::function<void()> work;
    std::exception_ptr failure;
    bool done = false;
  };
  // The lane an arrival is for, checked against this rank's lanes (core/wire_error.hpp).
  int checked_destination_lane(const message& m) const;
  bool send_handed_over(std::vector<outgoing>& scratch);
  bool run_collectives();
  bool run_tasks();
  bool run_services();
  void wake() noexcept;

  int lane_count_;
  int ranks_ = 1;  // MPI ranks in the job
  int mpi_rank_ = 0;
  std::unique_ptr<mpi_transport> endpoint_;
  std::optional<trace::recorder> trace_;  // the communication thread's only
  std::vector<std::unique_ptr<lane_state>> lanes_;
  std::mutex collectives_mutex_;
  std::vector<collective_request> requested_;  // started by the lanes, not yet by MPI
  std::vector<collective_request> running_;    // the communication thread's only
  std::vector<task*> tasks_;                   // under collectives_mutex_; done under it too
  std::condition_variable task_done_;
  std::vector<std::pair<int, std::function<bool()>>> services_;  // the communication thread's only
  int services_started_ = 0;                                      // the communication thread's only
  std::atomic<std::size_t> handed_{0};         // hand-overs and requests not yet taken
  std::atomic<int> finished_{0};
  std::atomic<bool> abort_{false};
  // The communication thread naps when idle; a hand-over wakes it.
  std::atomic<bool> napping_{false};
  std::mutex nap_mutex_;
  std::condition_variable nap_;
};

/// The transport of one PE thread under a communication thread: messages to PEs of its own rank
/// are pointer hand-offs into their inboxes, messages to other ranks go to the communication
/// thread; it never calls MPI.
class comm_thread_lane final : public transport, public mpi_access {
 public:
  comm_thread_lane(std::shared_ptr<rank_lanes> lanes, int lane);
  ~comm_thread_lane() override;
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string_view backend() const noexcept override { return "mpi"; }
  int process() const noexcept override { return mpi_rank_; }
  std::size_t pending_sends() const noexcept override { return hub_.pending(lane_); }
  /// Woken by an arrival: the communication thread delivers into this PE's inbox.
  void nap(std::chrono::nanoseconds longest) override;
  std::unique_ptr<collective_group> make_group() override;
  bool aborted() const noexcept override { return false; }
  [[noreturn]] void end_job(const std::string& why) override;
  mpi_access* mpi() noexcept override { return this; }
  /// Helper mode's node memory: its MPI calls and the node's helper run on the communication
  /// thread (src/transport/mpi/node_memory.cpp).
  std::unique_ptr<node_memory> make_node_memory(const node_memory_setup& setup) override;
  /// The communication thread's endpoint communicator: inside on_mpi_thread's work only.
  MPI_Comm comm() const noexcept override { return hub_.comm(); }
  int lane() const noexcept override { return lane_; }
  int lanes() const noexcept override { return lane_count_; }
  std::size_t max_message_bytes() const noexcept override { return hub_.max_message_bytes(); }
  void on_mpi_thread(const std::function<void()>& work) override { hub_.run_on_comm_thread(work); }

 private:
  void send_message(int dest, std::uint32_t channel, message_buffer&& data) override;
  std::size_t poll_messages(std::vector<message>& sink, std::size_t max) override;
  std::shared_ptr<rank_lanes> lanes_;
  comm_thread_hub& hub_;
  int lane_, lane_count_, rank_, size_, mpi_rank_;
  std::size_t groups_made_ = 0;
  std::uint64_t node_memories_made_ = 0;
  std::vector<message> to_self_;
};

}  // namespace transit::detail
