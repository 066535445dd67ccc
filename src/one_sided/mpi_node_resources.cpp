// Helper mode on the mpi backend: one MPI_Win_allocate_shared window per node for the PEs' parts,
// a rank's segment holding the parts of its PE threads (--transit-threads-per-rank), and a
// communicator of the nodes' first ranks for the helpers. Which thread calls MPI:
//  - one PE per rank, or PE threads that each call MPI: the rank's first PE thread for set-up and
//    teardown, and the helper's own thread (so MPI must run at MPI_THREAD_MULTIPLE);
//  - a communication thread: that thread for everything, the helper being one of its services
//    (MPI_THREAD_FUNNELED is enough, and no thread is added: the thread that already polls MPI
//    serves the node's one-sided requests, as issue 26 asks).
// The rank's first PE thread makes the rank's MPI calls and hands the parts' addresses to the
// rank's other PE threads as setup messages.
#include <mpi.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "transport/mpi/mpi_comm_thread.hpp"
#include "transport/mpi/mpi_transport.hpp"
#include "node_resources.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/runtime/context.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace transit::detail {

namespace {

std::byte* align64_address(void* p) {
  return reinterpret_cast<std::byte*>(align64(reinterpret_cast<std::uintptr_t>(p)));
}

class mpi_node_resources final : public node_resources {
 public:
  mpi_node_resources(context& ctx, std::uint32_t channel, std::size_t part_bytes) {
    transport& net = context_access::net(ctx);
    mpi_transport* own_mpi = nullptr;
    if (auto* lane = dynamic_cast<comm_thread_lane*>(&net)) {
      hub_ = &lane->hub();
      lanes_ = lane->lanes();
      lane_ = lane->lane();
    } else {
      own_mpi = dynamic_cast<mpi_transport*>(&net);
      TRANSIT_ASSERT(own_mpi != nullptr, "the mpi backend runs on mpi_transport or a communication thread's lane");
      lanes_ = own_mpi->lanes();
      lane_ = own_mpi->lane();
      int provided = MPI_THREAD_SINGLE;
      mpi_check(MPI_Query_thread(&provided), "MPI_Query_thread");
      if (provided < MPI_THREAD_MULTIPLE)
        throw_invalid("MPI thread level for progress_mode::helper_thread",
                      provided == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" : "below MPI_THREAD_MULTIPLE",
                      "MPI_THREAD_MULTIPLE: its helper thread calls MPI; start the job with "
                      "TRANSIT_MPI_THREADS=multiple (or --transit-mpi-threads=multiple)");
    }
    const machine& m = ctx.machine();
    const int node = m.node_of(ctx.rank());
    node_ = node;
    const int pes = m.pes_on_node(node);
    parts_.assign(static_cast<std::size_t>(pes), nullptr);
    const int first_pe_of_rank = ctx.rank() - lane_;
    if (lane_ != 0) {
      // The rank's first PE thread makes the rank's MPI calls: it needs this part's size, and
      // hands back every part's address.
      send_setup_values(ctx, channel, first_pe_of_rank, setup_tag::part_size,
                        {static_cast<std::uint64_t>(lane_), static_cast<std::uint64_t>(part_bytes)});
      bool parts_missing = true;
      receive_setup_values(
          ctx, channel,
          [&](setup_tag, const std::vector<std::uint64_t>& v) {
            for (std::size_t l = 0; l < parts_.size(); ++l) parts_[l] = reinterpret_cast<std::byte*>(v[l]);
            parts_missing = false;
          },
          [&] { return !parts_missing; }, "helper-mode set-up (the rank's shared memory)");
      return;
    }
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(lanes_), 0);
    sizes[0] = part_bytes;
    int sizes_missing = lanes_ - 1;
    receive_setup_values(
        ctx, channel,
        [&](setup_tag, const std::vector<std::uint64_t>& v) {
          sizes[v[0]] = v[1];
          --sizes_missing;
        },
        [&] { return sizes_missing == 0; }, "helper-mode set-up (the rank's PE threads' part sizes)");
    const int mpi_rank = ctx.rank() / lanes_;
    const bool master = m.local_rank(ctx.rank()) == 0;
    const auto make = [&](MPI_Comm comm) { allocate(comm, m, node, mpi_rank, master, sizes); };
    if (hub_) {
      hub_->run_on_comm_thread([&] { make(hub_->comm()); });
    } else {
      make(own_mpi->comm());
    }
    std::vector<std::uint64_t> addresses;
    for (std::byte* p : parts_) addresses.push_back(reinterpret_cast<std::uintptr_t>(p));
    for (int l = 1; l < lanes_; ++l) send_setup_values(ctx, channel, first_pe_of_rank + l, setup_tag::parts, addresses);
  }

  ~mpi_node_resources() override {
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
      node_resources::start_helper(std::move(round), std::move(failed));
    }
  }
  void stop_helper() override {
    if (!hub_) {
      node_resources::stop_helper();
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

std::unique_ptr<node_resources> make_mpi_node_resources(context& ctx, std::uint32_t channel, std::size_t part_bytes) {
  return std::make_unique<mpi_node_resources>(ctx, channel, part_bytes);
}

}  // namespace transit::detail
