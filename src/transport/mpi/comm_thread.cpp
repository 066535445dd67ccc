#include "transport/mpi/comm_thread.hpp"
#include "transport/mpi/communicator.hpp"
#include "transport/mpi/wire.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>
#include <utility>

#include "core/backoff.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "core/wire_error.hpp"

namespace transit::detail {

using namespace mpi_wire;  // NOLINT: this file speaks the wire format

namespace {
// Arrivals taken from MPI per round, so that hand-overs and collectives keep their turn.
constexpr std::size_t arrivals_per_round = 256;
// An idle communication thread spins, yields, then naps, doubling from the first nap up to the
// longest. A hand-over or a collective wakes it at once; an arrival from MPI waits for the end of
// its nap, so the longest nap bounds the latency it adds. Short enough for that, long enough that
// a rank whose PE threads share its cores does not lose them to an idle poller.
constexpr int spin_rounds = 16;
constexpr int yield_rounds = 64;
constexpr std::chrono::microseconds first_nap{1};
constexpr std::chrono::microseconds longest_nap{50};
// Alone in the job (one rank: its T PE threads are the whole job), nothing arrives from MPI, and
// every hand-over and collective wakes the thread: so it naps long, instead of waking 20,000 times
// a second on a core its PE threads need.
constexpr std::chrono::milliseconds longest_nap_alone{20};
}  // namespace

comm_thread_hub::comm_thread_hub(MPI_Comm parent, int lanes, const std::string& trace_dir, std::size_t trace_events)
    : lane_count_(lanes) {
  MPI_Comm_size(parent, &ranks_);
  MPI_Comm_rank(parent, &mpi_rank_);
  if (!trace_dir.empty())
    trace_.emplace(trace::recorder::for_comm_thread(trace_dir, mpi_rank_, ranks_ * lanes,
                                                    "rank " + std::to_string(mpi_rank_), "mpi", trace_events));
  lanes_.reserve(static_cast<std::size_t>(lanes));
  for (int lane = 0; lane < lanes; ++lane) lanes_.push_back(std::make_unique<lane_state>());
  endpoint_ = std::make_unique<mpi_transport>(parent, lanes, [this](int lane) {
    lanes_[static_cast<std::size_t>(lane)]->pending.fetch_sub(1, std::memory_order_acq_rel);
  });
}

comm_thread_hub::~comm_thread_hub() { close(); }

void comm_thread_hub::close() {
  running_.clear();
  endpoint_.reset();  // drains its sends, then the barrier of every rank's endpoint
}

void comm_thread_hub::hand_over(int source_lane, int dest, std::uint32_t channel, message_buffer&& data) {
  lane_state& lane = *lanes_[static_cast<std::size_t>(source_lane)];
  lane.pending.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard lock(lane.mutex);
    lane.outbox.push_back(outgoing{dest, channel, std::move(data)});
  }
  handed_.fetch_add(1);
  if (napping_.load()) wake();
}

void comm_thread_hub::start_collective(const std::shared_ptr<lane_group_state>& group, lane_group_state::slot* slot,
                                       bool barrier, int count, scalar_type type, reduce_op op) {
  {
    std::lock_guard lock(collectives_mutex_);
    requested_.push_back(collective_request{group, slot, barrier, count, type, op, false});
  }
  handed_.fetch_add(1);
  if (napping_.load()) wake();
}

void comm_thread_hub::run_on_comm_thread(std::function<void()> work) {
  task t{std::move(work), nullptr, false};
  std::unique_lock lock(collectives_mutex_);
  tasks_.push_back(&t);
  handed_.fetch_add(1);
  if (napping_.load()) wake();
  task_done_.wait(lock, [&] { return t.done; });
  if (t.failure) std::rethrow_exception(t.failure);
}

int comm_thread_hub::start_service(std::function<bool()> round) {
  int id = -1;
  run_on_comm_thread([&] {
    id = services_started_++;
    services_.emplace_back(id, std::move(round));
  });
  return id;
}

void comm_thread_hub::stop_service(int id) {
  run_on_comm_thread([&] { std::erase_if(services_, [&](const auto& s) { return s.first == id; }); });
}

void comm_thread_hub::lane_finished() {
  finished_.fetch_add(1);
  wake();
}

