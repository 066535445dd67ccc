// --scheme mpi-raw: histogram and alltoall written as a plain MPI program would write them, with
// none of transit's layers: one MPI_Isend per item on a communicator of the kernel's own, arrivals
// matched with MPI_Improbe / MPI_Mrecv after every send (polling only every 256 sends let the
// shared-memory queues fill and ran 10-30x slower), the end found by exchanging per-destination counts. It is
// the yardstick for transit's per-message path (`--scheme none`: one transport message per item
// through the streamer): both pay one MPI message per item, so their ratio is what transit's
// layers cost per message. mpi backend only (driver.cpp refuses it elsewhere).
#ifdef TRANSIT_WITH_MPI
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <list>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench.hpp"
#include "core/simulated_costs.hpp"

#include "core/backoff.hpp"
#include "transit/detail/core/clock.hpp"

namespace transit::bench {

namespace {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string("--scheme mpi-raw: ") + call + " failed: " + std::string(text, length));
}

// After a poll, in a simulation build: back off when it found nothing, start over when it did. A
// simulated rank's polls pass no simulated time (SMPI's per-poll costs are off, docs/simulation.md),
// so one that polls without a pause never lets time reach the message it waits for. A real rank
// keeps polling: a plain MPI program spins, and naps would add their length to every round trip.
void idle_unless([[maybe_unused]] bool progressed, [[maybe_unused]] detail::backoff& wait) {
  if constexpr (detail::simulated_build) {
    if (progressed) {
      wait.reset();
    } else {
      wait.idle();
    }
  }
}

