// transit app NAME [options]: bale's applications and Graph500's BFS on transit (apps/, issues 38, 52), with
// bale's command line (its short options and long names: `-n 1000 -T 100 -M 10 -j out.json`),
// its output on stderr or in its JSON file (-j), its self-check deciding the exit status, and -M
// choosing transit's styles by bale's bits: 1 AGP (global_array), 2 exstack (sparse_exchange),
// 8 conveyor (streamer). Every application exports its option table (apps/catalog); this file
// makes each table a subcommand.
#include <memory>

#include "catalog/catalog.hpp"
#include "cli.hpp"

namespace transit::cli {

namespace {

const apps::app_entry* chosen = nullptr;  // the application the command line named

int app_command(context& ctx) {
  if (chosen == nullptr) return 2;  // unreachable: CLI11 requires one application
  return chosen->run(ctx);
}

const bool registered = register_command({
    .name = "app",
    .summary = "bale's applications and Graph500's BFS, with their options and self-checks",
    .add_options =
        [](CLI::App& app) {
          app.require_subcommand(1);
          auto formatter = std::make_shared<CLI::Formatter>();  // its own: the top level's says COMMAND
          formatter->label("SUBCOMMAND", "APP");
          app.formatter(formatter);
          for (const apps::app_entry& entry : apps::applications()) {
            CLI::App* sub = app.add_subcommand(entry.name, entry.summary);
            add_option_table(*sub, entry.options);
            sub->parse_complete_callback([&entry] { chosen = &entry; });
          }
        },
    .run = app_command,
});

}  // namespace

}  // namespace transit::cli
