// The MPI baselines: mpi_alltoallv and mpi_neighbor (MPI_Neighbor_alltoallv on a distributed
// graph built once per pattern). Both are the blocking calls users compare against, on a
// communicator of the exchange's own.
//
// 64-bit sizes through int-count calls. MPI takes int counts and int displacements. With `chunk`
// the most bytes one call moves per peer, equal on every PE, and `chunk * peers <= INT_MAX`, a call
// never overflows; a run needs ceil(largest count / chunk) calls (rounds), and every PE knows the
// largest count of the run from its count exchange. One round sends and receives in place; more
// rounds go through staging buffers of at most INT_MAX bytes. The mpi transport's piece size
// (TRANSIT_MAX_MESSAGE_BYTES lowers it) bounds `chunk` too, so that tests exercise rounds with
// small data.
#include <algorithm>
#include <climits>
#include <cstring>

#include "transport/mpi_access.hpp"
#include "methods.hpp"
#include "core/simulated_costs.hpp"

namespace transit::detail {

namespace {

mpi_access& transport_of(exchange_port& port) { return mpi_of(context_access::net(port.ctx())); }

std::uint64_t per_call_limit(exchange_port& port) {
  return std::min<std::uint64_t>(INT_MAX, transport_of(port).max_message_bytes());
}

MPI_Comm own_communicator(exchange_port& port) { return duplicate_communicator(transport_of(port).comm()); }

// An empty vector's data() may be null, which some MPI calls reject even with count 0.
template <class T>
T* nonnull(std::vector<T>& v) {
  static T dummy{};
  return v.empty() ? &dummy : v.data();
}

/// Bytes that keep their allocation from run to run while it is large enough.
class byte_buffer {
 public:
  std::byte* reserve(std::uint64_t bytes) {
    if (bytes > capacity_ || !data_) {
      data_.reset(new std::byte[std::max<std::uint64_t>(bytes, 1)]);
      capacity_ = bytes;
    }
    return data_.get();
  }
  std::byte* get() const noexcept { return data_.get(); }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::uint64_t capacity_ = 0;
};

/// One PE's side of a v-collective over an ordered list of send peers and of receive peers.
struct v_exchange {
  std::vector<const outgoing_record*> send;  // per send peer; null: nothing for it
  std::vector<std::uint64_t> receive;        // bytes per receive peer
  std::vector<std::uint64_t> receive_offset; // where each receive peer's bytes start in `received`
  byte_buffer received, send_buffer, receive_staging;
  std::vector<int> scount, sdispl, rcount, rdispl;
};

/// Runs `call(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls)` once per round (see
/// the top of this file). Counts the messages and bytes this PE sends.
template <class Call>
void in_rounds(const outgoing_plan& plan, v_exchange& x, std::uint64_t chunk, std::uint64_t rounds,
               exchange_stats& stats, Call&& call) {
  const std::size_t ns = x.send.size(), nr = x.receive.size();
  std::uint64_t receive_total = 0;
  x.receive_offset.resize(nr);
  for (std::size_t j = 0; j < nr; ++j) {
    x.receive_offset[j] = receive_total;
    receive_total += x.receive[j];
  }
  std::byte* const received = x.received.reserve(receive_total);
  auto& scount = x.scount;
  auto& sdispl = x.sdispl;
  auto& rcount = x.rcount;
  auto& rdispl = x.rdispl;
  scount.resize(ns);
  sdispl.resize(ns);
  rcount.resize(nr);
  rdispl.resize(nr);
  const bool staged = rounds > 1;
  // The first round moves the most: min(chunk, bytes) per peer.
  std::uint64_t send_round = 0, receive_round = 0;
  for (const auto* r : x.send) send_round += r != nullptr ? std::min(chunk, r->bytes) : 0;
  for (const auto b : x.receive) receive_round += std::min(chunk, b);
  std::byte* const send_buffer = x.send_buffer.reserve(send_round);
  std::byte* const receive_staging = staged ? x.receive_staging.reserve(receive_round) : nullptr;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    const std::uint64_t from = round * chunk;
    const auto piece = [&](std::uint64_t bytes) { return bytes > from ? std::min(chunk, bytes - from) : 0; };
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < ns; ++i) {
      const std::uint64_t n = x.send[i] != nullptr ? piece(x.send[i]->bytes) : 0;
      if (n > 0) plan.copy(*x.send[i], from, n, send_buffer + at);
      scount[i] = static_cast<int>(n);
      sdispl[i] = static_cast<int>(at);
      at += n;
      if (n > 0) ++stats.messages_sent;
      stats.bytes_sent += n;
    }
    at = 0;
    for (std::size_t j = 0; j < nr; ++j) {
      const std::uint64_t n = piece(x.receive[j]);
      rcount[j] = static_cast<int>(n);
      rdispl[j] = static_cast<int>(staged ? at : x.receive_offset[j]);
      at += n;
    }
    call(send_buffer, nonnull(scount), nonnull(sdispl), staged ? receive_staging : received, nonnull(rcount),
         nonnull(rdispl));
    if (staged) {
      for (std::size_t j = 0; j < nr; ++j) {
        std::memcpy(received + x.receive_offset[j] + from, receive_staging + rdispl[j],
                    static_cast<std::size_t>(rcount[j]));
      }
    }
  }
}

