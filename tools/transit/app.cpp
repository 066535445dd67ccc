// transit app NAME [bale's options]: bale's applications on transit (apps/, issue 38), with
// bale's command line (its short options and long names: `-n 1000 -T 100 -M 10 -j out.json`),
// its output on stderr or in its JSON file (-j), its self-check deciding the exit status, and -M
// choosing transit's styles by bale's bits: 1 AGP (global_array), 2 exstack (sparse_exchange),
// 8 conveyor (streamer).
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "cli.hpp"
#include "histo/histo.hpp"

namespace transit::bench {

namespace {

std::string chosen;               // the application the command line named
apps::histo_options histo_args;   // its options (read-only once the job runs)

constexpr std::int64_t max_count = std::int64_t{1} << 46;  // updates, table entries: far beyond memory

void add_std_options(CLI::App& sub, apps::bale_std_options& o) {
  sub.add_option("-b,--buf_cnt", o.buf_cnt, "items per destination in an exstack round (default 1024)")
      ->transform(integer_in<std::int64_t>(1, std::int64_t{1} << 30, "a positive integer up to 2^30"))
      ->type_name("BUF");
  sub.add_option("-c,--cores_per_node", o.cores_per_node, "cores per node, for the injection bandwidth figure")
      ->transform(integer_in<int>(0, 1 << 20, "an integer from 0 to 2^20"))
      ->type_name("CPN");
  add_flag_once(sub, "-D,--dump_files", o.dump_files, "dump files for debugging (bale's option)");
  sub.add_option("-j,--json_output", o.json_output, "write the results to FILE as JSON, not to stderr")
      ->type_name("FILE");
  sub.add_option("-M,--models_mask", o.models_mask,
                 "styles to run, added up: 1 AGP (global_array), 2 exstack (sparse_exchange), 8 conveyor "
                 "(streamer); 4 and 16 are bale's exstack2 and alternate, skipped (default 15)")
      ->transform(integer_in<std::int64_t>(0, 31, "a mask from 0 to 31 (1 AGP, 2 exstack, 8 conveyor)"))
      ->type_name("MASK");
  sub.add_option("-s,--seed", o.seed, "seed of the random streams (default 122222)")
      ->transform(integer_in<std::int64_t>(-(std::int64_t{1} << 62), std::int64_t{1} << 62,
                                           "an integer of magnitude at most 2^62"))
      ->type_name("SEED");
}

void add_histo(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("histo", "bale's histo: random increments of a distributed table");
  const auto count = [](const char* what) {
    return integer_in<std::int64_t>(0, max_count, std::string(what) + " from 0 to 2^46");
  };
  sub->add_option("-n,--l_num_updates", histo_args.updates_per_pe, "updates per PE (default 5000000)")
      ->transform(count("a number of updates"))
      ->type_name("NUM");
  sub->add_option("-N,--num_updates", histo_args.updates_total, "updates over all PEs (takes precedence over -n)")
      ->transform(count("a number of updates"))
      ->type_name("NUM");
  sub->add_option("-T,--table_size", histo_args.table_per_pe, "table entries per PE (default 10000)")
      ->transform(integer_in<std::int64_t>(1, max_count, "a number of entries from 1 to 2^46"))
      ->type_name("SIZE");
  add_std_options(*sub, histo_args.std);
  sub->parse_complete_callback([] { chosen = "histo"; });
}

/// The options as they were taken, for the banner (bale echoes its argv).
std::string histo_line() {
  const auto& a = histo_args;
  std::string line = "transit app histo -n " + std::to_string(a.updates_per_pe);
  if (a.updates_total != 0) line += " -N " + std::to_string(a.updates_total);
  line += " -T " + std::to_string(a.table_per_pe) + " -s " + std::to_string(a.std.seed) + " -M " +
          std::to_string(a.std.models_mask) + " -b " + std::to_string(a.std.buf_cnt);
  if (!a.std.json_output.empty()) line += " -j " + a.std.json_output;
  return line;
}

int app_command(context& ctx) {
  if (chosen == "histo") return apps::histo_main(ctx, histo_args, histo_line());
  return 2;  // unreachable: CLI11 requires one application
}

const bool registered = register_command({
    .name = "app",
    .summary = "bale's applications (histo), with bale's options and self-checks",
    .add_options =
        [](CLI::App& app) {
          app.require_subcommand(1);
          auto formatter = std::make_shared<CLI::Formatter>();  // its own: the top level's says COMMAND
          formatter->label("SUBCOMMAND", "APP");
          app.formatter(formatter);
          add_histo(app);
        },
    .run = app_command,
});

}  // namespace

}  // namespace transit::bench
