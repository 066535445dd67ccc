// transit app NAME [bale's options]: bale's applications on transit (apps/, issue 38), with
// bale's command line (its short options and long names: `-n 1000 -T 100 -M 10 -j out.json`),
// its output on stderr or in its JSON file (-j), its self-check deciding the exit status, and -M
// choosing transit's styles by bale's bits: 1 AGP (global_array), 2 exstack (sparse_exchange),
// 8 conveyor (streamer). Each application registers itself from its own file (app.hpp).
#include "app.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace transit::bench {

namespace {

std::vector<app_entry>& registry() {
  static std::vector<app_entry> apps;
  return apps;
}

const app_entry* chosen = nullptr;  // the application the command line named

int app_command(context& ctx) {
  if (chosen == nullptr) return 2;  // unreachable: CLI11 requires one application
  return chosen->run(ctx);
}

const bool registered = register_command({
    .name = "app",
    .summary = "bale's applications, with bale's options and self-checks",
    .add_options =
        [](CLI::App& app) {
          app.require_subcommand(1);
          auto formatter = std::make_shared<CLI::Formatter>();  // its own: the top level's says COMMAND
          formatter->label("SUBCOMMAND", "APP");
          app.formatter(formatter);
          auto& apps = registry();
          std::sort(apps.begin(), apps.end(), [](const app_entry& a, const app_entry& b) { return a.name < b.name; });
          for (const app_entry& entry : apps) {
            CLI::App* sub = app.add_subcommand(entry.name, entry.summary);
            entry.add_options(*sub);
            sub->parse_complete_callback([&entry] { chosen = &entry; });
          }
        },
    .run = app_command,
});

}  // namespace

bool register_app(app_entry app) {
  registry().push_back(std::move(app));
  return true;
}

CLI::Validator bale_count(const std::string& what, std::int64_t min) {
  constexpr std::int64_t max_count = std::int64_t{1} << 46;
  return integer_in<std::int64_t>(min, max_count, what + " from " + std::to_string(min) + " to 2^46");
}

void add_bale_std_options(CLI::App& sub, apps::bale_std_options& o) {
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

std::string bale_std_line(const apps::bale_std_options& o) {
  std::string line = "-b " + std::to_string(o.buf_cnt) + " -M " + std::to_string(o.models_mask) + " -s " +
                     std::to_string(o.seed);
  if (o.dump_files) line += " -D";
  if (!o.json_output.empty()) line += " -j " + o.json_output;
  return line;
}

}  // namespace transit::bench
