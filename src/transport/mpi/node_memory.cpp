// Helper mode's node memory on the mpi backend: one MPI_Win_allocate_shared window per node for
// the PEs' parts, a rank's segment holding the parts of its PE threads (--transit-threads-per-rank),
// and a communicator of the nodes' first ranks for the helpers. Which thread calls MPI:
//  - one PE per rank, or PE threads that each call MPI: the rank's first PE thread for set-up and
//    teardown, and the helper's own thread (so MPI must run at MPI_THREAD_MULTIPLE);
//  - a communication thread: that thread for everything, the helper being one of its services
//    (MPI_THREAD_FUNNELED is enough, and no thread is added: the thread that already polls MPI
//    serves the node's one-sided requests, as issue 26 asks).
// The rank's first PE thread makes the rank's MPI calls; the rank's PE threads meet in its
// rank_lanes to give it their parts' sizes and to learn every part's address.
#include <mpi.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "transport/mpi/comm_thread.hpp"
#include "transport/mpi/transport.hpp"
#include "transit/detail/core/error.hpp"

namespace transit::detail {

namespace {

std::byte* align64_address(void* p) {
  return reinterpret_cast<std::byte*>(align64(reinterpret_cast<std::uintptr_t>(p)));
}

// How a PE's transport runs MPI: on its own thread (own_comm), or on the rank's communication
// thread (hub); and the rank's PE threads (lanes, null with one PE per rank).
struct mpi_side {
  MPI_Comm own_comm = MPI_COMM_NULL;
  comm_thread_hub* hub = nullptr;
  rank_lanes* lanes = nullptr;
  int lane = 0, lane_count = 1;
  std::uint64_t k = 0;  // the PE's k-th node memory
};

class mpi_node_memory final : public node_memory {
 public:
  mpi_node_memory(int pe, const mpi_side& side, const node_memory_setup& setup)
      : hub_(side.hub), lanes_(side.lane_count), lane_(side.lane) {
    if (!hub_) {
      int provided = MPI_THREAD_SINGLE;
      mpi_check(MPI_Query_thread(&provided), "MPI_Query_thread");
      if (provided < MPI_THREAD_MULTIPLE)
        throw_invalid("MPI thread level for progress_mode::helper_thread",
                      provided == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" : "below MPI_THREAD_MULTIPLE",
                      "MPI_THREAD_MULTIPLE: its helper thread calls MPI; start the job with "
                      "TRANSIT_MPI_THREADS=multiple (or --transit-mpi-threads=multiple)");
    }
    const machine& m = *setup.m;
    const int node = m.node_of(pe);
    node_ = node;
    parts_.assign(static_cast<std::size_t>(m.pes_on_node(node)), nullptr);
    std::shared_ptr<part_rendezvous> rank;  // where the rank's PE threads meet
    if (side.lanes != nullptr)
      rank = side.lanes->board().meet<part_rendezvous>(side.k, lanes_,
                                                       [&] { return std::make_shared<part_rendezvous>(lanes_); });
    if (lane_ != 0) {
      // The rank's first PE thread makes the rank's MPI calls: it needs this part's size, and
      // publishes every part's address.
      rank->give_size(lane_, setup.part_bytes);
      setup.wait([&] { return rank->published(); }, "helper-mode set-up (the rank's shared memory)");
      parts_ = rank->parts();
      return;
    }
    std::vector<std::uint64_t> sizes{setup.part_bytes};
    if (rank) {
      rank->give_size(0, setup.part_bytes);
      setup.wait([&] { return rank->sizes_given(); }, "helper-mode set-up (the rank's PE threads' part sizes)");
      sizes = rank->sizes();
    }
    const int mpi_rank = pe / lanes_;
    const bool master = m.local_rank(pe) == 0;
    on_helper_side([&] { allocate(hub_ ? hub_->comm() : side.own_comm, m, node, mpi_rank, master, sizes); });
    if (rank) rank->publish(parts_);
  }

  ~mpi_node_memory() override {
    if (window_ == MPI_WIN_NULL) return;  // not the rank's first PE thread: nothing of MPI's here
    on_helper_side([this] {
      MPI_Win_free(&window_);
      MPI_Comm_free(&node_comm_);
      if (masters_ != MPI_COMM_NULL) MPI_Comm_free(&masters_);
    });
  }