std::uint64_t rounds_for(std::uint64_t largest_count, std::uint64_t chunk) {
  return (largest_count + chunk - 1) / chunk;
}

std::uint64_t largest_record(const outgoing_plan& plan) {
  std::uint64_t largest = 0;
  for (const auto& r : plan.records) largest = std::max(largest, r.bytes);
  return largest;
}

class mpi_method : public exchange_method_impl {
 public:
  mpi_method(exchange_port& port, bool fixed_pattern)
      : port_(port), comm_(own_communicator(port)), limit_(per_call_limit(port)), fixed_pattern_(fixed_pattern) {}
  ~mpi_method() override { MPI_Comm_free(&comm_); }
  bool uses_transport() const noexcept override { return false; }

 protected:
  /// Appends the received records to the run's incoming list.
  void deliver(exchange_run& r, const std::vector<int>& sources) {
    for (std::size_t j = 0; j < sources.size(); ++j) {
      if (x_.receive[j] > 0)
        r.in.push_back(incoming_record{sources[j], x_.received.get() + x_.receive_offset[j], x_.receive[j]});
    }
  }

  /// Modelled simulation: each record copied into the send buffer, as transit's own methods are
  /// charged (SMPI charges the MPI messages as it charges transit's).
  static void charge_copies(const outgoing_plan& out) {
    std::uint64_t packed = 0;
    for (const auto& record : out.records) packed += record.bytes;
    charge_item_hops(out.records.size());
    charge_bytes_copied(packed);
  }

  exchange_port& port_;
  MPI_Comm comm_;
  const std::uint64_t limit_;
  v_exchange x_;
  // The counts: exchanged every run, or in the first only when the caller promised a fixed pattern
  // (the engine checks each PE's records against its first run's, so the counts stay true).
  const bool fixed_pattern_;
  bool counts_known_ = false;  // fixed pattern, after the first run: x_.receive and the largest hold
  std::uint64_t largest_count_ = 0, largest_volume_ = 0;  // of any PE's records, of any PE's volume
};

class mpi_alltoallv_method final : public mpi_method {
 public:
  using mpi_method::mpi_method;

