// transit bench: the kernel registry (each kernel file registers itself, bench/README.md) and the
// names of the routing schemes. No command line here: a front end (the transit command) builds the
// `bench KERNEL` commands from this registry.
#include <algorithm>

#include "bench.hpp"
#include "transit/detail/core/error.hpp"

namespace transit::bench {

namespace {

std::vector<kernel_entry>& registry() {
  static std::vector<kernel_entry> kernels;  // built during static initialisation
  return kernels;
}

}  // namespace

bool register_kernel(kernel_entry kernel) {
  auto& kernels = registry();
  TRANSIT_ASSERT(std::none_of(kernels.begin(), kernels.end(), [&](const auto& k) { return k.name == kernel.name; }),
                 "two bench kernels of the same name");
  TRANSIT_ASSERT(!kernel.item_sizes.empty() && kernel.run, "a bench kernel needs item sizes and a run function");
  const auto at = std::lower_bound(kernels.begin(), kernels.end(), kernel.name,
                                   [](const kernel_entry& k, const std::string& name) { return k.name < name; });
  kernels.insert(at, std::move(kernel));
  return true;
}

const std::vector<kernel_entry>& kernels() { return registry(); }

const kernel_entry* find_kernel(std::string_view name) {
  for (const auto& k : registry())
    if (k.name == name) return &k;
  return nullptr;
}

const std::vector<std::pair<std::string, scheme>>& schemes() {
  static const std::vector<std::pair<std::string, scheme>> all{{"none", scheme::none},
                                                               {"grid", scheme::grid},
                                                               {"node-aware", scheme::node_aware},
                                                               {"node-aware-advanced", scheme::node_aware_advanced},
                                                               {"mpi-raw", scheme::mpi_raw}};
  return all;
}

std::string_view to_string(scheme s) noexcept {
  for (const auto& [name, value] : schemes())
    if (value == s) return name;
  return "?";
}

}  // namespace transit::bench
