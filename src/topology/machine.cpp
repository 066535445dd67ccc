#include "transit/topology/machine.hpp"

#include <algorithm>

#include "transit/detail/core/error.hpp"

namespace transit {

machine::machine(int num_pes) {
  if (num_pes < 1) detail::throw_invalid("number of PEs", num_pes, "at least 1");
  node_of_.assign(num_pes, 0);
  index();
}

machine machine::uniform(int num_pes, int pes_per_node) {
  if (num_pes < 1) detail::throw_invalid("number of PEs", num_pes, "at least 1");
  if (pes_per_node < 1) detail::throw_invalid("PEs per node", pes_per_node, "at least 1");
  machine m;
  m.node_of_.resize(num_pes);
  for (int pe = 0; pe < num_pes; ++pe) m.node_of_[pe] = pe / pes_per_node;
  m.index();
  return m;
}

machine machine::from_node_ids(std::vector<int> node_of_pe) {
  if (node_of_pe.empty()) detail::throw_invalid("number of PEs", 0, "at least 1");
  machine m;
  m.node_of_ = std::move(node_of_pe);
  m.index();
  return m;
}

int machine::pe_on_node(int node, int local) const {
  const auto& pes = node_pes_.at(node);
  return local >= 0 && local < static_cast<int>(pes.size()) ? pes[local] : -1;
}

void machine::index() {
  const int nodes = *std::max_element(node_of_.begin(), node_of_.end()) + 1;
  node_pes_.assign(nodes, {});
  local_rank_.resize(node_of_.size());
  for (int pe = 0; pe < num_pes(); ++pe) {
    const int node = node_of_[pe];
    if (node < 0) detail::throw_invalid("node id of a PE", node, "a non-negative integer");
    local_rank_[pe] = static_cast<int>(node_pes_[node].size());
    node_pes_[node].push_back(pe);
  }
  for (int node = 0; node < nodes; ++node) {
    if (node_pes_[node].empty())
      detail::throw_invalid("node ids", nodes, "every node id below the largest to hold a PE");
    max_pes_per_node_ = std::max(max_pes_per_node_, pes_on_node(node));
  }
}

}  // namespace transit
