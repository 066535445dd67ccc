// Helper mode on the mpi backend: one MPI_Win_allocate_shared window per node for the PEs' parts,
// and a communicator of the nodes' first ranks for the helpers. The helper calls MPI from a second
// thread, so MPI must run at MPI_THREAD_MULTIPLE.
#include <mpi.h>

#include <vector>

#include "../transport/mpi_transport.hpp"
#include "node_resources.hpp"
#include "transit/core/error.hpp"
#include "transit/runtime/context.hpp"
#include "transit/runtime/detail/context_access.hpp"

namespace transit::detail {

namespace {

std::byte* align64(void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<std::byte*>((at + 63) / 64 * 64);
}

class mpi_node_resources final : public node_resources {
 public:
  mpi_node_resources(context& ctx, std::size_t part_bytes) {
    int provided = MPI_THREAD_SINGLE;
    mpi_check(MPI_Query_thread(&provided), "MPI_Query_thread");
    if (provided < MPI_THREAD_MULTIPLE)
      throw_invalid("MPI thread level for progress_mode::helper_thread",
                    provided == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" : "below MPI_THREAD_MULTIPLE",
                    "MPI_THREAD_MULTIPLE: its helper thread calls MPI; start the job with "
                    "TRANSIT_MPI_THREADS=multiple (or --transit-mpi-threads=multiple)");
    const auto* net = dynamic_cast<const mpi_transport*>(&context_access::net(ctx));
    TRANSIT_ASSERT(net != nullptr, "the mpi backend runs on mpi_transport");
    const machine& m = ctx.machine();
    const int node = m.node_of(ctx.rank());
    const int local = m.local_rank(ctx.rank());
    mpi_check(MPI_Comm_split(net->comm(), node, local, &node_comm_), "MPI_Comm_split");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* base = nullptr;
    const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(part_bytes + 64), 1, info, node_comm_, &base, &window_);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
      MPI_Comm_free(&node_comm_);
      mpi_check(rc, "MPI_Win_allocate_shared (the PEs of an emulated node must share memory)");
    }
    const int pes = m.pes_on_node(node);
    for (int l = 0; l < pes; ++l) {
      MPI_Aint size = 0;
      int unit = 0;
      void* at = nullptr;
      mpi_check(MPI_Win_shared_query(window_, l, &size, &unit, &at), "MPI_Win_shared_query");
      parts_.push_back(align64(at));  // mappings are page-aligned, so every process aligns alike
    }
    mpi_check(MPI_Comm_split(net->comm(), local == 0 ? 0 : MPI_UNDEFINED, node, &masters_), "MPI_Comm_split");
  }

  ~mpi_node_resources() override {
    MPI_Win_free(&window_);
    MPI_Comm_free(&node_comm_);
    if (masters_ != MPI_COMM_NULL) MPI_Comm_free(&masters_);
  }

  std::byte* part(int local) const override { return parts_[static_cast<std::size_t>(local)]; }
  std::unique_ptr<transport> make_helper_transport() override {
    TRANSIT_ASSERT(masters_ != MPI_COMM_NULL, "only a node's first rank runs a helper");
    return std::make_unique<mpi_transport>(masters_);
  }
  void abandon() noexcept override {}  // MPI ends the whole job on failure

 private:
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  MPI_Comm masters_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<std::byte*> parts_;
};

}  // namespace

std::unique_ptr<node_resources> make_mpi_node_resources(context& ctx, std::size_t part_bytes) {
  return std::make_unique<mpi_node_resources>(ctx, part_bytes);
}

}  // namespace transit::detail
