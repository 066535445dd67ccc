#pragma once
// The machine a job runs on: PEs grouped into nodes (shared-memory domains). Nodes may be uneven;
// the PEs of a node need not be consecutive (under MPI they are wherever the launcher put them).
#include <span>
#include <vector>

namespace transit {

class machine {
 public:
  /// All PEs on one node.
  explicit machine(int num_pes);
  /// Consecutive PEs grouped into nodes of `pes_per_node`; the last node holds the remainder.
  static machine uniform(int num_pes, int pes_per_node);
  /// Node of every PE given explicitly; node ids must be 0..N-1, each used at least once.
  static machine from_node_ids(std::vector<int> node_of_pe);

  int num_pes() const noexcept { return static_cast<int>(node_of_.size()); }
  int num_nodes() const noexcept { return static_cast<int>(node_pes_.size()); }
  int node_of(int pe) const { return node_of_.at(pe); }
  int local_rank(int pe) const { return local_rank_.at(pe); }
  int pes_on_node(int node) const { return static_cast<int>(node_pes_.at(node).size()); }
  /// PE with the given local rank on `node`, or -1 if the node has fewer PEs.
  int pe_on_node(int node, int local) const;
  /// PEs of `node`, in local-rank order.
  std::span<const int> node_pes(int node) const { return node_pes_.at(node); }
  /// Largest number of PEs on any node.
  int max_pes_per_node() const noexcept { return max_pes_per_node_; }

 private:
  machine() = default;
  void index();
  std::vector<int> node_of_;
  std::vector<int> local_rank_;
  std::vector<std::vector<int>> node_pes_;
  int max_pes_per_node_ = 0;
};

}  // namespace transit
