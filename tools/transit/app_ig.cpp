// transit app ig: bale's index gather (apps/ig) with its options -n -N -T.
#include <string>

#include "app.hpp"
#include "ig/ig.hpp"

namespace transit::bench {

namespace {

apps::ig_options ig_args;  // read-only once the job runs

void add_ig_options(CLI::App& sub) {
  sub.add_option("-n,--l_num_req", ig_args.requests_per_pe, "reads per PE from the table (default 5000000)")
      ->transform(bale_count("a number of requests"))
      ->type_name("NUM");
  sub.add_option("-N,--num_req", ig_args.requests_total, "reads over all PEs (takes precedence over -n)")
      ->transform(bale_count("a number of requests"))
      ->type_name("NUM");
  sub.add_option("-T,--l_tbl_size", ig_args.table_per_pe, "table entries per PE (default 10000)")
      ->transform(bale_count("a number of entries", 1))
      ->type_name("SIZE");
  add_bale_std_options(sub, ig_args.std);
}

/// The options as they were taken, for the banner (bale echoes its argv).
std::string ig_line() {
  const auto& a = ig_args;
  std::string line = "transit app ig -n " + std::to_string(a.requests_per_pe);
  if (a.requests_total != 0) line += " -N " + std::to_string(a.requests_total);
  return line + " -T " + std::to_string(a.table_per_pe) + " " + bale_std_line(a.std);
}

const bool registered = register_app({
    .name = "ig",
    .summary = "bale's index gather: random reads of a distributed table",
    .add_options = add_ig_options,
    .run = [](context& ctx) { return apps::ig_main(ctx, ig_args, ig_line()); },
});

}  // namespace

}  // namespace transit::bench
