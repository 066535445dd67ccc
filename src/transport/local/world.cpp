#include "transport/local/world.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"

namespace transit::detail {

// One collective of a group in progress: every PE folds its values in under the mutex; the last
// to arrive publishes the result and bumps the generation. A PE reads the result before it can
// start the group's next collective, and that one cannot complete without it, so the published
// result stays stable until every PE has read it.
struct local_group_state {
  explicit local_group_state(int pes) : num_pes(pes) {}
  const int num_pes;
  std::mutex mutex;
  int arrived = 0;
  std::vector<std::uint64_t> accumulator;
  std::vector<std::uint64_t> result;
  std::atomic<std::uint64_t> generation{0};
};

namespace {

class local_group final : public collective_group {
 public:
  explicit local_group(std::shared_ptr<local_group_state> state) : state_(std::move(state)) {}

  void start_allreduce(void* values, int count, scalar_type type, reduce_op op) override {
    TRANSIT_ASSERT(values_ == nullptr && !barrier_, "one collective per group at a time");
    values_ = static_cast<std::uint64_t*>(values);
    count_ = count;
    arrive([&](local_group_state& s) {
      if (s.arrived == 0) {
        s.accumulator.assign(values_, values_ + count);
      } else {
        TRANSIT_ASSERT(s.accumulator.size() == static_cast<std::size_t>(count),
                       "PEs disagree on the length of an allreduce");
        for (int i = 0; i < count; ++i) s.accumulator[i] = combine(s.accumulator[i], values_[i], type, op);
      }
    });
  }

  void start_barrier() override {
    TRANSIT_ASSERT(values_ == nullptr && !barrier_, "one collective per group at a time");
    barrier_ = true;
    arrive([](local_group_state&) {});
  }

  bool test() override {
    if (state_->generation.load(std::memory_order_acquire) < target_) return false;
    if (values_ != nullptr) {
      std::lock_guard lock(state_->mutex);
      std::copy_n(state_->result.begin(), count_, values_);
    }
    values_ = nullptr;
    barrier_ = false;
    return true;
  }

 private:
  template <class Fold>
  void arrive(Fold&& fold) {
    auto& s = *state_;
    std::lock_guard lock(s.mutex);
    target_ = s.generation.load(std::memory_order_relaxed) + 1;
    fold(s);
    if (++s.arrived == s.num_pes) {
      s.result = s.accumulator;
      s.arrived = 0;
      s.generation.store(target_, std::memory_order_release);
    }
  }

  std::shared_ptr<local_group_state> state_;
  std::uint64_t* values_ = nullptr;
  int count_ = 0;
  bool barrier_ = false;
  std::uint64_t target_ = 0;
};

}  // namespace

local_world::local_world(int num_pes) {
  inboxes_.reserve(num_pes);
  for (int i = 0; i < num_pes; ++i) inboxes_.push_back(std::make_unique<inbox>());
}

void local_world::deliver(int dest, message&& m, const std::shared_ptr<send_confirmations>& confirm) {
  auto& box = *inboxes_[dest];
  if (confirm) confirm->pending.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(box.mutex);
  box.queue.push_back(std::move(m));
  if (confirm) box.confirms.push_back(confirm);
  // Dekker with nap: this adds to pending then reads napping; nap sets napping then reads pending
  // (all sequentially consistent), so a PE about to nap either sees the message or is woken.
  box.pending.fetch_add(1);
  if (box.napping.load()) box.arrived.notify_one();
}

void local_world::nap(int pe, std::chrono::nanoseconds longest) {
  if constexpr (simulated_build) {
    // A simulated job's waits pass simulated time (core/clock.hpp), never the host's.
    sleep_for(longest);
    return;
  }
  // A timed wait on the host's clock: the local backend and PE threads never run simulated.
  auto& box = *inboxes_[pe];
  box.napping.store(true);
  {
    std::unique_lock lock(box.mutex);
    box.arrived.wait_for(lock, longest, [&] { return box.pending.load() > 0 || aborted(); });
  }
  box.napping.store(false);
}

std::size_t local_world::drain(int pe, std::vector<message>& sink) {
  auto& box = *inboxes_[pe];
  if (box.pending.load(std::memory_order_acquire) == 0) return 0;
  std::lock_guard lock(box.mutex);
  const std::size_t n = box.queue.size();
  if (sink.empty()) {
    sink.swap(box.queue);
  } else {
    for (auto& m : box.queue) sink.push_back(std::move(m));
    box.queue.clear();
  }
  box.pending.store(0, std::memory_order_relaxed);
  // In this PE's hands from here: the poll that drained them hands them over.
  for (const auto& confirm : box.confirms) confirm->pending.fetch_sub(1, std::memory_order_release);
  box.confirms.clear();
  return n;
}

void local_world::fail(int pe, std::string what) {
  {
    std::lock_guard lock(failure_mutex_);
    if (!first_failure_) first_failure_.emplace(pe, std::move(what));
  }
  aborted_.store(true, std::memory_order_release);
}

std::optional<std::pair<int, std::string>> local_world::first_failure() const {
  std::lock_guard lock(failure_mutex_);
  return first_failure_;
}

std::shared_ptr<local_group_state> local_world::group(std::uint64_t id) {
  std::lock_guard lock(groups_mutex_);
  auto& g = groups_[id];
  if (!g) g = std::make_shared<local_group_state>(size());
  return g;
}

std::unique_ptr<collective_group> make_local_group(std::shared_ptr<local_group_state> state) {
  return std::make_unique<local_group>(std::move(state));
}

}  // namespace transit::detail
