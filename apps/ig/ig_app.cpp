// ig as `transit app ig` runs it: bale's options -n -N -T and the standard ones.
#include "common/bale_options.hpp"
#include "ig/ig.hpp"

namespace transit::apps {

app_entry ig_app() {
  static ig_options args;  // read-only once the job runs
  return bale_counts_app("ig", "bale's index gather: random reads of a distributed table", ig_main, args,
                         {"l_num_req", "num_req", "reads per PE from the table", "reads over all PEs",
                          "a number of requests", &args.requests_per_pe, &args.requests_total},
                         {"l_tbl_size", &args.table_per_pe});
}

}  // namespace transit::apps