void comm_thread_hub::abort_from_lane() {
  abort_.store(true);
  wake();
  for (;;) sleep_for(std::chrono::seconds(1));  // the communication thread ends the job
}

void comm_thread_hub::wake() noexcept {
  std::lock_guard lock(nap_mutex_);
  nap_.notify_one();
}

bool comm_thread_hub::send_handed_over(std::vector<outgoing>& scratch) {
  bool sent = false;
  for (int lane = 0; lane < lane_count_; ++lane) {
    lane_state& state = *lanes_[static_cast<std::size_t>(lane)];
    {
      std::lock_guard lock(state.mutex);
      if (state.outbox.empty()) continue;
      scratch.swap(state.outbox);  // the lane refills the (empty, reserved) vector it gets back
    }
    handed_.fetch_sub(scratch.size());
    if (trace_) [[unlikely]] {
      const int source = mpi_rank_ * lane_count_ + lane;
      for (outgoing& o : scratch) {
        const std::size_t bytes = o.data.size();
        const std::int64_t start = trace::recorder::now();
        endpoint_->send_from(lane, o.dest, o.channel, std::move(o.data));
        trace_->relayed(true, source, o.dest, o.channel, bytes, start, trace::recorder::now());
      }
    } else {
      for (outgoing& o : scratch) endpoint_->send_from(lane, o.dest, o.channel, std::move(o.data));
    }
    scratch.clear();
    sent = true;
  }
  return sent;
}

bool comm_thread_hub::run_tasks() {
  std::vector<task*> taken;
  {
    std::lock_guard lock(collectives_mutex_);
    if (tasks_.empty()) return false;
    taken.swap(tasks_);
  }
  handed_.fetch_sub(taken.size());
  for (task* t : taken) {
    try {
      t->work();
    } catch (...) {
      t->failure = std::current_exception();
    }
    {
      std::lock_guard lock(collectives_mutex_);
      t->done = true;  // the waiting lane may destroy *t as soon as it sees this
    }
    task_done_.notify_all();
  }
  return true;
}

bool comm_thread_hub::run_services() {
  bool progressed = false;
  for (auto& service : services_) {
    try {
      progressed |= service.second();
    } catch (const std::exception& e) {
      // A service serves PEs of other ranks too: its failure ends the job, as a PE's does.
      std::fprintf(stderr, "transit: rank %d, communication thread: %s\n", mpi_rank_, e.what());
      std::fflush(stderr);
      abort_job();
    }
  }
  return progressed;
}

bool comm_thread_hub::run_collectives() {
  bool progressed = false;
  {
    std::lock_guard lock(collectives_mutex_);
    if (!requested_.empty()) {
      handed_.fetch_sub(requested_.size());
      for (auto& r : requested_) running_.push_back(std::move(r));
      requested_.clear();
      progressed = true;
    }
  }
  for (std::size_t i = 0; i < running_.size();) {
    collective_request& r = running_[i];
    lane_group_state& group = *r.group;
    if (!r.started) {  // the lanes' combined values are in the slot
      if (!group.on_hub) group.on_hub = endpoint_->make_point_to_point_group(group.tag);
      if (r.barrier) {
        group.on_hub->start_barrier();
      } else {
        group.on_hub->start_allreduce(r.slot->values.data(), r.count, r.type, r.op);
      }
      r.started = true;
    }
    if (!group.on_hub->test()) {
      ++i;
      continue;
    }
    {
      std::lock_guard lock(group.mutex);
      r.slot->done = true;
    }
    running_[i] = std::move(running_.back());
    running_.pop_back();
    progressed = true;
  }
  return progressed;
}

int comm_thread_hub::checked_destination_lane(const message& m) const {
  const int lane = mpi_transport::destination_lane(m);
  if (lane >= lane_count_)
    corrupt_message(concat("communication thread of rank ", mpi_rank_), concat("message on channel ", m.channel),
                    m.source, concat("its destination lane is ", lane, ", the rank runs ", lane_count_, " PE threads"));
  return lane;
}