// Receives one message of `tag` from anyone into `buffer` if one has arrived; returns whether one
// did, and its source. SMPI has no matched probes: there a probe and a receive from the probed
// source get the same message (no overtaking within a source and tag, one thread per rank).
bool receive_any(MPI_Comm comm, int tag, void* buffer, int bytes, int* source) {
  int flag = 0;
  MPI_Status status;
#ifdef TRANSIT_SIMGRID
  check(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &status), "MPI_Iprobe");
  if (!flag) return false;
  check(MPI_Recv(buffer, bytes, MPI_BYTE, status.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
#else
  MPI_Message handle;
  check(MPI_Improbe(MPI_ANY_SOURCE, tag, comm, &flag, &handle, &status), "MPI_Improbe");
  if (!flag) return false;
  check(MPI_Mrecv(buffer, bytes, MPI_BYTE, &handle, MPI_STATUS_IGNORE), "MPI_Mrecv");
#endif
  // Modelled simulation: SMPI charges no receiver's overhead for a send that is not detached.
  detail::charge_receive_overhead(static_cast<std::size_t>(bytes));
  if (source != nullptr) *source = status.MPI_SOURCE;
  return true;
}

/// MPI_Ibarrier as MPI libraries run it. Open MPI's and MPICH's nonblocking barriers are
/// dissemination barriers (Hensgen, Finkel and Manber 1988): ceil(log2 P) rounds, in round k a
/// zero-byte message to rank + 2^k and one from rank - 2^k. SMPI 3.32's MPI_Ibarrier instead sends
/// everything through rank 0 (P - 1 messages in and P - 1 out there), an O(P) barrier that no MPI
/// library has, so a SimGrid build runs the dissemination here on point-to-point messages, each
/// charged as every baseline message is (transit's own collectives avoid SMPI's for the same
/// reason: src/transport/mpi/collective_groups.cpp). A real build calls MPI_Ibarrier.
class nonblocking_barrier {
 public:
  nonblocking_barrier(MPI_Comm comm, int tag) : comm_(comm), tag_(tag) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  nonblocking_barrier(const nonblocking_barrier&) = delete;
  nonblocking_barrier& operator=(const nonblocking_barrier&) = delete;
  ~nonblocking_barrier() {
    for (MPI_Request& r : requests_) {
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    }
  }

  /// Collective, non-blocking: enters the barrier.
  void start() {
    if constexpr (detail::simulated_build) {
      distance_ = 1;
      post_round();
    } else {
      check(MPI_Ibarrier(comm_, &requests_[0]), "MPI_Ibarrier");
    }
  }

  /// Local: whether every rank has entered; advances the rounds.
  bool test() {
    if constexpr (detail::simulated_build) {
      while (distance_ < size_) {
        int done = 0;
        check(MPI_Testall(2, requests_, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
        if (!done) return false;
        detail::charge_receive_overhead(0);  // the round's message in, as receive_any charges one
        distance_ *= 2;
        post_round();
      }
      return true;
    } else {
      int done = 0;
      check(MPI_Test(&requests_[0], &done, MPI_STATUS_IGNORE), "MPI_Test");
      return done != 0;
    }
  }

 private:
  void post_round() {
    if (distance_ >= size_) return;  // one rank: no round
    const int to = (rank_ + distance_) % size_, from = (rank_ - distance_ + size_) % size_;
    check(MPI_Irecv(nullptr, 0, MPI_BYTE, from, tag_, comm_, &requests_[0]), "MPI_Irecv");
    check(MPI_Isend(nullptr, 0, MPI_BYTE, to, tag_, comm_, &requests_[1]), "MPI_Isend");
  }

  MPI_Comm comm_;
  int tag_;
  int rank_ = 0, size_ = 1;
  int distance_ = 1;
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

/// One MPI_Isend per item of `item_bytes`, at most `window` in flight in a ring of slots (a slot is
/// reused once MPI_Test reports the oldest sends complete, in order: O(1) per send, where
/// MPI_Testsome over the whole window would scan 1024 requests for every send once it is full and
/// cost ~10 us per item, more than the message itself), arrivals
/// matched with MPI_Improbe / MPI_Mrecv. finish() exchanges how many items each PE sent to each
/// (MPI_Ialltoall) and receives until every count is met. A synchronous messenger sends with
/// MPI_Issend instead, so that end_step() can end a step as plain MPI programs do without
/// counting: the nonblocking consensus (NBX, Hoefler et al. 2010: once a PE's sends are all
/// matched it enters MPI_Ibarrier, and it receives until the barrier completes).
class raw_messenger {
 public:
  static constexpr int window = 1024;
  static constexpr int barrier_tag = 1;  // the items' tag is 0

  explicit raw_messenger(std::size_t item_bytes, bool synchronous = false)
      : item_bytes_(item_bytes), synchronous_(synchronous) {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    requests_.assign(window, MPI_REQUEST_NULL);
    payload_.assign(window * item_bytes, std::byte{0});
    sent_to_.assign(size_, 0);
    expected_from_.assign(size_, 0);
    incoming_.assign(item_bytes, std::byte{0});
    barrier_.emplace(comm_, barrier_tag);
  }
  ~raw_messenger() {
    barrier_.reset();
    MPI_Comm_free(&comm_);
  }
  raw_messenger(const raw_messenger&) = delete;
  raw_messenger& operator=(const raw_messenger&) = delete;

  /// Sends `item_bytes` bytes from `item` to `dest`; `on_receive(const std::byte*)` handles
  /// arrivals while it waits for a free request.
  template <class Receive>
  void send(const void* item, int dest, Receive&& on_receive) {
    for (detail::backoff wait; in_flight_ == window;) {
      reclaim();
      if (in_flight_ < window) break;
      idle_unless(poll(on_receive), wait);
    }
    const int slot = (oldest_ + in_flight_) % window;
    ++in_flight_;
    std::byte* at = payload_.data() + static_cast<std::size_t>(slot) * item_bytes_;
    std::memcpy(at, item, item_bytes_);
    if (synchronous_)
      check(MPI_Issend(at, static_cast<int>(item_bytes_), MPI_BYTE, dest, 0, comm_, &requests_[slot]), "MPI_Issend");
    else
      check(MPI_Isend(at, static_cast<int>(item_bytes_), MPI_BYTE, dest, 0, comm_, &requests_[slot]), "MPI_Isend");
    ++sent_to_[dest];
    ++messages_;
  }

  /// Receives what has arrived. Returns whether anything did.
  template <class Receive>
  bool poll(Receive&& on_receive) {
    bool any = false;
    for (;;) {
      if (!receive_any(comm_, 0, incoming_.data(), static_cast<int>(item_bytes_), nullptr)) return any;
      ++received_;
      on_receive(incoming_.data());
      any = true;
    }
  }

  /// Collective: returns once every item sent anywhere has been received and every send completed.
  template <class Receive>
  void finish(Receive&& on_receive) {
    MPI_Request counts = MPI_REQUEST_NULL;
    {
      // Its messages are received inside SMPI, where no receiver's overhead is charged: each pays
      // it at its sender, as MPI_Alltoallv's do (core/simulated_costs.hpp).
      const detail::baseline_messages received_inside_mpi;
      check(MPI_Ialltoall(sent_to_.data(), 1, MPI_UINT64_T, expected_from_.data(), 1, MPI_UINT64_T, comm_, &counts),
            "MPI_Ialltoall");
    }
    detail::backoff wait;
    for (int done = 0; !done;) {
      const bool received = poll(on_receive);
      reclaim();
      check(MPI_Test(&counts, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) idle_unless(received, wait);
    }
    const std::uint64_t expected = std::accumulate(expected_from_.begin(), expected_from_.end(), std::uint64_t{0});
    while (received_ < expected) {
      idle_unless(poll(on_receive), wait);
      reclaim();
    }
    check(MPI_Waitall(window, requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

  /// Collective, synchronous messengers only: the NBX end of a step. Returns once every item sent
  /// anywhere in the step has been received.
  template <class Receive>
  void end_step(Receive&& on_receive) {
    TRANSIT_ASSERT(synchronous_, "end_step needs MPI_Issend's sends: a matched send is a received item");
    detail::backoff wait;
    for (reclaim(); in_flight_ > 0; reclaim()) idle_unless(poll(on_receive), wait);
    barrier_->start();
    for (bool done = false; !done;) {
      const bool received = poll(on_receive);
      done = barrier_->test();
      if (!done) idle_unless(received, wait);
    }
  }

  std::uint64_t messages() const noexcept { return messages_; }

 private:
  /// Frees the slots of the oldest sends that have completed, in order.
  void reclaim() {
    while (in_flight_ > 0) {
      int done = 0;
      check(MPI_Test(&requests_[oldest_], &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) return;
      oldest_ = (oldest_ + 1) % window;
      --in_flight_;
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 0;
  std::size_t item_bytes_;
  bool synchronous_;
  std::vector<MPI_Request> requests_;
  std::vector<std::byte> payload_;  // window slots of item_bytes_
  int oldest_ = 0, in_flight_ = 0;  // the ring of slots in flight: oldest_ .. oldest_ + in_flight_ - 1
  std::vector<std::uint64_t> sent_to_, expected_from_;
  std::vector<std::byte> incoming_;
  std::uint64_t messages_ = 0, received_ = 0;
  std::optional<nonblocking_barrier> barrier_;  // on comm_, for end_step
};

}  // namespace

measurement histogram_mpi_raw(context& ctx, const setup& s, std::uint64_t slots) {
  const std::uint64_t n = s.items_per_pe;
  const auto pes = static_cast<std::uint64_t>(ctx.size());
  const int rank = ctx.rank();
  std::vector<std::uint64_t> table(slots, 0);
  // Steps end by NBX (raw_messenger::end_step), the MPI_Ibarrier-based end of a step that transit's
  // streamer steps are measured against; one step ends by exchanging counts, as before.
  const auto steps = static_cast<std::uint64_t>(s.steps);
  const bool stepped = steps > 1;
  raw_messenger raw(sizeof(std::uint64_t), stepped);
  const auto update = [&](const std::byte* bytes) {
    std::uint64_t slot;
    std::memcpy(&slot, bytes, sizeof slot);
    ++table[slot];
  };
  rng random(pe_seed(s.opt, rank, 0x4157));  // the stream of the transit kernel (histogram.cpp)

  measurement m;
  std::vector<double> step_seconds;
  m.seconds = measure_steps(ctx, steps, step_seconds, [&](std::uint64_t) {
    for (std::uint64_t i = 0; i < n; ++i) {
      const table_entry e = random_entry(random, pes, slots);
      const std::uint64_t slot = e.slot;
      if (static_cast<int>(e.pe) == rank) {
        ++table[slot];  // a plain program updates its own slots in place
      } else {
        raw.send(&slot, static_cast<int>(e.pe), update);
      }
      raw.poll(update);
    }
    if (stepped) raw.end_step(update);
    else raw.finish(update);
  });

  std::uint64_t sum = 0;
  for (const auto c : table) sum += c;
  m.items_per_pe = static_cast<double>(n * steps);
  m.verified = ctx.allreduce(sum, reduce_op::sum) == n * steps * pes;
  m.stats.items_inserted = n * steps;
  m.stats.messages_sent = raw.messages();
  m.stats.bytes_sent = raw.messages() * sizeof(std::uint64_t);
  m.extra["table_slots"] = slots;
  if (stepped) {
    add_step_times(ctx, s, step_seconds, m);
    m.extra["termination"] = detail::simulated_build ? "NBX, a dissemination barrier" : "MPI_Ibarrier (NBX)";
  }
  return m;
}

measurement alltoall_mpi_raw(context& ctx, const setup& s) {
  const std::size_t bytes = s.item_bytes, words = bytes / 8, last = words - 1;
  const std::uint64_t n = s.items_per_pe;
  const int pes = ctx.size(), rank = ctx.rank();
  std::uint64_t received = 0, received_hash = 0, corrupt = 0, sent_hash = 0;
  raw_messenger raw(bytes);
  const auto take = [&](const std::byte* item) {
    std::uint64_t first, final;
    std::memcpy(&first, item, 8);
    std::memcpy(&final, item + last * 8, 8);
    ++received;
    received_hash += rng::mix(first);
    corrupt += final != first + last;
  };
  // The transit kernel's rounds (alltoall.cpp): one item to every other PE per round, in a random
  // order drawn afresh for each round.
  rng random(pe_seed(s.opt, rank, 0xa11));
  std::vector<int> order;
  for (int pe = 0; pe < pes; ++pe)
    if (pe != rank || pes == 1) order.push_back(pe);
  std::size_t next = order.size();
  std::vector<std::uint64_t> x(words);

  measurement m;
  m.seconds = measure(ctx, [&] {
    for (std::uint64_t i = 0; i < n; ++i) {
      if (next == order.size()) {
        for (std::size_t j = order.size() - 1; j > 0; --j)
          std::swap(order[j], order[rng::below(static_cast<std::uint32_t>(random.next()), j + 1)]);
        next = 0;
      }
      const std::uint64_t id = (static_cast<std::uint64_t>(rank) << 40) | i;
      for (std::size_t w = 0; w <= last; ++w) x[w] = id + w;
      sent_hash += rng::mix(id);
      raw.send(x.data(), order[next++], take);
      raw.poll(take);
    }
    raw.finish(take);
  });

  const auto total_sent = static_cast<std::uint64_t>(pes) * n;
  m.verified = ctx.allreduce(received, reduce_op::sum) == total_sent &&
               ctx.allreduce(received_hash, reduce_op::sum) == ctx.allreduce(sent_hash, reduce_op::sum) &&
               ctx.allreduce(corrupt, reduce_op::sum) == 0;
  m.items_per_pe = static_cast<double>(n);
  m.stats.items_inserted = n;
  m.stats.messages_sent = raw.messages();
  m.stats.bytes_sent = raw.messages() * bytes;
  return m;
}

// Polls serve() until `count` requests are complete: the hot-spot baselines' only way to wait, so
// two PEs aiming at each other never wait for each other.
template <class Serve>
void wait_serving(Serve& serve, int count, MPI_Request* requests) {
  detail::backoff wait;
  for (int done = 0; !done;) {
    const bool served = serve();
    check(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (!done) idle_unless(served, wait);
  }
}

// One word to `target` with `request_tag` and one word back from it with `reply_tag`, serving
// meanwhile; returns the word that came back and counts the request in `messages`.
template <class Serve>
std::uint64_t round_trip(Serve& serve, MPI_Comm comm, int target, std::uint64_t word, int request_tag, int reply_tag,
                         std::uint64_t& messages) {
  std::uint64_t back = 0;
  MPI_Request pair[2];
  check(MPI_Irecv(&back, 1, MPI_UINT64_T, target, reply_tag, comm, &pair[0]), "MPI_Irecv");
  check(MPI_Isend(&word, 1, MPI_UINT64_T, target, request_tag, comm, &pair[1]), "MPI_Isend");
  ++messages;
  wait_serving(serve, 2, pair);
  detail::charge_receive_overhead(sizeof back);  // the reply's, as receive_any charges a request's
  return back;
}

// The hot-spot servers' replies, sent as a plain MPI server written for speed sends them: an
// MPI_Isend from a slot of its own, completions reaped as it serves, never a wait for a reply's
// delivery. An MPI library returns from a small MPI_Send after an eager copy; SMPI's sends are not
// detached here (docs/simulation.md), so a blocking reply would hold the server until the reply
// had arrived: 16% of flat's time per fetch-add at 256 ranks (xe6), 14x at the anchor's 50 us
// latency.
class reply_sender {
 public:
  explicit reply_sender(MPI_Comm comm) : comm_(comm) {}
  reply_sender(const reply_sender&) = delete;
  reply_sender& operator=(const reply_sender&) = delete;
  ~reply_sender() {
    for (auto& pending : slots_) {
      if (pending.request != MPI_REQUEST_NULL) MPI_Request_free(&pending.request);
    }
  }

  /// Local: sends `value` to `to` with `tag`, returning at once.
  void send(std::uint64_t value, int to, int tag) {
    reap();
    slot& s = slots_.emplace_back();  // a list: the slot stays where MPI reads it
    s.value = value;
    check(MPI_Isend(&s.value, 1, MPI_UINT64_T, to, tag, comm_, &s.request), "MPI_Isend");
  }
  /// Local: waits until every reply sent has completed.
  void finish() {
    for (auto& pending : slots_) check(MPI_Wait(&pending.request, MPI_STATUS_IGNORE), "MPI_Wait");
    slots_.clear();
  }

 private:
  struct slot {
    std::uint64_t value = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  void reap() {
    for (auto it = slots_.begin(); it != slots_.end();) {
      int done = 0;
      check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      it = done ? slots_.erase(it) : std::next(it);
    }
  }

  MPI_Comm comm_;
  std::list<slot> slots_;
};

// Ends a hot-spot round: a PE leaves the barrier only after every PE's operations of the round
// were answered, serving meanwhile. The barrier is MPI's nonblocking one as MPI libraries run it
// (nonblocking_barrier: SMPI's goes through rank 0, which is also the hot spot).
template <class Serve>
void end_round(Serve& serve, nonblocking_barrier& round) {
  round.start();
  detail::backoff wait;
  for (bool done = false; !done;) {
    const bool served = serve();
    done = round.test();
    if (!done) idle_unless(served, wait);
  }
}

MPI_Comm duplicate_world(int* rank) {
  MPI_Comm comm = MPI_COMM_NULL;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
  MPI_Comm_rank(comm, rank);
  return comm;
}

raw_fetch_adds hotspot_mpi_raw(context& ctx, int ops, int iterations, int target, std::uint64_t delta,
                               std::uint64_t initial, std::optional<std::uint64_t> expected_reply) {
  constexpr int request_tag = 1, reply_tag = 2, round_tag = 6;
  int rank = 0;
  MPI_Comm comm = duplicate_world(&rank);
  nonblocking_barrier round(comm, round_tag);
  reply_sender replies(comm);
  raw_fetch_adds out;
  out.word = initial;
  // The owner applies every request that has arrived and answers it at once: called wherever this
  // PE waits, so two PEs aiming at each other never wait for each other.
  const auto serve = [&] {
    for (bool any = false;; any = true) {
      std::uint64_t added = 0;
      int source = 0;
      if (!receive_any(comm, request_tag, &added, sizeof added, &source)) return any;
      const std::uint64_t old = out.word;
      out.word += added;
      replies.send(old, source, reply_tag);
      ++out.messages;
    }
  };
  out.seconds = measure(ctx, [&] {
    for (int it = 0; it < iterations; ++it) {
      const auto start = detail::steady_clock::now();
      for (int k = 0; k < ops; ++k) {
        std::uint64_t old = out.word;
        if (target == rank) {
          serve();
          old = out.word;
          out.word += delta;
        } else {
          old = round_trip(serve, comm, target, delta, request_tag, reply_tag, out.messages);
        }
        if (expected_reply && old != *expected_reply) ++out.wrong_replies;
      }
      out.busy_seconds += detail::seconds_since(start);
      end_round(serve, round);
    }
  });
  replies.finish();
  MPI_Comm_free(&comm);
  return out;
}

raw_locks hotspot_mpi_raw_locks(context& ctx, int ops, int iterations, int target) {
  constexpr int lock_tag = 3, grant_tag = 4, release_tag = 5, round_tag = 6;
  int rank = 0;
  MPI_Comm comm = duplicate_world(&rank);
  nonblocking_barrier round(comm, round_tag);
  reply_sender grants(comm);
  raw_locks out;
  std::deque<int> waiting;  // lockers of this PE's lock, in the order their requests arrived
  bool held = false;
  bool granted_here = false;  // this PE was granted its own lock
  const auto grant = [&](int to) {
    held = true;
    if (to == rank) {
      granted_here = true;
      return;
    }
    grants.send(out.counter, to, grant_tag);
    ++out.messages;
  };
  const auto release = [&](std::uint64_t value) {
    out.counter = value;
    held = false;
    if (waiting.empty()) return;
    const int next = waiting.front();
    waiting.pop_front();
    grant(next);
  };
  const auto take = [&](int locker) {
    if (held) {
      waiting.push_back(locker);
    } else {
      grant(locker);
    }
  };
  // The home serves every release and lock request that has arrived, granting in arrival order.
  const auto serve = [&] {
    for (bool any = false;; any = true) {
      std::uint64_t value = 0;
      int source = 0;
      if (receive_any(comm, release_tag, &value, sizeof value, &source)) {
        release(value);
      } else if (receive_any(comm, lock_tag, &value, sizeof value, &source)) {
        take(source);
      } else {
        return any;
      }
    }
  };
  out.seconds = measure(ctx, [&] {
    for (int it = 0; it < iterations; ++it) {
      const auto start = detail::steady_clock::now();
      for (int k = 0; k < ops; ++k) {
        if (target == rank) {
          granted_here = false;
          take(rank);
          detail::backoff wait;
          while (!granted_here) idle_unless(serve(), wait);
          release(out.counter + 1);
          continue;
        }
        std::uint64_t value = round_trip(serve, comm, target, 0, lock_tag, grant_tag, out.messages);
        ++value;  // the counter's read-modify-write, not atomic: the lock must exclude the others
        MPI_Request sent = MPI_REQUEST_NULL;
        check(MPI_Isend(&value, 1, MPI_UINT64_T, target, release_tag, comm, &sent), "MPI_Isend");
        ++out.messages;
        wait_serving(serve, 1, &sent);
      }
      out.busy_seconds += detail::seconds_since(start);
      end_round(serve, round);
    }
    // The last releases may still be on their way to this home (a barrier does not order them).
    detail::backoff wait;
    while (held) idle_unless(serve(), wait);
  });
  grants.finish();
  MPI_Comm_free(&comm);
  return out;
}

}  // namespace transit::bench

#endif  // TRANSIT_WITH_MPI
