// The simulation seam (core/simulation.hpp) and the simulated clock (transit/detail/core/clock.hpp):
// the one source that includes SimGrid's headers, and only in a SimGrid build.
#include "core/simulation.hpp"

#include "transit/detail/core/clock.hpp"

#ifdef TRANSIT_SIMGRID
#include <mpi.h>
#include <simgrid/engine.h>
#include <simgrid/s4u/Engine.hpp>
#include <smpi/smpi_helpers_internal.h>

#include <xbt/signal.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

// SimGrid 3.32 installs no header for its kernel's communications, but exports the signal it
// emits as each one starts (a message matched with its receive, its transfer begun): the census
// below counts every message of the simulation there, the library's own collectives' included.
namespace simgrid::kernel::activity {
class CommImpl {
 public:
  static xbt::signal<void(CommImpl const&)> on_start;
};
}  // namespace simgrid::kernel::activity

namespace transit::detail {

simulated_clock::time_point simulated_clock::now() {
  // Nanoseconds, rounded: the same simulated instant always reads the same (MPI_Wtime is exact to
  // far below a nanosecond for any simulated time under a few months).
  return time_point(duration(std::llround(MPI_Wtime() * 1e9)));
}

void simulated_sleep(double seconds) {
  if (!(seconds > 0)) return;
  timespec wait{};
  wait.tv_sec = static_cast<std::time_t>(seconds);
  wait.tv_nsec = static_cast<long>(std::llround((seconds - static_cast<double>(wait.tv_sec)) * 1e9));
  if (wait.tv_nsec >= 1'000'000'000L) {
    ++wait.tv_sec;
    wait.tv_nsec -= 1'000'000'000L;
  }
  // SMPI's nanosleep, not sg_actor_sleep_for: it first ends the rank's CPU burst (charging it when
  // SMPI simulates computation), so the wait starts after the work that came before it.
  smpi_nanosleep(&wait, nullptr);
}

namespace simulation {

namespace {

// The message census (TRANSIT_SIM_CENSUS=FILE): every message SimGrid transfers, and every send
// that paid its sender's overhead through the cost callbacks (register_send_cost). At the end of
// the simulation both counts go to FILE as one JSON object; scripts/simulate adds them to its
// records, and simulation.census checks that every message of every kind of sender was charged.
struct message_census {
  long long messages = 0;
  long long charged = 0;
};

message_census* census() {
  static message_census* const counting = [] {
    const char* file = std::getenv("TRANSIT_SIM_CENSUS");
    if (file == nullptr || *file == '\0') return static_cast<message_census*>(nullptr);
    static message_census counts;
    simgrid::kernel::activity::CommImpl::on_start.connect(
        [](simgrid::kernel::activity::CommImpl const&) { ++counts.messages; });
    simgrid::s4u::Engine::on_simulation_end_cb([path = std::string(file)] {
      if (std::FILE* out = std::fopen(path.c_str(), "w")) {
        std::fprintf(out, "{\"messages\": %lld, \"messages_charged\": %lld}\n", counts.messages, counts.charged);
        std::fclose(out);
      }
    });
    return &counts;
  }();
  return counting;
}

// Counting starts before the first rank's main: every message of the job is counted.
[[maybe_unused]] const bool census_started = census() != nullptr;

}  // namespace

const char* threads_per_rank_refusal(int threads_per_rank) noexcept {
  return threads_per_rank > 1 ? "1 in a SimGrid build (SMPI runs each rank on one thread)" : nullptr;
}

void on_deadlock(void (*report)()) {
  static const bool hooked = [report] {
    simgrid::s4u::Engine::on_deadlock_cb(report);
    return true;
  }();
  static_cast<void>(hooked);
}

double simulated_seconds() { return simgrid::s4u::Engine::get_clock(); }

std::size_t world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return static_cast<std::size_t>(rank);
}

void register_send_cost(send_cost cost) {
  const SmpiOpCostCb callback = [cost = std::move(cost)](std::size_t size, simgrid::s4u::Host* source,
                                                         simgrid::s4u::Host* dest) {
    if (message_census* counts = census()) ++counts->charged;
    return cost(size, source, dest);
  };
  smpi_register_op_cost_callback(SmpiOperation::SEND, callback);
  smpi_register_op_cost_callback(SmpiOperation::ISEND, callback);
}

}  // namespace simulation
}  // namespace transit::detail