  std::uint64_t run(exchange_run& r) override {
    // Modelled simulation: the receiver's overhead of the messages SMPI's collectives receive.
    const baseline_messages charged_at_sender;
    const int size = port_.size();
    if (!counts_known_) exchange_counts(r);
    if (largest_count_ == 0) return largest_volume_;
    const std::uint64_t chunk = std::max<std::uint64_t>(1, std::min<std::uint64_t>(limit_, INT_MAX / size));
    // This run's records (a fixed pattern's counts are known, but its records are new each run).
    x_.send.assign(static_cast<std::size_t>(size), nullptr);
    for (const auto& record : r.out.records) x_.send[static_cast<std::size_t>(record.dest)] = &record;
    charge_copies(r.out);
    const bool as_mpich = simulated_build && simulation_costs().mpi == mpi_library::mpich;
    in_rounds(r.out, x_, chunk, rounds_for(largest_count_, chunk), port_.stats(),
              [&](const std::byte* sb, const int* sc, const int* sd, std::byte* rb, const int* rc, const int* rd) {
                if (as_mpich) {
                  mpich_alltoallv(sb, sc, sd, rb, rc, rd);
                } else {
                  mpi_check(MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, comm_), "MPI_Alltoallv");
                }
              });
    if (sources_.size() != static_cast<std::size_t>(size)) {
      sources_.resize(static_cast<std::size_t>(size));
      for (int p = 0; p < size; ++p) sources_[static_cast<std::size_t>(p)] = p;
    }
    deliver(r, sources_);
    return largest_volume_;
  }

 private:
  /// Collective: the count exchange (every run, or the first only: see counts_known_).
  void exchange_counts(exchange_run& r) {
    const int size = port_.size();
    // Per peer: bytes for it, and this PE's largest record and volume, so that every PE learns the
    // run's largest count (rounds) and volume from the count exchange users need anyway.
    auto& mine = mine_;
    auto& theirs = theirs_;
    mine.assign(3 * static_cast<std::size_t>(size), 0);
    theirs.resize(mine.size());
    const std::uint64_t largest_mine = largest_record(r.out);
    for (const auto& record : r.out.records) mine[3 * static_cast<std::size_t>(record.dest)] = record.bytes;
    for (std::size_t p = 0; p < static_cast<std::size_t>(size); ++p) {
      mine[3 * p + 1] = largest_mine;
      mine[3 * p + 2] = r.volume;
    }
    mpi_check(MPI_Alltoall(mine.data(), 3, MPI_UINT64_T, theirs.data(), 3, MPI_UINT64_T, comm_), "MPI_Alltoall");
    port_.stats().messages_sent += static_cast<std::uint64_t>(size - 1);
    port_.stats().bytes_sent += static_cast<std::uint64_t>(size - 1) * 3 * sizeof(std::uint64_t);
    largest_count_ = largest_volume_ = 0;
    x_.receive.assign(static_cast<std::size_t>(size), 0);
    for (std::size_t p = 0; p < static_cast<std::size_t>(size); ++p) {
      x_.receive[p] = theirs[3 * p];
      largest_count_ = std::max(largest_count_, theirs[3 * p + 1]);
      largest_volume_ = std::max(largest_volume_, theirs[3 * p + 2]);
    }
    counts_known_ = fixed_pattern_;
  }

  /// A simulated machine whose MPI is MPICH's (or derived from it): MPI_Alltoallv as MPICH runs
  /// it (MPIR_Alltoallv_intra_scattered, its only algorithm without MPI_IN_PLACE), on point-to-point
  /// messages of the method's own communicator: peers in blocks of MPIR_CVAR_ALLTOALL_THROTTLE
  /// (32), a receive from each peer with something to receive and a send to each with something
  /// to send (empty counts skipped), then a wait for the block. SMPI's own MPI_Alltoallv is Open
  /// MPI's, which since 3.1 sends every peer a message, empty or not. The block to this PE itself
  /// is a copy, as in Open MPI's (and as transit's methods pay nothing for it).
  void mpich_alltoallv(const std::byte* sb, const int* sc, const int* sd, std::byte* rb, const int* rc,
                       const int* rd) {
    constexpr int throttle = 32;
    const int size = port_.size(), rank = port_.rank();
    if (sc[rank] > 0) std::memcpy(rb + rd[rank], sb + sd[rank], static_cast<std::size_t>(sc[rank]));
    for (int first = 0; first < size; first += throttle) {
      const int block = std::min(throttle, size - first);
      requests_.clear();
      for (int i = 0; i < block; ++i) {
        const int peer = (rank + first + i) % size;
        if (peer == rank || rc[peer] == 0) continue;
        requests_.push_back(MPI_REQUEST_NULL);
        mpi_check(MPI_Irecv(rb + rd[peer], rc[peer], MPI_BYTE, peer, 0, comm_, &requests_.back()), "MPI_Irecv");
      }
      for (int i = 0; i < block; ++i) {
        const int peer = (rank - first - i + size) % size;
        if (peer == rank || sc[peer] == 0) continue;
        requests_.push_back(MPI_REQUEST_NULL);
        mpi_check(MPI_Isend(sb + sd[peer], sc[peer], MPI_BYTE, peer, 0, comm_, &requests_.back()), "MPI_Isend");
      }
      mpi_check(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
                "MPI_Waitall");
    }
  }

  std::vector<int> sources_;  // 0..P-1
  std::vector<std::uint64_t> mine_, theirs_;
  std::vector<MPI_Request> requests_;  // mpich_alltoallv's: simulations only
};

