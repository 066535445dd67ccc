// transit app histo: bale's histo (apps/histo) with its options -n -N -T.
#include <string>

#include "app.hpp"
#include "histo/histo.hpp"

namespace transit::bench {

namespace {

apps::histo_options histo_args;  // read-only once the job runs

void add_histo_options(CLI::App& sub) {
  sub.add_option("-n,--l_num_updates", histo_args.updates_per_pe, "updates per PE (default 5000000)")
      ->transform(bale_count("a number of updates"))
      ->type_name("NUM");
  sub.add_option("-N,--num_updates", histo_args.updates_total, "updates over all PEs (takes precedence over -n)")
      ->transform(bale_count("a number of updates"))
      ->type_name("NUM");
  sub.add_option("-T,--table_size", histo_args.table_per_pe, "table entries per PE (default 10000)")
      ->transform(bale_count("a number of entries", 1))
      ->type_name("SIZE");
  add_bale_std_options(sub, histo_args.std);
}

/// The options as they were taken, for the banner (bale echoes its argv).
std::string histo_line() {
  const auto& a = histo_args;
  std::string line = "transit app histo -n " + std::to_string(a.updates_per_pe);
  if (a.updates_total != 0) line += " -N " + std::to_string(a.updates_total);
  return line + " -T " + std::to_string(a.table_per_pe) + " " + bale_std_line(a.std);
}

const bool registered = register_app({
    .name = "histo",
    .summary = "bale's histo: random increments of a distributed table",
    .add_options = add_histo_options,
    .run = [](context& ctx) { return apps::histo_main(ctx, histo_args, histo_line()); },
});

}  // namespace

}  // namespace transit::bench
