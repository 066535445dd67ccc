// The one-sided engines' node memory on the local backend: the PEs of a node meet in the job's
// local_world, give their parts' sizes, and the node's first PE makes one allocation for all of
// them; in helper mode the nodes' first PEs meet there too for the helpers' world (one inbox per
// node). Always shared: one process, one address space; the addresses are shared in memory, never
// sent.
#include <cstdlib>
#include <new>

#include "transit/detail/core/error.hpp"
#include "transport/local/transport.hpp"

namespace transit::detail {

namespace {

// A node's parts in one allocation, freed with the last of its PEs' node memories, in a failing
// job too: every PE that touches the block holds it, so once the last one is gone nothing can.
class node_block final : public part_rendezvous {
 public:
  using part_rendezvous::part_rendezvous;
  ~node_block() override { std::free(block); }
  std::byte* block = nullptr;
};

// The helpers' world, freed with the last of the nodes' first PEs' node memories (each has
// stopped its helper thread by then, failing or not).
struct helpers_world {
  explicit helpers_world(int nodes) : world(std::make_unique<local_world>(nodes)) {}
  std::unique_ptr<local_world> world;
};

class local_node_memory final : public node_memory {
 public:
  local_node_memory(local_world& job, std::uint64_t k, int pe, const node_memory_setup& setup) {
    const machine& m = *setup.m;
    node_ = m.node_of(pe);
    const int local = m.local_rank(pe);
    const int pes = m.pes_on_node(node_);
    // Keys of the k-th node memory of the job: one per node, and the helpers' one.
    const std::uint64_t key = k << 32;
    block_ = job.board().meet<node_block>(key | static_cast<std::uint32_t>(node_), pes,
                                          [&] { return std::make_shared<node_block>(pes); });
    block_->give_size(local, setup.part_bytes);
    if (local == 0) {
      setup.wait([&] { return block_->sizes_given(); }, "one-sided set-up (the node's part sizes)");
      std::size_t total = 0;
      for (const auto s : block_->sizes()) total += align64(s);
      block_->block = static_cast<std::byte*>(std::aligned_alloc(64, std::max<std::size_t>(total, 64)));
      if (block_->block == nullptr) throw std::bad_alloc();
      std::vector<std::byte*> parts;
      std::size_t offset = 0;
      for (const auto s : block_->sizes()) {
        parts.push_back(block_->block + offset);
        offset += align64(s);
      }
      block_->publish(std::move(parts));
      if (setup.helper)
        helpers_ = job.board().meet<helpers_world>(key | 0xffffffffu, m.num_nodes(),
                                                   [&] { return std::make_shared<helpers_world>(m.num_nodes()); });
    } else {
      setup.wait([&] { return block_->published(); }, "one-sided set-up (shared memory)");
    }
    parts_ = block_->parts();
  }

  std::byte* part(int local) const override { return parts_[static_cast<std::size_t>(local)]; }
  std::unique_ptr<transport> make_helper_transport() override {
    TRANSIT_ASSERT(helpers_ != nullptr, "only a node's first PE runs a helper, in helper mode");
    return std::make_unique<local_transport>(*helpers_->world, node_);
  }
  // Nothing to keep: what a failing PE shares is held by every peer that may still touch it, and
  // the last of them frees it (an MPI window, by contrast, can only be freed collectively).
  void abandon() noexcept override {}

 private:
  int node_ = 0;
  std::shared_ptr<node_block> block_;
  std::shared_ptr<helpers_world> helpers_;  // the node's first PE only
  std::vector<std::byte*> parts_;
};

}  // namespace

std::unique_ptr<node_memory> local_transport::make_node_memory(const node_memory_setup& setup) {
  return std::make_unique<local_node_memory>(world_, node_memories_made_++, rank_, setup);
}

}  // namespace transit::detail