void comm_thread_hub::run(local_world& inboxes) {
  std::vector<outgoing> scratch;
  std::vector<message> arrivals;
  int idle_rounds = 0;
  std::chrono::microseconds nap = first_nap;
  for (;;) {
    if (abort_.load()) abort_job();
    bool busy = send_handed_over(scratch);
    arrivals.clear();
    try {
      if (endpoint_->poll(arrivals, arrivals_per_round) > 0) {
        busy = true;
        for (message& m : arrivals) {
          const int lane = checked_destination_lane(m);
          if (!trace_) {
            inboxes.deliver(lane, std::move(m));
            continue;
          }
          // Only the hand-off is timed: the MPI poll that found the message is the endpoint's own work.
          const int source = m.source;
          const std::uint32_t channel = m.channel;
          const std::size_t bytes = m.data.size();
          const std::int64_t start = trace::recorder::now();
          inboxes.deliver(lane, std::move(m));
          trace_->relayed(false, source, mpi_rank_ * lane_count_ + lane, channel, bytes, start, trace::recorder::now());
        }
      }
    } catch (const wire_error& e) {
      endpoint_->end_job(e.what());  // no PE's thread to unwind: the job ends with the report
    }
    busy |= run_collectives();
    busy |= run_tasks();
    busy |= run_services();
    if (finished_.load() == lane_count_ && handed_.load() == 0) {
      if (trace_) trace_->write("end");
      return;
    }
    if (busy) {
      idle_rounds = 0;
      nap = first_nap;
      continue;
    }
    if (idle_rounds < spin_rounds) {
      for (int i = 0; i < 8; ++i) cpu_relax();
      ++idle_rounds;
    } else if (idle_rounds < spin_rounds + yield_rounds) {
      yield();
      ++idle_rounds;
    } else {
      // A condition variable's timed wait reads the host's clock, outside the clock seam: the
      // communication thread never runs simulated (SMPI runs one thread per rank: T = 1 there).
      // Dekker with hand_over: it adds to handed_ then reads napping_; this sets napping_ then
      // reads handed_ (both sequentially consistent), so one of the two sees the other.
      napping_.store(true);
      {
        std::unique_lock lock(nap_mutex_);
        nap_.wait_for(lock, nap, [&] { return handed_.load() > 0 || abort_.load() || finished_.load() == lane_count_; });
      }
      napping_.store(false);
      // A service (a one-sided helper) has work that does not wake this thread: requests in rings.
      const std::chrono::microseconds longest = ranks_ == 1 && services_.empty() ? longest_nap_alone : longest_nap;
      if (nap < longest) nap = std::min(2 * nap, longest);
    }
  }
}

comm_thread_lane::comm_thread_lane(std::shared_ptr<rank_lanes> lanes, int lane)
    : lanes_(std::move(lanes)),
      hub_(*lanes_->hub()),
      lane_(lane),
      lane_count_(lanes_->lanes()),
      rank_(lanes_->mpi_rank() * lanes_->lanes() + lane),
      size_(lanes_->mpi_size() * lanes_->lanes()),
      mpi_rank_(lanes_->mpi_rank()) {}

comm_thread_lane::~comm_thread_lane() { hub_.lane_finished(); }

void comm_thread_lane::send_message(int dest, std::uint32_t channel, message_buffer&& data) {
  TRANSIT_ASSERT(dest >= 0 && dest < size_, "send to a PE outside the job");
  if (dest == rank_) {
    to_self_.push_back(message{rank_, channel, std::move(data)});
  } else if (dest / lane_count_ == mpi_rank_) {  // a PE thread of this rank: a pointer hand-off
    lanes_->inboxes().deliver(dest % lane_count_, message{rank_, channel, std::move(data)});
  } else {
    ++network_messages_;
    hub_.hand_over(lane_, dest, channel, std::move(data));
  }
}

void comm_thread_lane::nap(std::chrono::nanoseconds longest) { lanes_->inboxes().nap(lane_, longest); }

std::size_t comm_thread_lane::poll_messages(std::vector<message>& sink, std::size_t) {
  std::size_t received = to_self_.size();
  for (auto& m : to_self_) sink.push_back(std::move(m));
  to_self_.clear();
  return received + lanes_->inboxes().drain(lane_, sink);
}

std::unique_ptr<collective_group> comm_thread_lane::make_group() {
  return make_lane_group(lanes_->group(groups_made_++), lane_count_);
}

void comm_thread_lane::end_job(const std::string& why) {
  std::fprintf(stderr, "transit: PE %d: %s\n", rank_, why.c_str());
  std::fflush(stderr);
  hub_.abort_from_lane();
}

}  // namespace transit::detail
