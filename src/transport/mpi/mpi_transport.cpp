#include "mpi_transport.hpp"

#include "mpi_comm_thread.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "transit/detail/core/backoff.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "core/simulated_costs.hpp"
#include "core/wire_error.hpp"

namespace transit::detail {

namespace {

constexpr int data_tag = 1;
// Pieces of a large message, after its announcement: a tag per sending lane, so that the pieces
// of two lanes of one rank to one PE never match each other's receives.
constexpr int piece_tag(int source_lane) noexcept { return source_lane == 0 ? 2 : 4096 + source_lane; }
constexpr std::uint32_t announces_pieces = 1;
// The sending PE's lane (rank_lanes) in a prefix's flags, bits 8 to 15.
constexpr int lane_shift = 8;
constexpr int max_lanes = 256;
int source_lane_of(std::uint32_t flags) noexcept { return static_cast<int>((flags >> lane_shift) & (max_lanes - 1)); }
// The receiving PE's lane, bits 16 to 23: the communication thread receives for every lane.
constexpr int destination_lane_shift = 16;
// Every flag a prefix may carry; any other bit set is a corrupt prefix.
constexpr std::uint32_t known_flags = announces_pieces | std::uint32_t{max_lanes - 1} << lane_shift |
                                      std::uint32_t{max_lanes - 1} << destination_lane_shift;
// The receiver named in reports of corrupt messages (core/wire_error.hpp).
constexpr std::string_view receiver = "mpi transport";

}  // namespace

// What precedes every message's payload on the wire (declared in the header for
// receive_announced's signature).
struct wire_prefix {
  std::uint32_t channel;
  std::uint32_t flags;
  std::uint64_t payload_bytes;
};
static_assert(sizeof(wire_prefix) <= message_buffer::prefix_bytes);

namespace {

MPI_Datatype mpi_type(scalar_type t) {
  switch (t) {
    case scalar_type::i64: return MPI_INT64_T;
    case scalar_type::u64: return MPI_UINT64_T;
    case scalar_type::f64: return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(reduce_op op) {
  switch (op) {
    case reduce_op::sum: return MPI_SUM;
    case reduce_op::min: return MPI_MIN;
    case reduce_op::max: return MPI_MAX;
  }
  return MPI_OP_NULL;
}

class mpi_group final : public collective_group, public collective_requests {
 public:
  explicit mpi_group(mpi_transport& net) : net_(net) {
    comm_ = duplicate_communicator(net.comm());
    net_.add_group(this);
  }
  // A collective still in flight here belongs to an endpoint destroyed by a failure (a PE that
  // left, an exception unwinding): it may never complete, so it is not waited for. MPI frees the
  // communicator once pending operations on it complete; the job is ending anyway.
  ~mpi_group() override {
    net_.remove_group(this);
    MPI_Comm_free(&comm_);
  }
  std::span<MPI_Request> requests() noexcept override { return {&request_, 1}; }
  void start_allreduce(void* values, int count, scalar_type type, reduce_op op) override {
    mpi_check(MPI_Iallreduce(MPI_IN_PLACE, values, count, mpi_type(type), mpi_op(op), comm_, &request_),
              "MPI_Iallreduce");
  }
  void start_barrier() override { mpi_check(MPI_Ibarrier(comm_, &request_), "MPI_Ibarrier"); }
  bool test() override {
    int done = 0;
    mpi_check(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }

 private:
  mpi_transport& net_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

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

// Collectives on point-to-point messages. SMPI 3.32 implements MPI_Iallreduce as an all-to-all (2(P-1) requests per rank, P^2 messages)
// and MPI_Ibarrier through rank 0, and every MPI_Test of one tests each of its requests: at 256
// simulated ranks a histogram did not finish in 5 minutes, most of it in these collectives. So a
// SimGrid build runs its own on point-to-point messages: recursive doubling over the largest
// power of two p2 <= P (ranks from p2 up first fold into rank - p2 and get the result back from
// it), log2(P) + 2 messages per rank. Every rank combines its values with its partner's the same
// way (a op b == b op a, also for doubles), so all end with the same bits. One collective per
// group at a time; a group's messages between two ranks keep their order (MPI does not let
// messages of one source and tag overtake), so a fast rank's next collective cannot mix in.
// A group is a tag of the transport's communicator, not a communicator of its own: SMPI builds
// every new communicator with a ring allgather (P^2 messages; 16 M at 4096 ranks). The
// communication thread (comm_thread_hub) runs its rank's collectives on these too: it cannot wait
// in a blocking MPI_Comm_dup for a group while its rank's PE threads need their messages.
class p2p_group final : public collective_group, public collective_requests {
 public:
  p2p_group(mpi_transport& net, int tag) : net_(net), comm_(net.comm()), tag_(tag) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    while (p2_ * 2 <= size_) p2_ *= 2;
    net_.add_group(this);
  }
  ~p2p_group() override {
    net_.remove_group(this);
    for (auto& r : requests_) {
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    }
  }
  std::span<MPI_Request> requests() noexcept override { return requests_; }
  void start_allreduce(void* values, int count, scalar_type type, reduce_op op) override {
    start(static_cast<std::uint64_t*>(values), count, type, op);
  }
  void start_barrier() override { start(nullptr, 0, scalar_type::u64, reduce_op::sum); }
  bool test() override {
    for (;;) {
      if (step_ == done) return true;
      int complete = 0;
      mpi_check(MPI_Testall(2, requests_, &complete, MPI_STATUSES_IGNORE), "MPI_Testall");
      if (!complete) return false;
      if (receives_values()) {
        for (int i = 0; i < count_; ++i) values_[i] = combine(values_[i], incoming_[i], type_, op_);
      }
      ++step_;
      post_step();
    }
  }

 private:
  static constexpr int done = 1 << 30;
  // Steps: 0 = fold in (ranks >= p2 send, ranks < P - p2 receive), 1..log2(p2) = exchange with
  // rank ^ 2^(step-1) below p2, then the result back to ranks >= p2 (a copy, not combined).
  int rounds() const noexcept {
    int r = 0;
    while ((1 << r) < p2_) ++r;
    return r;
  }
  bool receives_values() const noexcept { return step_ <= rounds() && !(rank_ >= p2_ && step_ == 0); }
  void start(std::uint64_t* values, int count, scalar_type type, reduce_op op) {
    TRANSIT_ASSERT(step_ == done || step_ == idle, "one collective per group at a time");
    values_ = values;
    count_ = count;
    type_ = type;
    op_ = op;
    incoming_.assign(static_cast<std::size_t>(count), 0);
    outgoing_.assign(static_cast<std::size_t>(count), 0);
    step_ = 0;
    post_step();
  }
  // Posts this rank's messages of step_ (none for some ranks at some steps), or ends.
  void post_step() {
    const int last = rounds() + 1;
    for (; step_ <= last; ++step_) {
      int send_to = -1, receive_from = -1;
      bool result = false;  // the message carries the final values (copied, not combined)
      if (step_ == 0) {
        if (rank_ >= p2_) send_to = rank_ - p2_;
        if (rank_ + p2_ < size_) receive_from = rank_ + p2_;
      } else if (step_ <= rounds()) {
        if (rank_ < p2_) send_to = receive_from = rank_ ^ (1 << (step_ - 1));
      } else {
        if (rank_ + p2_ < size_) send_to = rank_ + p2_;
        if (rank_ >= p2_) {
          receive_from = rank_ - p2_;
          result = true;
        }
      }
      if (send_to < 0 && receive_from < 0) continue;
      requests_[0] = requests_[1] = MPI_REQUEST_NULL;
      if (send_to >= 0) {
        std::copy(values_, values_ + count_, outgoing_.begin());  // values_ changes before the send completes
        mpi_check(MPI_Isend(outgoing_.data(), count_, MPI_UINT64_T, send_to, tag_, comm_, &requests_[0]), "MPI_Isend");
      }
      if (receive_from >= 0) {
        // The result goes straight into values_; a partial sum waits in incoming_ to be combined.
        std::uint64_t* into = result ? values_ : incoming_.data();
        mpi_check(MPI_Irecv(into, count_, MPI_UINT64_T, receive_from, tag_, comm_, &requests_[1]), "MPI_Irecv");
      }
      return;
    }
    step_ = done;
    // A group lives as long as its streamer; an allreduce of P values (a streamer's link counts)
    // must not keep 16 P bytes per rank after it (P^2 for a simulated job in one process).
    std::vector<std::uint64_t>().swap(incoming_);
    std::vector<std::uint64_t>().swap(outgoing_);
  }

  static constexpr int idle = -1;
  mpi_transport& net_;
  MPI_Comm comm_;
  int tag_;
  int rank_ = 0, size_ = 1, p2_ = 1;
  int step_ = idle;
  std::uint64_t* values_ = nullptr;
  int count_ = 0;
  scalar_type type_ = scalar_type::u64;
  reduce_op op_ = reduce_op::sum;
  std::vector<std::uint64_t> incoming_, outgoing_;
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
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

MPI_Comm duplicate_communicator(MPI_Comm parent) {
  MPI_Comm comm = MPI_COMM_NULL;
  mpi_check(MPI_Comm_dup(parent, &comm), "MPI_Comm_dup");
  mpi_check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return comm;
}

void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

std::size_t max_message_bytes_from_environment() {
  const char* text = std::getenv("TRANSIT_MAX_MESSAGE_BYTES");
  if (text == nullptr || *text == '\0') return mpi_transport::default_max_message_bytes;
  constexpr std::size_t lowest = 64, highest = std::size_t{INT_MAX} - 64;
  std::size_t value = 0;
  const std::string_view view(text);
  const auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (ec != std::errc() || end != view.data() + view.size() || value < lowest || value > highest)
    throw_invalid("TRANSIT_MAX_MESSAGE_BYTES", view,
                  concat("an integer from ", lowest, " to ", highest, " (bytes sent as one MPI message)"));
  return value;
}

mpi_transport::receive_mode mpi_transport::receive_mode_from_environment() {
  const char* text = std::getenv("TRANSIT_MPI_RECEIVE");
  if (text == nullptr || *text == '\0') {
#ifdef TRANSIT_SIMGRID
    return receive_mode::posted;
#else
    return receive_mode::probe;
#endif
  }
  const std::string_view view(text);
  if (view == "probe") return receive_mode::probe;
  if (view == "posted") return receive_mode::posted;
  throw_invalid("TRANSIT_MPI_RECEIVE", view,
                "'probe' (probe, then receive each message at its size) or 'posted' (receives posted ahead)");
}

mpi_transport::mpi_transport(MPI_Comm parent, receive_mode mode)
    : max_message_bytes_(max_message_bytes_from_environment()),
      mode_(mode),
      whole_message_bytes_(mode == receive_mode::posted ? std::min(posted_receive_bytes, max_message_bytes_)
                                                        : max_message_bytes_) {
  comm_ = duplicate_communicator(parent);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  mpi_rank_ = rank_;
  start_receiving();
}

mpi_transport::mpi_transport(std::shared_ptr<rank_lanes> lanes, int lane, receive_mode mode)
    : max_message_bytes_(max_message_bytes_from_environment()),
      mode_(mode),
      whole_message_bytes_(mode == receive_mode::posted ? std::min(posted_receive_bytes, max_message_bytes_)
                                                        : max_message_bytes_) {
  TRANSIT_ASSERT(lanes != nullptr && lane >= 0 && lane < lanes->lanes(), "a lane of the rank");
  lanes_ = std::move(lanes);
  lane_ = lane;
  lane_count_ = lanes_->lanes();
  mpi_rank_ = lanes_->mpi_rank();
  comm_ = lanes_->comm(lane);
  rank_ = mpi_rank_ * lane_count_ + lane;
  size_ = lanes_->mpi_size() * lane_count_;
  start_receiving();
}

mpi_transport::mpi_transport(MPI_Comm parent, int lanes, std::function<void(int)> sent, receive_mode mode)
    : max_message_bytes_(max_message_bytes_from_environment()),
      mode_(mode),
      whole_message_bytes_(mode == receive_mode::posted ? std::min(posted_receive_bytes, max_message_bytes_)
                                                        : max_message_bytes_) {
  TRANSIT_ASSERT(lanes >= 1 && lanes <= max_lanes, "lanes fit a prefix's 8 bits");
  comm_ = duplicate_communicator(parent);
  MPI_Comm_rank(comm_, &mpi_rank_);
  MPI_Comm_size(comm_, &size_);
  lane_count_ = lanes;
  rank_ = mpi_rank_ * lanes;  // its first PE, for reports; it sends only to other ranks
  size_ *= lanes;
  sent_ = std::move(sent);
  start_receiving();
}

int mpi_transport::destination_lane(const message& m) noexcept {
  wire_prefix prefix;
  std::memcpy(&prefix, m.data.payload() - message_buffer::prefix_bytes, sizeof prefix);
  return static_cast<int>((prefix.flags >> destination_lane_shift) & (max_lanes - 1));
}

std::unique_ptr<collective_group> mpi_transport::make_point_to_point_group(int tag) {
  TRANSIT_ASSERT(tag != data_tag && tag != piece_tag(0) && (tag < 4096 || tag >= 4096 + max_lanes),
                 "a group's tag is none of the transport's own");
  return std::make_unique<p2p_group>(*this, tag);
}

void mpi_transport::start_receiving() {
  if (mode_ == receive_mode::posted) {
    posted_.resize(posted_receives);
    for (std::size_t slot = 0; slot < posted_.size(); ++slot) post_receive(slot);
  }
}

void mpi_transport::post_receive(std::size_t slot) {
  posted_receive& r = posted_[slot];
  r.buffer = pool_.take(whole_message_bytes_ - message_buffer::prefix_bytes);
  r.complete = false;
  mpi_check(MPI_Irecv(r.buffer.wire(), static_cast<int>(whole_message_bytes_), MPI_BYTE, MPI_ANY_SOURCE, data_tag,
                      comm_, &r.request),
            "MPI_Irecv");
}

mpi_transport::~mpi_transport() {
  // Sends still in flight here are the last control messages of destroyed endpoints (a streamer
  // tells its peers it left), or the items of a program that dropped a streamer mid-step. Each PE
  // completes its own sends while receiving (and dropping) what still arrives, then joins a
  // non-blocking barrier and keeps receiving until it completes: once it has, every PE's sends
  // are matched, so no synchronous send waits for a peer that already left. Not while an
  // exception unwinds this PE (the job is failing: its report must not wait for peers). A job
  // whose sends can never complete gives up after 2 s rather than hang.
  const auto give_up = steady_clock::now() + std::chrono::seconds(2);
  std::vector<message> dropped;
  const auto drain_until = [&](auto&& done) {
    backoff pause;
    while (!done() && steady_clock::now() < give_up) {
      dropped.clear();
      if (poll(dropped, 64) > 0) {
        pause.reset();
      } else {
        pause.idle(pending_sends() > 0);
      }
    }
  };
  drain_until([&] { return in_flight_.empty() && backlogged_ == 0; });
  MPI_Request everyone_drained = MPI_REQUEST_NULL;
  if (lanes_ && std::uncaught_exceptions() == 0) {
    // Every PE of every rank: the lanes share their communicators, so one lane's barrier alone
    // would not say that the other lanes' sends to it were matched.
    lane_group everyone(lanes_->teardown_group(), lane_count_);
    everyone.start_barrier();
    drain_until([&] { return everyone.test(); });
  } else if (std::uncaught_exceptions() == 0 && MPI_Ibarrier(comm_, &everyone_drained) == MPI_SUCCESS) {
    // A barrier that does not complete in time is left to MPI (a collective's request cannot be
    // freed); the job is failing then.
    drain_until([&] {
      int complete = 0;
      MPI_Test(&everyone_drained, &complete, MPI_STATUS_IGNORE);
      return complete != 0;
    });
  }
  if (!in_flight_.empty() || backlogged_ > 0) {
    std::fprintf(stderr, "transit: PE %d: %zu messages were never received (an endpoint was dropped mid-step)\n",
                 rank_, in_flight_.size() + backlogged_);
    for (auto& r : requests_) MPI_Request_free(&r);
  }
  for (auto& r : posted_) {
    if (r.request == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r.request);
    MPI_Request_free(&r.request);
  }
  for (const int source : arriving_sources_) {
    for (auto& a : arriving_[source]) {
      for (auto& r : a.pieces) {
        if (r == MPI_REQUEST_NULL) continue;
        MPI_Cancel(&r);
        MPI_Request_free(&r);
      }
    }
  }
  if (!lanes_) MPI_Comm_free(&comm_);  // with lanes, rank_lanes frees the lanes' communicators
}

void mpi_transport::end_job(const std::string& why) {
  std::fprintf(stderr, "transit: PE %d: %s\n", rank_, why.c_str());
  std::fflush(stderr);
  abort_job();
}

void abort_job() {
  std::fflush(stdout);
  std::fflush(stderr);
#ifdef TRANSIT_SIMGRID
  std::_Exit(1);
#else
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; keep [[noreturn]] honest if it ever did
#endif
}

void mpi_transport::send(int dest, std::uint32_t channel, message_buffer&& data) {
  send_from(lane_, dest, channel, std::move(data));
}

void mpi_transport::send_from(int source_lane, int dest, std::uint32_t channel, message_buffer&& data) {
  TRANSIT_ASSERT(dest >= 0 && dest < size_, "send to a rank outside the communicator");
#ifdef TRANSIT_SIMGRID
  charge_messages(1);  // modelled simulation: transit's own cost of sending a message (o_s)
#endif
  const std::uint32_t lanes = static_cast<std::uint32_t>(source_lane) << lane_shift |
                              static_cast<std::uint32_t>(dest % lane_count_) << destination_lane_shift;
  const wire_prefix prefix{channel, lanes, data.size()};
  std::memcpy(data.wire(), &prefix, sizeof prefix);
  if (dest == rank_) {
    to_self_.push_back(message{rank_, channel, std::move(data)});
    return;
  }
  if (lanes_ && mpi_rank_of(dest) == mpi_rank_) {  // a PE thread of this rank: a pointer hand-off
    lanes_->inboxes().deliver(dest % lane_count_, message{rank_, channel, std::move(data)});
    return;
  }
  ++network_messages_;
  if (!backlog_.empty(dest) || flow_[dest].unacked >= max_unacked) {
    backlog_[dest].push_back(backlogged_message{std::move(data), source_lane});
    ++backlogged_;
    return;
  }
  post(dest, std::move(data), source_lane);
}

void mpi_transport::post(int dest, message_buffer&& data, int source_lane) {
  flow_state& flow = flow_[dest];
  flow.bytes_since_sync += data.wire_size();
  const bool synchronous = ++flow.since_sync >= sync_interval || flow.bytes_since_sync >= sync_bytes;
  if (synchronous) {
    flow.since_sync = 0;
    flow.bytes_since_sync = 0;
    ++flow.unacked;
  }
  if (data.wire_size() <= whole_message_bytes_) {
    const void* bytes = data.wire();
    const std::size_t size = data.wire_size();
    post_one(dest, bytes, size, data_tag, synchronous, in_flight{std::move(data), nullptr, dest, synchronous, source_lane});
    return;
  }
  // Too large for one MPI message (or a posted receive): an announcement with the total size,
  // then the pieces.
  wire_prefix prefix;
  std::memcpy(&prefix, data.wire(), sizeof prefix);
  prefix.flags |= announces_pieces;
  message_buffer announcement = pool_.take(0);
  std::memcpy(announcement.wire(), &prefix, sizeof prefix);
  const void* header = announcement.wire();
  post_one(dest, header, message_buffer::prefix_bytes, data_tag, synchronous,
           in_flight{std::move(announcement), nullptr, dest, synchronous});
  auto whole = std::make_shared<message_buffer>(std::move(data));
  const std::byte* at = whole->payload();
  for (std::size_t left = whole->size(); left > 0;) {
    const std::size_t piece = std::min(left, max_message_bytes_);
    // The lane is told when the last piece has left (pieces complete in about the order posted).
    const int tell = left == piece ? source_lane : -1;
    post_one(dest, at, piece, piece_tag(source_lane), false, in_flight{message_buffer(), whole, dest, false, tell});
    at += piece;
    left -= piece;
  }
}

void mpi_transport::post_one(int dest, const void* bytes, std::size_t size, int tag, bool synchronous,
                             in_flight&& entry) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int count = static_cast<int>(size);  // size <= max_message_bytes_ < INT_MAX
  if (synchronous) {
    mpi_check(MPI_Issend(bytes, count, MPI_BYTE, mpi_rank_of(dest), tag, comm_to(dest), &request), "MPI_Issend");
  } else {
    mpi_check(MPI_Isend(bytes, count, MPI_BYTE, mpi_rank_of(dest), tag, comm_to(dest), &request), "MPI_Isend");
  }
  requests_.push_back(request);
  in_flight_.push_back(std::move(entry));
}

void mpi_transport::complete_sends() {
  if (!requests_.empty()) {
    completed_.resize(requests_.size());
    int count = 0;
    mpi_check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, completed_.data(),
                           MPI_STATUSES_IGNORE),
              "MPI_Testsome");
    if (count != MPI_UNDEFINED && count > 0) {
      // Remove the completed entries (their requests are now MPI_REQUEST_NULL) from the highest
      // index down, each replaced by the last entry: O(completed), where compacting the whole
      // list cost O(pending) per poll. The order of the list carries no meaning.
      std::sort(completed_.begin(), completed_.begin() + count);
      for (int k = count; k-- > 0;) send_completed(static_cast<std::size_t>(completed_[k]));
    }
  }
  if (backlogged_ == 0) return;
  backlog_.for_each([&](int dest, std::deque<backlogged_message>& queue) {
    const flow_state& flow = flow_[dest];
    while (!queue.empty() && flow.unacked < max_unacked) {
      post(dest, std::move(queue.front().data), queue.front().source_lane);
      queue.pop_front();
      --backlogged_;
    }
  });
}

void mpi_transport::send_completed(std::size_t i) {
  in_flight& done = in_flight_[i];
  if (done.synchronous) --flow_[done.dest].unacked;
  if (sent_ && done.source_lane >= 0) sent_(done.source_lane);
  pool_.give(std::move(done.data));
  done.piece_of.reset();  // the last piece to complete frees the large buffer
  if (const std::size_t last = requests_.size() - 1; i != last) {
    requests_[i] = requests_[last];
    in_flight_[i] = std::move(in_flight_[last]);
  }
  requests_.pop_back();
  in_flight_.pop_back();
}

std::size_t mpi_transport::poll(std::vector<message>& sink, std::size_t max) {
  complete_sends();
  std::size_t received = 0;
  if (!to_self_.empty()) {
    received = to_self_.size();
    for (auto& m : to_self_) sink.push_back(std::move(m));
    to_self_.clear();
  }
  if (lanes_) received += lanes_->inboxes().drain(lane_, sink);
  if (!arriving_sources_.empty()) received += hand_over_arrivals(sink);
  if (received < max)
    received += mode_ == receive_mode::posted ? receive_posted(sink, max - received) : receive_probed(sink, max - received);
#ifdef TRANSIT_SIMGRID
  charge_messages(received);  // modelled simulation: transit's own cost of receiving them (o_d)
#endif
  return received;
}

std::size_t mpi_transport::receive_posted(std::vector<message>& sink, std::size_t max) {
  std::size_t received = 0;
  while (received < max) {
    posted_receive& slot = posted_[next_posted_];
    if (!slot.complete) {
      int flag = 0;
      mpi_check(MPI_Test(&slot.request, &flag, &slot.status), "MPI_Test");
      if (!flag) break;
    }
    int bytes = 0;
    MPI_Get_count(&slot.status, MPI_BYTE, &bytes);
    const int source = slot.status.MPI_SOURCE;
    message_buffer data = std::move(slot.buffer);
    post_receive(next_posted_);
    next_posted_ = (next_posted_ + 1) % posted_.size();
    received += take_arrival(source, bytes, std::move(data), sink) ? 1 : 0;
  }
  return received;
}

std::size_t mpi_transport::receive_probed(std::vector<message>& sink, std::size_t max) {
  std::size_t received = 0;
  while (received < max) {
    int flag = 0;
    MPI_Status status;
#ifdef TRANSIT_SIMGRID
    // SMPI has no matched probes. A probe and then a receive from the probed source get the same
    // message: MPI does not let messages of one source and tag overtake, and only this PE's
    // thread receives on comm_ (SMPI runs MPI_THREAD_SINGLE).
    mpi_check(MPI_Iprobe(MPI_ANY_SOURCE, data_tag, comm_, &flag, &status), "MPI_Iprobe");
#else
    MPI_Message handle;
    mpi_check(MPI_Improbe(MPI_ANY_SOURCE, data_tag, comm_, &flag, &handle, &status), "MPI_Improbe");
#endif
    if (!flag) break;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    // A message shorter than its prefix still fits the prefix's room (take_arrival reports it).
    const auto wire_bytes = static_cast<std::size_t>(bytes);
    message_buffer data = pool_.take(wire_bytes - std::min(wire_bytes, message_buffer::prefix_bytes));
#ifdef TRANSIT_SIMGRID
    mpi_check(MPI_Recv(data.wire(), bytes, MPI_BYTE, status.MPI_SOURCE, data_tag, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv");
#else
    mpi_check(MPI_Mrecv(data.wire(), bytes, MPI_BYTE, &handle, MPI_STATUS_IGNORE), "MPI_Mrecv");
#endif
    received += take_arrival(status.MPI_SOURCE, bytes, std::move(data), sink) ? 1 : 0;
  }
  return received;
}

bool mpi_transport::take_arrival(int source_rank, int bytes, message_buffer&& data, std::vector<message>& sink) {
  // The prefix is checked before it is used (core/wire_error.hpp); until its lane bits are known
  // good, the sender is named by its rank's first PE.
  const int first_pe = source_rank * lane_count_;
  const auto wire_bytes = static_cast<std::uint64_t>(bytes);
  if (wire_bytes < message_buffer::prefix_bytes)
    corrupt_message(receiver, "message", first_pe,
                    concat(bytes, " bytes, shorter than the ", message_buffer::prefix_bytes, "-byte wire prefix"));
  wire_prefix prefix;
  std::memcpy(&prefix, data.wire(), sizeof prefix);
  if ((prefix.flags & ~known_flags) != 0)
    corrupt_message(receiver, "wire prefix", first_pe, concat("unknown flag bits ", prefix.flags & ~known_flags));
  if (source_lane_of(prefix.flags) >= lane_count_)
    corrupt_message(receiver, "wire prefix", first_pe,
                    concat("its sender's lane is ", source_lane_of(prefix.flags), ", a rank runs ", lane_count_,
                           " PE thread(s)"));
  const int source = first_pe + source_lane_of(prefix.flags);  // the sending PE
  if (prefix.flags & announces_pieces) {
    if (wire_bytes != message_buffer::prefix_bytes)
      corrupt_message(receiver, "announcement of a large message", source,
                      concat(bytes, " bytes, expected ", message_buffer::prefix_bytes));
    if (prefix.payload_bytes == 0)
      corrupt_message(receiver, "announcement of a large message", source, "it announces 0 bytes");
    pool_.give(std::move(data));
    receive_announced(source, prefix);
    return false;
  }
  if (prefix.payload_bytes != wire_bytes - message_buffer::prefix_bytes)
    corrupt_message(receiver, concat("message on channel ", prefix.channel), source,
                    concat("its prefix says ", prefix.payload_bytes, " payload bytes, ",
                           wire_bytes - message_buffer::prefix_bytes, " arrived"));
  data.set_size(prefix.payload_bytes);
  if (!arriving_.empty(source)) {  // behind a large message still arriving: keep the order
    arriving_[source].push_back(arriving{message{source, prefix.channel, std::move(data)}, {}});
    return false;
  }
  sink.push_back(message{source, prefix.channel, std::move(data)});
  return true;
}

void mpi_transport::receive_announced(int source, const wire_prefix& announced) {
  const std::uint64_t payload_bytes = announced.payload_bytes;
  arriving a{message{source, announced.channel, pool_.take(payload_bytes)}, {}};
  a.m.data.set_size(payload_bytes);
  // The message keeps its prefix, as a whole one does: the communication thread reads the
  // destination lane there (destination_lane).
  wire_prefix kept = announced;
  kept.flags &= ~announces_pieces;
  std::memcpy(a.m.data.wire(), &kept, sizeof kept);
  std::byte* at = a.m.data.payload();
  for (std::uint64_t left = payload_bytes; left > 0;) {
    const std::size_t piece = std::min<std::uint64_t>(left, max_message_bytes_);
    MPI_Request request = MPI_REQUEST_NULL;
    mpi_check(MPI_Irecv(at, static_cast<int>(piece), MPI_BYTE, mpi_rank_of(source), piece_tag(source % lane_count_),
                        comm_, &request),
              "MPI_Irecv");
    a.pieces.push_back(request);
    at += piece;
    left -= piece;
  }
  if (arriving_.empty(source)) arriving_sources_.push_back(source);
  arriving_[source].push_back(std::move(a));
}

// Hands over, per source, the large messages whose pieces have all arrived and the messages
// queued behind them, in order; stops at a large message still arriving.
std::size_t mpi_transport::hand_over_arrivals(std::vector<message>& sink) {
  std::size_t handed = 0;
  std::size_t kept = 0;
  for (const int source : arriving_sources_) {
    auto& queue = arriving_[source];
    while (!queue.empty()) {
      auto& front = queue.front();
      if (!front.pieces.empty()) {
        int done = 0;
        mpi_check(MPI_Testall(static_cast<int>(front.pieces.size()), front.pieces.data(), &done,
                              MPI_STATUSES_IGNORE),
                  "MPI_Testall");
        if (!done) break;
        front.pieces.clear();
      }
      sink.push_back(std::move(front.m));
      queue.pop_front();
      ++handed;
    }
    if (!queue.empty()) arriving_sources_[kept++] = source;
  }
  arriving_sources_.resize(kept);
  return handed;
}

bool mpi_transport::wait_for_activity() {
#ifndef TRANSIT_SIMGRID
  return false;
#else
  if (mode_ != receive_mode::posted || polling_held() || !to_self_.empty()) return false;
  if (posted_[next_posted_].complete) return false;  // a message is in already: poll it
  waited_.clear();
  waited_entries_.clear();
  const auto wait_for = [&](MPI_Request& r, waited_entry::kind what, std::size_t index) {
    if (r == MPI_REQUEST_NULL) return;
    waited_.push_back(r);
    waited_entries_.push_back(waited_entry{what, index, &r});
  };
  // The oldest posted receive only: messages are handled in the order posted, and a later one
  // cannot complete before the oldest is matched (they match in order).
  wait_for(posted_[next_posted_].request, waited_entry::receive, next_posted_);
  for (std::size_t i = 0; i < requests_.size(); ++i) wait_for(requests_[i], waited_entry::send, i);
  for (const int source : arriving_sources_) {
    for (auto& a : arriving_[source])
      for (auto& piece : a.pieces) wait_for(piece, waited_entry::piece, 0);
  }
  for (collective_requests* g : live_groups_)
    for (MPI_Request& r : g->requests()) wait_for(r, waited_entry::collective, 0);
  int index = MPI_UNDEFINED;
  MPI_Status status;
  mpi_check(MPI_Waitany(static_cast<int>(waited_.size()), waited_.data(), &index, &status), "MPI_Waitany");
  if (index == MPI_UNDEFINED) return false;
  // MPI_Waitany completed and freed that request: record it where it belongs.
  const waited_entry& e = waited_entries_[static_cast<std::size_t>(index)];
  *e.where = MPI_REQUEST_NULL;
  switch (e.what) {
    case waited_entry::receive:
      posted_[e.index].complete = true;
      posted_[e.index].status = status;
      break;
    case waited_entry::send: send_completed(e.index); break;
    case waited_entry::piece:       // MPI_Testall counts a null request complete
    case waited_entry::collective: break;
  }
  return true;
#endif
}

std::unique_ptr<collective_group> mpi_transport::make_group() {
  if (lanes_) return std::make_unique<lane_group>(lanes_->group(lane_groups_made_++), lane_count_);
#ifdef TRANSIT_SIMGRID
  // Collective: every rank makes its groups in the same order, so they agree on the tags.
  return std::make_unique<p2p_group>(*this, first_group_tag + groups_made_++);
#else
  return std::make_unique<mpi_group>(*this);
#endif
}

}  // namespace transit::detail

namespace transit::detail {

mpi_access& mpi_of(transport& net) {
  mpi_access* mpi = net.mpi();
  TRANSIT_ASSERT(mpi != nullptr, "only the mpi backend answers MPI questions");
  return *mpi;
}

}  // namespace transit::detail
