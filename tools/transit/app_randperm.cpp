// transit app randperm: bale's random permutation (apps/randperm) with its options -n -N.
#include <string>

#include "app.hpp"
#include "randperm/randperm.hpp"

namespace transit::bench {

namespace {

apps::randperm_options randperm_args;  // read-only once the job runs

void add_randperm_options(CLI::App& sub) {
  sub.add_option("-n,--l_perm_size", randperm_args.entries_per_pe, "entries per PE (default 1000000)")
      ->transform(bale_count("a number of entries"))
      ->type_name("NUM");
  sub.add_option("-N,--perm_size", randperm_args.entries_total, "entries over all PEs (takes precedence over -n)")
      ->transform(bale_count("a number of entries"))
      ->type_name("NUM");
  add_bale_std_options(sub, randperm_args.std);
}

/// The options as they were taken, for the banner (bale echoes its argv).
std::string randperm_line() {
  const auto& a = randperm_args;
  std::string line = "transit app randperm -n " + std::to_string(a.entries_per_pe);
  if (a.entries_total != 0) line += " -N " + std::to_string(a.entries_total);
  return line + " " + bale_std_line(a.std);
}

const bool registered = register_app({
    .name = "randperm",
    .summary = "bale's random permutation: darts thrown at a distributed array",
    .add_options = add_randperm_options,
    .run = [](context& ctx) { return apps::randperm_main(ctx, randperm_args, randperm_line()); },
});

}  // namespace

}  // namespace transit::bench
