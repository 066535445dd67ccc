#pragma once
// What the one-sided kernels (hotspot.cpp, atomics.cpp) share: the options that choose the
// request topology and the progress mode, and their one_sided_options.
#include <string>

#include "cli.hpp"
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
inline void add_one_sided_options(CLI::App& sub, one_sided_choice& choice) {
  sub.add_option("--topology", choice.topology, "fcg, mfcg (default), cfcg, hypercube or mpi-rma")
      ->check(one_of({"fcg", "mfcg", "cfcg", "hypercube", "mpi-rma"}))
      ->type_name("T");
  sub.add_option("--progress", choice.progress, "polling (default) or helper")
      ->check(one_of({"polling", "helper"}))
      ->type_name("P");
}

}  // namespace transit::bench
