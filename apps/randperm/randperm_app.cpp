// randperm as `transit app randperm` runs it: bale's options -n -N and the standard ones.
#include "common/bale_options.hpp"
#include "randperm/randperm.hpp"

namespace transit::apps {

app_entry randperm_app() {
  static randperm_options args;  // read-only once the job runs
  const option_table own = {
      bale_count_option("-n,--l_perm_size", "entries per PE (default 1000000)", args.entries_per_pe,
                        "a number of entries"),
      bale_count_option("-N,--perm_size", "entries over all PEs (takes precedence over -n)", args.entries_total,
                        "a number of entries"),
  };
  return {.name = "randperm",
          .summary = "bale's random permutation: darts thrown at a distributed array",
          .options = own + bale_std_option_table(args.std),
          .run = [](context& ctx) {
            // The options as they were taken, for the banner (bale echoes its argv).
            return randperm_main(ctx, args,
                                 bale_counts_line("randperm", args.entries_per_pe, args.entries_total) + " " +
                                     bale_std_line(args.std));
          }};
}

}  // namespace transit::apps
