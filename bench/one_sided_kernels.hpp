#pragma once
// What the one-sided kernels (hotspot.cpp, atomics.cpp) share: the options that choose the
// request topology and the progress mode, and their one_sided_options.
#include <string>
#include <vector>

#include "common/option_table.hpp"
#include "transit/transit.hpp"

namespace transit::bench {

struct one_sided_choice {
  std::string topology = "mfcg";
  std::string progress = "polling";

  one_sided_options options() const {
    one_sided_options o;
    o.topology = parse_request_topology(topology);
    o.progress = parse_progress_mode(progress);
    return o;
  }
};

/// --topology and --progress, bound to `choice`.
inline apps::option_table one_sided_options_of(one_sided_choice& choice) {
  return {
      {.names = "--topology",
       .help = "fcg, mfcg (default), cfcg, hypercube or mpi-rma",
       .target = &choice.topology,
       .check = apps::one_of_names{{"fcg", "mfcg", "cfcg", "hypercube", "mpi-rma"}},
       .type_name = "T"},
      {.names = "--progress",
       .help = "polling (default) or helper",
       .target = &choice.progress,
       .check = apps::one_of_names{{"polling", "helper"}},
       .type_name = "P"},
  };
}

}  // namespace transit::bench
