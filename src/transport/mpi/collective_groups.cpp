#include "transport/mpi/collective_groups.hpp"

#include <cstdint>
#include <vector>

#include "core/simulated_costs.hpp"
#include "transit/detail/core/error.hpp"
#include "transport/mpi/communicator.hpp"
#include "transport/mpi/transport.hpp"

namespace transit::detail {

namespace {

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

// Collectives on point-to-point messages (mpi_transport::make_group says when: under SimGrid, and
// on real MPI while every rank has a CPU of its own). SMPI 3.32 implements MPI_Iallreduce as an all-to-all (2(P-1) requests per rank, P^2 messages)
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
    net_.release_group_tag(tag_);
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
      if constexpr (simulated_build) {
        // As the mpi transport's posted receives (transport.cpp, receive_posted): SimGrid 3.32
        // keeps a receive that MPI_Test completes in its rank's list of activities for good, and
        // scans that list at the end of every wait. The message's last word says it has landed;
        // MPI_Wait then completes it at once. The send is still completed by MPI_Testall (a wait
        // for it could block on a partner that waits for this rank), so each step leaves one entry.
        if (requests_[1] != MPI_REQUEST_NULL) {
          if (incoming_[static_cast<std::size_t>(count_)] != landed) return false;
          mpi_check(MPI_Wait(&requests_[1], MPI_STATUS_IGNORE), "MPI_Wait");
        }
      }
      mpi_check(MPI_Testall(2, requests_, &complete, MPI_STATUSES_IGNORE), "MPI_Testall");
      if (!complete) return false;
      if (receiving_ && !receives_values()) {  // the result, copied
        std::copy(incoming_.begin(), incoming_.begin() + count_, values_);
      }
      // Modelled simulation: SMPI charges no receiver's overhead for a send that is not detached.
      if (receiving_) charge_receive_overhead(static_cast<std::size_t>(count_) * sizeof(std::uint64_t));
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
    incoming_.assign(static_cast<std::size_t>(count + marker_words), 0);
    outgoing_.assign(static_cast<std::size_t>(count + marker_words), landed);
    step_ = 0;
    post_step();
  }
  // Posts this rank's messages of step_ (none for some ranks at some steps), or ends.
  void post_step() {
    const int last = rounds() + 1;
    for (; step_ <= last; ++step_) {
      int send_to = -1, receive_from = -1;
      if (step_ == 0) {
        if (rank_ >= p2_) send_to = rank_ - p2_;
        if (rank_ + p2_ < size_) receive_from = rank_ + p2_;
      } else if (step_ <= rounds()) {
        if (rank_ < p2_) send_to = receive_from = rank_ ^ (1 << (step_ - 1));
      } else {
        if (rank_ + p2_ < size_) send_to = rank_ + p2_;
        if (rank_ >= p2_) receive_from = rank_ - p2_;  // the final values (copied, not combined)
      }
      if (send_to < 0 && receive_from < 0) continue;
      requests_[0] = requests_[1] = MPI_REQUEST_NULL;
      receiving_ = receive_from >= 0;
      if (send_to >= 0) {
        std::copy(values_, values_ + count_, outgoing_.begin());  // values_ changes before the send completes
        mpi_check(MPI_Isend(outgoing_.data(), count_ + marker_words, MPI_UINT64_T, send_to, tag_, comm_, &requests_[0]),
                  "MPI_Isend");
      }
      if (receive_from >= 0) {
        // Into incoming_: a partial sum to combine, or the result to copy (test). Its marker word
        // is cleared: it is not `landed` until the message is in.
        if constexpr (marker_words > 0) incoming_[static_cast<std::size_t>(count_)] = 0;
        mpi_check(MPI_Irecv(incoming_.data(), count_ + marker_words, MPI_UINT64_T, receive_from, tag_, comm_,
                            &requests_[1]),
                  "MPI_Irecv");
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
  // Simulation build: a word after the values, `landed` in every message (test).
  static constexpr int marker_words = simulated_build ? 1 : 0;
  static constexpr std::uint64_t landed = 1;
  mpi_transport& net_;
  MPI_Comm comm_;
  int tag_;
  int rank_ = 0, size_ = 1, p2_ = 1;
  int step_ = idle;
  bool receiving_ = false;  // this step posted a receive
  std::uint64_t* values_ = nullptr;
  int count_ = 0;
  scalar_type type_ = scalar_type::u64;
  reduce_op op_ = reduce_op::sum;
  std::vector<std::uint64_t> incoming_, outgoing_;
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

}  // namespace

std::unique_ptr<collective_group> make_mpi_group(mpi_transport& net) { return std::make_unique<mpi_group>(net); }

std::unique_ptr<collective_group> make_p2p_group(mpi_transport& net, int tag) {
  return std::make_unique<p2p_group>(net, tag);
}

}  // namespace transit::detail
