// The one-sided engines' node memory on the mpi backend: one MPI_Win_allocate_shared window per
// node for the PEs' parts, a rank's segment holding the parts of its PE threads
// (--transit-threads-per-rank), and in helper mode a communicator of the nodes' first ranks for the
// helpers. Polling mode (no helper) takes no for an answer, alike on all of a node's PEs: in a
// simulation (SMPI would not charge the time of a load or store), when a node holds part of a
// rank's PE threads, when a node's ranks are not all on one host, or when MPI_Win_allocate_shared
// fails on any of them. Which thread calls MPI:
//  - one PE per rank, or PE threads that each call MPI: the rank's first PE thread for set-up and
//    teardown, and the helper's own thread (so MPI must run at MPI_THREAD_MULTIPLE);
//  - a communication thread: that thread for everything, the helper being one of its services
//    (MPI_THREAD_FUNNELED is enough, and no thread is added: the thread that already polls MPI
//    serves the node's one-sided requests, as issue 26 asks).
// The rank's first PE thread makes the rank's MPI calls; the rank's PE threads meet in its
// rank_lanes to give it their parts' sizes and to learn every part's address.
#include <mpi.h>

#include <map>
#include <string>
#include <stdexcept>
#include <vector>

#include "transport/mpi/comm_thread.hpp"
#include "transport/mpi/transport.hpp"
#include "transit/detail/core/error.hpp"

namespace transit::detail {

namespace {

std::string mpi_error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

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
    if (!hub_ && setup.helper) {
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
    std::shared_ptr<part_rendezvous> rank;  // where the rank's PE threads meet
    if (side.lanes != nullptr)
      rank = side.lanes->board().meet<part_rendezvous>(side.k, lanes_,
                                                       [&] { return std::make_shared<part_rendezvous>(lanes_); });
    if (lane_ != 0) {
      // The rank's first PE thread makes the rank's MPI calls: it needs this part's size, and
      // publishes every part's address.
      rank->give_size(lane_, setup.part_bytes);
      setup.wait([&] { return rank->published(); }, "one-sided set-up (the rank's shared memory)");
      parts_ = rank->parts();
      if (parts_.empty()) why_not_ = "the rank's first PE thread found no shared memory for this node";
      return;
    }
    std::vector<std::uint64_t> sizes{setup.part_bytes};
    if (rank) {
      rank->give_size(0, setup.part_bytes);
      setup.wait([&] { return rank->sizes_given(); }, "one-sided set-up (the rank's PE threads' part sizes)");
      sizes = rank->sizes();
    }
    const int mpi_rank = pe / lanes_;
    const bool master = m.local_rank(pe) == 0;
    on_helper_side([&] { allocate(hub_ ? hub_->comm() : side.own_comm, m, node, mpi_rank, master, setup.helper, sizes); });
    if (rank) rank->publish(parts_);  // empty: not shared
  }

  /// Whether this node's PEs share memory (always, once constructed, with a helper).
  bool shared() const noexcept { return why_not_.empty(); }
  const std::string& why_not() const noexcept { return why_not_; }

