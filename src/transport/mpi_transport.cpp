#include "mpi_transport.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "transit/core/backoff.hpp"
#include "transit/core/error.hpp"

namespace transit::detail {

namespace {

constexpr int data_tag = 1;

struct wire_prefix {
  std::uint32_t channel;
  std::uint32_t reserved;
  std::uint64_t payload_bytes;
};
static_assert(sizeof(wire_prefix) <= message_buffer::prefix_bytes);

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

class mpi_group final : public collective_group {
 public:
  explicit mpi_group(MPI_Comm parent) {
    mpi_check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
    mpi_check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
  // A collective still in flight here belongs to an endpoint destroyed by a failure (a PE that
  // left, an exception unwinding): it may never complete, so it is not waited for. MPI frees the
  // communicator once pending operations on it complete; the job is ending anyway.
  ~mpi_group() override { MPI_Comm_free(&comm_); }
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
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace

void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

mpi_transport::mpi_transport(MPI_Comm parent) {
  mpi_check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
  mpi_check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  since_sync_.assign(size_, 0);
  unacked_.assign(size_, 0);
  backlog_.resize(size_);
}

mpi_transport::~mpi_transport() {
  // After finished steps every send completes at once. A program that dropped a streamer with
  // items in flight may leave sends no peer will ever match: wait a little while receiving (and
  // dropping) what still arrives, so that peers' sends complete too, then let go rather than hang.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::vector<message> dropped;
  backoff pause;
  while ((!in_flight_.empty() || backlogged_ > 0) && std::chrono::steady_clock::now() < give_up) {
    dropped.clear();
    if (poll(dropped, 64) > 0) {
      pause.reset();
    } else {
      pause.idle();
    }
  }
  if (!in_flight_.empty() || backlogged_ > 0) {
    std::fprintf(stderr, "transit: PE %d: %zu messages were never received (an endpoint was dropped mid-step)\n",
                 rank_, in_flight_.size() + backlogged_);
    for (auto& r : requests_) MPI_Request_free(&r);
  }
  MPI_Comm_free(&comm_);
}

void mpi_transport::end_job(const std::string& why) {
  std::fprintf(stderr, "transit: PE %d: %s\n", rank_, why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; keep [[noreturn]] honest if it ever did
}

void mpi_transport::send(int dest, std::uint32_t channel, message_buffer&& data) {
  TRANSIT_ASSERT(dest >= 0 && dest < size_, "send to a rank outside the communicator");
  const wire_prefix prefix{channel, 0, data.size()};
  std::memcpy(data.wire(), &prefix, sizeof prefix);
  if (dest == rank_) {
    to_self_.push_back(message{rank_, channel, std::move(data)});
    return;
  }
  if (!backlog_[dest].empty() || unacked_[dest] >= max_unacked) {
    backlog_[dest].push_back(std::move(data));
    ++backlogged_;
    return;
  }
  post(dest, std::move(data));
}

void mpi_transport::post(int dest, message_buffer&& data) {
  const bool synchronous = ++since_sync_[dest] >= sync_interval;
  MPI_Request request = MPI_REQUEST_NULL;
  const int bytes = static_cast<int>(data.wire_size());
  if (synchronous) {
    since_sync_[dest] = 0;
    ++unacked_[dest];
    mpi_check(MPI_Issend(data.wire(), bytes, MPI_BYTE, dest, data_tag, comm_, &request), "MPI_Issend");
  } else {
    mpi_check(MPI_Isend(data.wire(), bytes, MPI_BYTE, dest, data_tag, comm_, &request), "MPI_Isend");
  }
  requests_.push_back(request);
  in_flight_.push_back(in_flight{std::move(data), dest, synchronous});
}

void mpi_transport::complete_sends() {
  if (!requests_.empty()) {
    completed_.resize(requests_.size());
    int count = 0;
    mpi_check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, completed_.data(),
                           MPI_STATUSES_IGNORE),
              "MPI_Testsome");
    if (count != MPI_UNDEFINED && count > 0) {
      // Remove completed entries (their requests are now MPI_REQUEST_NULL) by compaction.
      std::size_t kept = 0;
      for (std::size_t i = 0; i < requests_.size(); ++i) {
        if (requests_[i] == MPI_REQUEST_NULL) {
          if (in_flight_[i].synchronous) --unacked_[in_flight_[i].dest];
          pool_.give(std::move(in_flight_[i].data));
        } else {
          if (kept != i) {
            requests_[kept] = requests_[i];
            in_flight_[kept] = std::move(in_flight_[i]);
          }
          ++kept;
        }
      }
      requests_.resize(kept);
      in_flight_.resize(kept);
    }
  }
  if (backlogged_ == 0) return;
  for (int dest = 0; dest < size_; ++dest) {
    auto& queue = backlog_[dest];
    while (!queue.empty() && unacked_[dest] < max_unacked) {
      post(dest, std::move(queue.front()));
      queue.pop_front();
      --backlogged_;
    }
  }
}

std::size_t mpi_transport::poll(std::vector<message>& sink, std::size_t max) {
  complete_sends();
  std::size_t received = 0;
  if (!to_self_.empty()) {
    received = to_self_.size();
    for (auto& m : to_self_) sink.push_back(std::move(m));
    to_self_.clear();
  }
  while (received < max) {
    int flag = 0;
    MPI_Message handle;
    MPI_Status status;
    mpi_check(MPI_Improbe(MPI_ANY_SOURCE, data_tag, comm_, &flag, &handle, &status), "MPI_Improbe");
    if (!flag) break;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    TRANSIT_ASSERT(bytes >= static_cast<int>(message_buffer::prefix_bytes), "message shorter than its prefix");
    message_buffer data = pool_.take(static_cast<std::size_t>(bytes) - message_buffer::prefix_bytes);
    mpi_check(MPI_Mrecv(data.wire(), bytes, MPI_BYTE, &handle, MPI_STATUS_IGNORE), "MPI_Mrecv");
    wire_prefix prefix;
    std::memcpy(&prefix, data.wire(), sizeof prefix);
    data.set_size(prefix.payload_bytes);
    sink.push_back(message{status.MPI_SOURCE, prefix.channel, std::move(data)});
    ++received;
  }
  return received;
}

std::unique_ptr<collective_group> mpi_transport::make_group() { return std::make_unique<mpi_group>(comm_); }

}  // namespace transit::detail
