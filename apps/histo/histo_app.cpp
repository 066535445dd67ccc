// histo as `transit app histo` runs it: bale's options -n -N -T and the standard ones.
#include "common/bale_options.hpp"
#include "histo/histo.hpp"

namespace transit::apps {

app_entry histo_app() {
  static histo_options args;  // read-only once the job runs
  const option_table own = {
      bale_count_option("-n,--l_num_updates", "updates per PE (default 5000000)", args.updates_per_pe,
                        "a number of updates"),
      bale_count_option("-N,--num_updates", "updates over all PEs (takes precedence over -n)", args.updates_total,
                        "a number of updates"),
      bale_count_option("-T,--table_size", "table entries per PE (default 10000)", args.table_per_pe,
                        "a number of entries", 1, "SIZE"),
  };
  return {.name = "histo",
          .summary = "bale's histo: random increments of a distributed table",
          .options = own + bale_std_option_table(args.std),
          .run = [](context& ctx) {
            // The options as they were taken, for the banner (bale echoes its argv).
            return histo_main(ctx, args,
                              bale_counts_line("histo", args.updates_per_pe, args.updates_total) + " -T " +
                                  std::to_string(args.table_per_pe) + " " + bale_std_line(args.std));
          }};
}

}  // namespace transit::apps
