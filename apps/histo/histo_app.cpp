// histo as `transit app histo` runs it: bale's options -n -N -T and the standard ones.
#include "common/bale_options.hpp"
#include "histo/histo.hpp"

namespace transit::apps {

app_entry histo_app() {
  static histo_options args;  // read-only once the job runs
  return bale_counts_app("histo", "bale's histo: random increments of a distributed table", histo_main, args,
                         {"l_num_updates", "num_updates", "updates per PE", "updates over all PEs",
                          "a number of updates", &args.updates_per_pe, &args.updates_total},
                         {"table_size", &args.table_per_pe});
}

}  // namespace transit::apps