// SMPI 3.32 charges a send's overhead (smpi/os, smpi/ois, or the cost callbacks above) in
// Request::start only for an MPI_Isend, an MPI_Issend or a detached send: a blocking MPI_Send or
// MPI_Rsend pays neither the overhead nor the NIC's slot. Every blocking send of the program
// (transit's, the baselines', the applications') therefore goes through here as a nonblocking send
// and its wait: the same message, matched and completed as SMPI completes a blocking send (sends
// are never detached, docs/simulation.md), charged in the one place every other send is.
// SMPI declares MPI_Send weak so that a program may define it.
extern "C" int MPI_Send(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (const int rc = PMPI_Isend(buffer, count, type, dest, tag, comm, &request); rc != MPI_SUCCESS) return rc;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}

extern "C" int MPI_Rsend(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (const int rc = PMPI_Irsend(buffer, count, type, dest, tag, comm, &request); rc != MPI_SUCCESS) return rc;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}

// SMPI's MPI_Allreduce algorithms send some of their messages with the library's blocking send,
// which pays nothing (above): Open MPI's selection at 256 ranks left half of them unpaid, and
// recursive doubling the folds of a rank count that is no power of two. The program's
// MPI_Allreduce (the neighbour exchange's agreement, a node's window set-up) is therefore
// recursive doubling on nonblocking sends: ranks from the largest power of two p2 <= P up fold
// into rank - p2 first and get the result back from it, log2(P) + 2 messages per rank, each
// charged where every send is. Partners combine in either order, so it takes commutative
// operations on contiguous data only; anything else goes to SMPI's own. Its messages use a tag of
// their own (allreduce_tag) on the caller's communicator.
namespace {

constexpr int allreduce_tag = 32766;  // below 32767, the least MPI_TAG_UB the standard allows

int exchange_with(int peer, const void* give, void* take, int count, MPI_Datatype type, MPI_Comm comm) {
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int posted = 0;
  if (take != nullptr) {
    if (const int rc = PMPI_Irecv(take, count, type, peer, allreduce_tag, comm, &requests[posted++]); rc != MPI_SUCCESS)
      return rc;
  }
  if (give != nullptr) {
    if (const int rc = PMPI_Isend(give, count, type, peer, allreduce_tag, comm, &requests[posted++]); rc != MPI_SUCCESS)
      return rc;
  }
  return PMPI_Waitall(posted, requests, MPI_STATUSES_IGNORE);
}

}  // namespace

extern "C" int MPI_Allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  int commutative = 0, type_size = 0, inter = 0;
  MPI_Aint lower = 0, extent = 0;
  if (comm == MPI_COMM_NULL || count < 0 || PMPI_Op_commutative(op, &commutative) != MPI_SUCCESS ||
      PMPI_Type_size(type, &type_size) != MPI_SUCCESS || PMPI_Type_get_extent(type, &lower, &extent) != MPI_SUCCESS ||
      PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || commutative == 0 || lower != 0 || extent != type_size ||
      inter != 0)
    return PMPI_Allreduce(send, receive, count, type, op, comm);  // SMPI's, and its error checks
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const std::size_t bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(extent);
  if (send != MPI_IN_PLACE && bytes > 0) std::memcpy(receive, send, bytes);
  std::vector<char> incoming(bytes);
  int p2 = 1;
  while (p2 * 2 <= size) p2 *= 2;
  if (rank >= p2) {  // folded: give this rank's values, take the result
    if (const int rc = exchange_with(rank - p2, receive, nullptr, count, type, comm); rc != MPI_SUCCESS) return rc;
    return exchange_with(rank - p2, nullptr, receive, count, type, comm);
  }
  const auto combine = [&](int peer, bool give) {
    if (const int rc = exchange_with(peer, give ? receive : nullptr, incoming.data(), count, type, comm);
        rc != MPI_SUCCESS)
      return rc;
    return PMPI_Reduce_local(incoming.data(), receive, count, type, op);
  };
  if (rank + p2 < size) {
    if (const int rc = combine(rank + p2, false); rc != MPI_SUCCESS) return rc;
  }
  for (int mask = 1; mask < p2; mask <<= 1) {
    if (const int rc = combine(rank ^ mask, true); rc != MPI_SUCCESS) return rc;
  }
  if (rank + p2 < size) return exchange_with(rank + p2, receive, nullptr, count, type, comm);
  return MPI_SUCCESS;
}

#else

namespace transit::detail {

// Never called in a normal build (steady_clock is std::chrono's there): defined so that every
// declaration of the seam has its one definition.
simulated_clock::time_point simulated_clock::now() { return {}; }
void simulated_sleep(double) {}

namespace simulation {

const char* threads_per_rank_refusal(int) noexcept { return nullptr; }
void on_deadlock(void (*)()) {}
double simulated_seconds() { return 0; }
std::size_t world_rank() { return 0; }
void register_send_cost(send_cost) {}

}  // namespace simulation
}  // namespace transit::detail

#endif
