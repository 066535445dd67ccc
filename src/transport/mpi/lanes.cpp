#include "transport/mpi/lanes.hpp"

#include <algorithm>

#include "transit/detail/core/error.hpp"
#include "transport/mpi/comm_thread.hpp"
#include "transport/mpi/communicator.hpp"
#include "transport/mpi/wire.hpp"

namespace transit::detail {

using namespace mpi_wire;  // NOLINT: this file speaks the wire format

namespace {

// A group of a rank with several PE threads (rank_lanes): each lane's values are combined in the
// process, and the last lane to arrive starts the one MPI collective of the rank; every lane then
// copies the result out. Two slots alternate: a lane starts its next collective only after its
// test() of this one returned true, and every lane arrived in this one before any MPI began, so
// when a lane reaches a slot again every lane has left it.
class lane_group final : public collective_group {
 public:
  lane_group(std::shared_ptr<lane_group_state> state, int lanes) : state_(std::move(state)), lanes_(lanes) {}
  void start_allreduce(void* values, int count, scalar_type type, reduce_op op) override {
    arrive(static_cast<std::uint64_t*>(values), count, type, op, false);
  }
  void start_barrier() override { arrive(nullptr, 0, scalar_type::u64, reduce_op::sum, true); }
  bool test() override;

 private:
  void arrive(std::uint64_t* values, int count, scalar_type type, reduce_op op, bool barrier);
  std::shared_ptr<lane_group_state> state_;
  int lanes_;
  std::uint64_t sequence_ = 0;  // this lane's collectives so far: the slot is sequence_ % 2
  std::uint64_t* values_ = nullptr;
  int count_ = 0;
};

}  // namespace

void lane_group::arrive(std::uint64_t* values, int count, scalar_type type, reduce_op op, bool barrier) {
  std::lock_guard lock(state_->mutex);
  lane_group_state::slot& slot = state_->slots[sequence_ % 2];
  TRANSIT_ASSERT(!slot.started, "one collective per group at a time");
  if (slot.arrived == 0) {
    slot.values.assign(values, values + count);
  } else {
    TRANSIT_ASSERT(slot.values.size() == static_cast<std::size_t>(count), "every lane reduces as many values");
    for (int i = 0; i < count; ++i) slot.values[static_cast<std::size_t>(i)] = combine(slot.values[static_cast<std::size_t>(i)], values[i], type, op);
  }
  values_ = values;
  count_ = count;
  if (++slot.arrived < lanes_) return;
  slot.started = true;
  if (state_->hub != nullptr) {  // the communication thread runs the rank's collective
    state_->hub->start_collective(state_, &slot, barrier, count, type, op);
    return;
  }
  if (barrier) {
    mpi_check(MPI_Ibarrier(state_->comm, &slot.request), "MPI_Ibarrier");
  } else {
    mpi_check(MPI_Iallreduce(MPI_IN_PLACE, slot.values.data(), count, mpi_type(type), mpi_op(op), state_->comm,
                             &slot.request),
              "MPI_Iallreduce");
  }
}

bool lane_group::test() {
  std::lock_guard lock(state_->mutex);
  lane_group_state::slot& slot = state_->slots[sequence_ % 2];
  if (!slot.started) return false;
  if (!slot.done) {
    if (state_->hub != nullptr) return false;  // the communication thread sets done
    int complete = 0;
    mpi_check(MPI_Test(&slot.request, &complete, MPI_STATUS_IGNORE), "MPI_Test");
    if (!complete) return false;
    slot.done = true;
  }
  std::copy_n(slot.values.begin(), count_, values_);
  if (++slot.departed == lanes_) {
    slot.arrived = slot.departed = 0;
    slot.started = slot.done = false;
  }
  ++sequence_;
  return true;
}

rank_lanes::rank_lanes(MPI_Comm parent, int lanes, comm_thread_hub* hub)
    : parent_(parent), lanes_(lanes), hub_(hub), inboxes_(lanes) {
  TRANSIT_ASSERT(lanes >= 1 && lanes <= max_lanes, "lanes fit a prefix's 8 bits");
  MPI_Comm_rank(parent, &mpi_rank_);
  MPI_Comm_size(parent, &mpi_size_);
  if (hub != nullptr) return;
  comms_.assign(static_cast<std::size_t>(lanes), MPI_COMM_NULL);
  for (MPI_Comm& c : comms_) c = duplicate_communicator(parent);
  teardown_ = make_group_state();
}

rank_lanes::~rank_lanes() {
  groups_.clear();
  teardown_.reset();
  for (MPI_Comm& c : comms_) MPI_Comm_free(&c);
}

std::shared_ptr<lane_group_state> rank_lanes::make_group_state() {
  auto state = std::make_shared<lane_group_state>();
  if (hub_ != nullptr) {
    state->hub = hub_;
    state->tag = comm_thread_hub::group_tag(groups_.size());
  } else {
    state->comm = duplicate_communicator(parent_);
  }
  return state;
}

std::shared_ptr<lane_group_state> rank_lanes::group(std::size_t k) {
  std::lock_guard lock(groups_mutex_);
  // Each lane asks for 0, 1, 2... in turn, so a lane asking for k has had k - 1: one more at most.
  while (groups_.size() <= k) groups_.push_back(make_group_state());
  return groups_[k];
}

std::unique_ptr<collective_group> make_lane_group(std::shared_ptr<lane_group_state> state, int lanes) {
  return std::make_unique<lane_group>(std::move(state), lanes);
}

}  // namespace transit::detail