  ~mpi_node_memory() override {
    // Not the rank's first PE thread: nothing of MPI's here. A failing job: MPI_Win_free is
    // collective over the node, whose other ranks may never come; the job ends without it.
    if (window_ == MPI_WIN_NULL || abandoned_) return;
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
  void abandon() noexcept override { abandoned_ = true; }  // MPI ends the whole job on failure

 private:
  // On the thread that calls MPI for this rank; collective over `comm`'s ranks (one per rank).
  // Without a helper, a node that cannot share memory leaves parts_ empty and says why in why_not_.
  void allocate(MPI_Comm comm, const machine& m, int node, int mpi_rank, bool master, bool helper,
                const std::vector<std::uint64_t>& sizes) {
    mpi_check(MPI_Comm_split(comm, node, m.local_rank(mpi_rank * lanes_), &node_comm_), "MPI_Comm_split");
    int ranks_on_node = 0;
    mpi_check(MPI_Comm_size(node_comm_, &ranks_on_node), "MPI_Comm_size");
    if (!simulated_build && !helper) {  // a simulation shares no memory without a helper (unshareable)
      // Every rank of a node spread over hosts sees fewer ranks on its host than on its node, so
      // all of them give up alike.
      MPI_Comm host = MPI_COMM_NULL;
      mpi_check(MPI_Comm_split_type(node_comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host), "MPI_Comm_split_type");
      int on_host = 0;
      mpi_check(MPI_Comm_size(host, &on_host), "MPI_Comm_size");
      MPI_Comm_free(&host);
      if (on_host != ranks_on_node) {
        why_not_ = concat("node ", node, " has ", ranks_on_node, " ranks, of which ", on_host,
                          " are on this host: its ranks are not all on one host");
        MPI_Comm_free(&node_comm_);
        return;
      }
    }
    std::size_t segment = 64;  // room to align the segment's start
    for (const auto s : sizes) segment += align64(s);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* base = nullptr;
    const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(segment), 1, info, node_comm_, &base, &window_);
    MPI_Info_free(&info);
    if (!helper) {
      // The node's ranks agree: either all of them share the window, or none keeps it.
      int here = rc == MPI_SUCCESS ? 1 : 0;
      int everywhere = 0;
      mpi_check(MPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, node_comm_), "MPI_Allreduce");
      if (everywhere == 0) {
        if (here != 0) MPI_Win_free(&window_);
        window_ = MPI_WIN_NULL;
        MPI_Comm_free(&node_comm_);
        why_not_ = concat("MPI_Win_allocate_shared failed on ", here != 0 ? "another rank of" : "this rank of", " node ",
                          node, here != 0 ? "" : concat(": ", mpi_error_text(rc)));
        return;
      }
    }
    if (rc != MPI_SUCCESS) {
      MPI_Comm_free(&node_comm_);
      window_ = MPI_WIN_NULL;
      mpi_check(rc, "MPI_Win_allocate_shared (the PEs of an emulated node must share memory)");
    }
    // Where each rank of the node keeps its PE threads' parts: its MPI rank, then their sizes.
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
    parts_.assign(static_cast<std::size_t>(m.pes_on_node(node)), nullptr);
    for (std::size_t l = 0; l < parts_.size(); ++l) {
      const int pe = m.pe_on_node(node, static_cast<int>(l));
      const auto it = parts_of_rank.find(pe / lanes_);
      TRANSIT_ASSERT(it != parts_of_rank.end(), "a node holds its PEs' whole ranks (checked with the options)");
      parts_[l] = it->second[static_cast<std::size_t>(pe % lanes_)];
    }
    if (helper) mpi_check(MPI_Comm_split(comm, master ? 0 : MPI_UNDEFINED, node, &masters_), "MPI_Comm_split");
  }

  comm_thread_hub* hub_ = nullptr;  // the rank's communication thread, if it has one
  int lanes_ = 1, lane_ = 0;
  int service_ = -1;
  int node_ = 0;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  MPI_Comm masters_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<std::byte*> parts_;  // by local rank on the node; empty when not shared
  std::string why_not_;
  bool abandoned_ = false;
};

// Without a helper, why no node of the job can share memory before any MPI call, alike everywhere.
std::string unshareable(const node_memory_setup& setup, int lanes) {
  if (setup.helper) return {};  // checked with the options; the thread level and MPI say the rest
  if constexpr (simulated_build) return "a simulated run: SMPI would not charge the time of loads and stores";
  const machine& m = *setup.m;
  for (int node = 0; node < m.num_nodes(); ++node) {
    const int first = m.pe_on_node(node, 0);
    const int pes = m.pes_on_node(node);
    if (first % lanes != 0 || pes % lanes != 0)
      return concat("node ", node, " holds ", pes, " PEs from PE ", first, ", part of a rank of ", lanes,
                    " PE threads (MPI shares memory between whole ranks)");
  }
  return {};
}

std::unique_ptr<node_memory> make_mpi_node_memory(int pe, const mpi_side& side, const node_memory_setup& setup) {
  std::string why_not = unshareable(setup, side.lane_count);
  if (why_not.empty()) {
    auto memory = std::make_unique<mpi_node_memory>(pe, side, setup);
    if (memory->shared()) return memory;
    why_not = memory->why_not();
  }
  if (setup.why_not != nullptr) *setup.why_not = why_not;
  return nullptr;
}

}  // namespace

std::unique_ptr<node_memory> mpi_transport::make_node_memory(const node_memory_setup& setup) {
  mpi_side side;
  side.own_comm = comm_;
  side.lanes = lanes_.get();
  side.lane = lane_;
  side.lane_count = lane_count_;
  side.k = node_memories_made_++;
  return make_mpi_node_memory(rank_, side, setup);
}

std::unique_ptr<node_memory> comm_thread_lane::make_node_memory(const node_memory_setup& setup) {
  mpi_side side;
  side.hub = &hub_;
  side.lanes = lanes_.get();
  side.lane = lane_;
  side.lane_count = lane_count_;
  side.k = node_memories_made_++;
  return make_mpi_node_memory(rank_, side, setup);
}

}  // namespace transit::detail