class mpi_neighbor_method final : public mpi_method {
 public:
  using mpi_method::mpi_method;
  ~mpi_neighbor_method() override {
    if (graph_ != MPI_COMM_NULL) MPI_Comm_free(&graph_);
  }

  std::uint64_t run(exchange_run& r) override {
    // Modelled simulation: the receiver's overhead of the messages SMPI's collectives receive.
    const baseline_messages charged_at_sender;
    if (!counts_known_) exchange_counts(r);
    if (largest_count_ == 0) return largest_volume_;
    x_.send.assign(out_.size(), nullptr);
    for (std::size_t i = 0; i < out_.size(); ++i) x_.send[i] = &r.out.records[i];  // out_: this run's destinations, in order
    charge_copies(r.out);
    in_rounds(r.out, x_, chunk_, rounds_for(largest_count_, chunk_), port_.stats(),
              [&](const std::byte* sb, const int* sc, const int* sd, std::byte* rb, const int* rc, const int* rd) {
                neighbor_alltoallv(sb, sc, sd, rb, rc, rd);
              });
    deliver(r, in_);
    return largest_volume_;
  }

 private:
  /// Collective: whether the graph must be rebuilt, the run's largest count and volume (one
  /// allreduce), then the counts (every run, or the first only: see counts_known_).
  void exchange_counts(exchange_run& r) {
    targets_.clear();
    for (const auto& record : r.out.records) targets_.push_back(record.dest);  // sorted: the plan is
    std::uint64_t agreed[3] = {!built_ || targets_ != out_ ? 1u : 0u, largest_record(r.out), r.volume};
    mpi_check(MPI_Allreduce(MPI_IN_PLACE, agreed, 3, MPI_UINT64_T, MPI_MAX, comm_), "MPI_Allreduce");
    if (agreed[0] != 0) rebuild();
    std::vector<std::uint64_t> send_counts(out_.size(), 0);
    for (std::size_t i = 0; i < out_.size(); ++i) send_counts[i] = r.out.records[i].bytes;  // out_ == targets_ now
    x_.receive.assign(in_.size(), 0);
    neighbor_alltoall(nonnull(send_counts), nonnull(x_.receive));
    port_.stats().messages_sent += out_.size();
    port_.stats().bytes_sent += out_.size() * sizeof(std::uint64_t);
    largest_count_ = agreed[1];
    largest_volume_ = agreed[2];
    counts_known_ = fixed_pattern_;
  }

