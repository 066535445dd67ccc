// randperm as `transit app randperm` runs it: bale's options -n -N and the standard ones.
#include "common/bale_options.hpp"
#include "randperm/randperm.hpp"

namespace transit::apps {

app_entry randperm_app() {
  static randperm_options args;  // read-only once the job runs
  return bale_counts_app("randperm", "bale's random permutation: darts thrown at a distributed array", randperm_main,
                         args, {"l_perm_size", "perm_size", "entries per PE", "entries over all PEs",
                                "a number of entries", &args.entries_per_pe, &args.entries_total});
}

}  // namespace transit::apps
