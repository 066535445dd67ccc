#pragma once
// The machine a job runs on: PEs grouped into nodes (shared-memory domains). Nodes may be uneven;
// the PEs of a node need not be consecutive (under MPI they are wherever the launcher put them).
#include <span>
#include <vector>

namespace transit {

/// PEs grouped into nodes: which node each PE is on and its rank there. Immutable after
/// construction; every query is local and thread-safe. context::machine() is the job's.
class machine {
 public:
  /// All PEs on one node. Throws std::invalid_argument when num_pes < 1.
  explicit machine(int num_pes);
  /// Consecutive PEs grouped into nodes of `pes_per_node`; the last node holds the remainder.
  /// Throws std::invalid_argument when either count is below 1.
  static machine uniform(int num_pes, int pes_per_node);
  /// Node of every PE given explicitly; node ids must be 0..N-1, each used at least once
  /// (std::invalid_argument otherwise, or for an empty list).
  static machine from_node_ids(std::vector<int> node_of_pe);

  /// PEs of the job.
  int num_pes() const noexcept { return static_cast<int>(node_of_.size()); }
  /// Nodes of the job.
  int num_nodes() const noexcept { return static_cast<int>(node_pes_.size()); }
  /// Node of `pe`. Throws std::out_of_range for a bad pe.
  int node_of(int pe) const { return node_of_.at(pe); }
  /// Rank of `pe` among the PEs of its node. Throws std::out_of_range for a bad pe.
  int local_rank(int pe) const { return local_rank_.at(pe); }
  /// PEs on `node`. Throws std::out_of_range for a bad node.
  int pes_on_node(int node) const { return static_cast<int>(node_pes_.at(node).size()); }
  /// PE with the given local rank on `node`, or -1 if the node has fewer PEs.
  int pe_on_node(int node, int local) const;
  /// PEs of `node`, in local-rank order. Throws std::out_of_range for a bad node.
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