  std::byte* part(int local) const override { return parts_[static_cast<std::size_t>(local)]; }
  std::unique_ptr<transport> make_helper_transport() override {
    TRANSIT_ASSERT(masters_ != MPI_COMM_NULL, "only a node's first rank runs a helper");
    return std::make_unique<mpi_transport>(masters_);
  }
  void on_helper_side(const std::function<void()>& work) override {
    if (hub_) {
      hub_->run_on_comm_thread(work);
    } else {
      work();
    }
  }
  void start_helper(std::function<bool()> round, std::function<void(const std::exception&)> failed) override {
    if (hub_) {
      // The hub ends the job if a service throws (`failed` would wait for the hub itself).
      service_ = hub_->start_service([round = std::move(round), node = node_] {
        try {
          return round();
        } catch (const std::exception& e) {
          throw std::runtime_error(concat("one-sided helper of node ", node, ": ", e.what()));
        }
      });
    } else {
      node_memory::start_helper(std::move(round), std::move(failed));
    }
  }
  void stop_helper() override {
    if (!hub_) {
      node_memory::stop_helper();
    } else if (service_ >= 0) {
      hub_->stop_service(service_);
      service_ = -1;
    }
  }
  void abandon() noexcept override {}  // MPI ends the whole job on failure

 private:
  // On the thread that calls MPI for this rank; collective over `comm`'s ranks (one per rank).
  void allocate(MPI_Comm comm, const machine& m, int node, int mpi_rank, bool master,
                const std::vector<std::uint64_t>& sizes) {
    mpi_check(MPI_Comm_split(comm, node, m.local_rank(mpi_rank * lanes_), &node_comm_), "MPI_Comm_split");
    std::size_t segment = 64;  // room to align the segment's start
    for (const auto s : sizes) segment += align64(s);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* base = nullptr;
    const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(segment), 1, info, node_comm_, &base, &window_);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
      MPI_Comm_free(&node_comm_);
      window_ = MPI_WIN_NULL;
      mpi_check(rc, "MPI_Win_allocate_shared (the PEs of an emulated node must share memory)");
    }
    // Where each rank of the node keeps its PE threads' parts: its MPI rank, then their sizes.
    int ranks_on_node = 0;
    mpi_check(MPI_Comm_size(node_comm_, &ranks_on_node), "MPI_Comm_size");
    const auto record = static_cast<std::size_t>(lanes_) + 1;
    std::vector<std::uint64_t> mine{static_cast<std::uint64_t>(mpi_rank)};
    mine.insert(mine.end(), sizes.begin(), sizes.end());
    std::vector<std::uint64_t> all(record * static_cast<std::size_t>(ranks_on_node));
    mpi_check(MPI_Allgather(mine.data(), static_cast<int>(record), MPI_UINT64_T, all.data(), static_cast<int>(record),
                            MPI_UINT64_T, node_comm_),
              "MPI_Allgather");
    std::map<int, std::vector<std::byte*>> parts_of_rank;  // by MPI rank: its PE threads' parts
    for (int k = 0; k < ranks_on_node; ++k) {
      MPI_Aint size = 0;
      int unit = 0;
      void* at = nullptr;
      mpi_check(MPI_Win_shared_query(window_, k, &size, &unit, &at), "MPI_Win_shared_query");
      std::byte* p = align64_address(at);  // mappings are page-aligned, so every process aligns alike
      const std::uint64_t* entry = all.data() + record * static_cast<std::size_t>(k);
      auto& parts = parts_of_rank[static_cast<int>(entry[0])];
      for (int l = 0; l < lanes_; ++l) {
        parts.push_back(p);
        p += align64(entry[1 + l]);
      }
    }
    for (std::size_t l = 0; l < parts_.size(); ++l) {
      const int pe = m.pe_on_node(node, static_cast<int>(l));
      const auto it = parts_of_rank.find(pe / lanes_);
      TRANSIT_ASSERT(it != parts_of_rank.end(), "a node holds its PEs' whole ranks (checked with the options)");
      parts_[l] = it->second[static_cast<std::size_t>(pe % lanes_)];
    }
    mpi_check(MPI_Comm_split(comm, master ? 0 : MPI_UNDEFINED, node, &masters_), "MPI_Comm_split");
  }

  comm_thread_hub* hub_ = nullptr;  // the rank's communication thread, if it has one
  int lanes_ = 1, lane_ = 0;
  int service_ = -1;
  int node_ = 0;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  MPI_Comm masters_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<std::byte*> parts_;
};

}  // namespace

std::unique_ptr<node_memory> mpi_transport::make_node_memory(const node_memory_setup& setup) {
  mpi_side side;
  side.own_comm = comm_;
  side.lanes = lanes_.get();
  side.lane = lane_;
  side.lane_count = lane_count_;
  side.k = node_memories_made_++;
  return std::make_unique<mpi_node_memory>(rank_, side, setup);
}

std::unique_ptr<node_memory> comm_thread_lane::make_node_memory(const node_memory_setup& setup) {
  mpi_side side;
  side.hub = &hub_;
  side.lanes = lanes_.get();
  side.lane = lane_;
  side.lane_count = lane_count_;
  side.k = node_memories_made_++;
  return std::make_unique<mpi_node_memory>(rank_, side, setup);
}

}  // namespace transit::detail
