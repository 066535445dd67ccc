// ig as `transit app ig` runs it: bale's options -n -N -T and the standard ones.
#include "common/bale_options.hpp"
#include "ig/ig.hpp"

namespace transit::apps {

app_entry ig_app() {
  static ig_options args;  // read-only once the job runs
  const option_table own = {
      bale_count_option("-n,--l_num_req", "reads per PE from the table (default 5000000)", args.requests_per_pe,
                        "a number of requests"),
      bale_count_option("-N,--num_req", "reads over all PEs (takes precedence over -n)", args.requests_total,
                        "a number of requests"),
      bale_count_option("-T,--l_tbl_size", "table entries per PE (default 10000)", args.table_per_pe,
                        "a number of entries", 1, "SIZE"),
  };
  return {.name = "ig",
          .summary = "bale's index gather: random reads of a distributed table",
          .options = own + bale_std_option_table(args.std),
          .run = [](context& ctx) {
            // The options as they were taken, for the banner (bale echoes its argv).
            return ig_main(ctx, args,
                           bale_counts_line("ig", args.requests_per_pe, args.requests_total) + " -T " +
                               std::to_string(args.table_per_pe) + " " + bale_std_line(args.std));
          }};
}

}  // namespace transit::apps
