// What the backends' launches share (src/runtime/launch/common.hpp).
#include "runtime/launch/common.hpp"

#include <cstdio>
#include <optional>

#include "transit/topology/topology_manager.hpp"

namespace transit::detail {

void report_failure(int pe, const char* what) {
  std::fprintf(stderr, "transit: PE %d: %s\n", pe, what);
  std::fflush(stderr);
}

std::shared_ptr<const machine> emulated_machine(int pes, const run_options& o) {
  return std::make_shared<const machine>(o.pes_per_node > 0 ? machine::uniform(pes, o.pes_per_node) : machine(pes));
}

// The option already holds TRANSIT_PHYSICAL when only the environment set it.
std::shared_ptr<const topology_manager> job_topology(const machine& m, const run_options& o) {
  std::optional<physical_topology> physical;
  if (!o.physical.empty()) physical = physical_topology::parse(o.physical);
  return std::make_shared<const topology_manager>(topology_manager::for_job(m, physical));
}

}  // namespace transit::detail