  // Collective. Sources come from one MPI_Alltoall of flags: O(P) per PE, once per pattern.
  void rebuild() {
    const int size = port_.size();
    out_ = targets_;
    std::vector<int> sends_to(static_cast<std::size_t>(size), 0), sends_here(static_cast<std::size_t>(size), 0);
    for (const int p : out_) sends_to[static_cast<std::size_t>(p)] = 1;
    mpi_check(MPI_Alltoall(sends_to.data(), 1, MPI_INT, sends_here.data(), 1, MPI_INT, comm_), "MPI_Alltoall");
    in_.clear();
    for (int p = 0; p < size; ++p) {
      if (sends_here[static_cast<std::size_t>(p)] != 0) in_.push_back(p);
    }
    if constexpr (!simulated_build) {  // SMPI has no neighbourhood collectives: see neighbor_alltoallv
      if (graph_ != MPI_COMM_NULL) MPI_Comm_free(&graph_);
      mpi_check(MPI_Dist_graph_create_adjacent(comm_, static_cast<int>(in_.size()), nonnull(in_), MPI_UNWEIGHTED,
                                               static_cast<int>(out_.size()), nonnull(out_), MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, 0, &graph_),
                "MPI_Dist_graph_create_adjacent");
    }
    built_ = true;
    int degree = static_cast<int>(std::max<std::size_t>({in_.size(), out_.size(), 1}));
    mpi_check(MPI_Allreduce(MPI_IN_PLACE, &degree, 1, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
    chunk_ = std::max<std::uint64_t>(1, std::min<std::uint64_t>(limit_, INT_MAX / degree));
    ++port_.stats().neighbor_graphs;
  }

  /// One count per neighbour: MPI_Neighbor_alltoall on the graph.
  void neighbor_alltoall(const std::uint64_t* send, std::uint64_t* receive) {
    if constexpr (simulated_build) {
      point_to_point([&](std::size_t j, MPI_Request* req) {
        return MPI_Irecv(receive + j, 1, MPI_UINT64_T, in_[j], 0, comm_, req);
      }, [&](std::size_t i, MPI_Request* req) {
        return MPI_Isend(send + i, 1, MPI_UINT64_T, out_[i], 0, comm_, req);
      });
    } else {
      mpi_check(MPI_Neighbor_alltoall(send, 1, MPI_UINT64_T, receive, 1, MPI_UINT64_T, graph_),
                "MPI_Neighbor_alltoall");
    }
  }

  /// MPI_Neighbor_alltoallv of bytes on the graph.
  void neighbor_alltoallv(const std::byte* sb, const int* sc, const int* sd, std::byte* rb, const int* rc,
                          const int* rd) {
    if constexpr (simulated_build) {
      point_to_point([&](std::size_t j, MPI_Request* req) {
        return MPI_Irecv(rb + rd[j], rc[j], MPI_BYTE, in_[j], 0, comm_, req);
      }, [&](std::size_t i, MPI_Request* req) {
        return MPI_Isend(sb + sd[i], sc[i], MPI_BYTE, out_[i], 0, comm_, req);
      });
    } else {
      mpi_check(MPI_Neighbor_alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, graph_), "MPI_Neighbor_alltoallv");
    }
  }

  /// SMPI 3.32 declares the neighbourhood collectives but does not implement them. The simulation
  /// runs Open MPI's basic algorithm for them instead (coll/basic: a receive posted from every
  /// source, a send to every destination, empty ones included, then wait for all), on the
  /// exchange's own communicator, where only this method's calls travel, in order.
  template <class Receive, class Send>
  void point_to_point(Receive&& receive, Send&& send) {
    requests_.assign(in_.size() + out_.size(), MPI_REQUEST_NULL);
    for (std::size_t j = 0; j < in_.size(); ++j) mpi_check(receive(j, &requests_[j]), "MPI_Irecv");
    for (std::size_t i = 0; i < out_.size(); ++i) mpi_check(send(i, &requests_[in_.size() + i]), "MPI_Isend");
    mpi_check(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
  std::vector<MPI_Request> requests_;  // point_to_point's: simulations only

  bool built_ = false;         // out_, in_ and chunk_ (and graph_ outside simulations) describe a pattern
  std::uint64_t largest_count_ = 0, largest_volume_ = 0;  // of any PE's records, of any PE's volume
  MPI_Comm graph_ = MPI_COMM_NULL;
  std::vector<int> targets_;  // this run's destinations
  std::vector<int> out_;      // the graph's destinations and sources
  std::vector<int> in_;
  std::uint64_t chunk_ = 1;
};

}  // namespace

std::unique_ptr<exchange_method_impl> make_mpi_alltoallv(exchange_port& port, bool fixed_pattern) {
  return std::make_unique<mpi_alltoallv_method>(port, fixed_pattern);
}

std::unique_ptr<exchange_method_impl> make_mpi_neighbor(exchange_port& port, bool fixed_pattern) {
  return std::make_unique<mpi_neighbor_method>(port, fixed_pattern);
}

}  // namespace transit::detail
