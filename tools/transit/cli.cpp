// The registry of top-level commands and the shared value checks (see cli.hpp).
#include "cli.hpp"

#include "transit/detail/core/error.hpp"
#include "transit/topology/topology_manager.hpp"

#include <algorithm>
#include <cmath>

namespace transit::bench {

namespace {

std::vector<command_entry>& registry() {
  static std::vector<command_entry> commands;  // built during static initialisation
  return commands;
}

}  // namespace

bool register_command(command_entry command) {
  auto& commands = registry();
  TRANSIT_ASSERT(std::none_of(commands.begin(), commands.end(), [&](const auto& c) { return c.name == command.name; }),
                 "two transit commands of the same name");
  const auto at = std::lower_bound(commands.begin(), commands.end(), command.name,
                                   [](const command_entry& c, const std::string& name) { return c.name < name; });
  commands.insert(at, std::move(command));
  return true;
}

void add_commands(CLI::App& app) {
  app.get_formatter()->label("SUBCOMMAND", "COMMAND");
  for (const auto& command : registry()) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary)->group("Commands");
    if (command.add_options) command.add_options(*sub);
  }
  app.require_subcommand(1);
}

const command_entry* parsed_command(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    for (const auto& command : registry())
      if (command.name == sub->get_name()) return &command;
  return nullptr;
}

CLI::Validator real_in(double min, double max, std::string expected) {
  return CLI::Validator(
      [min, max, expected](std::string& text) -> std::string {
        double value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
            value < min || value > max)
          return "got '" + text + "', expected " + expected;
        if (value == 0) text = "0";  // not -0
        return {};
      },
      "", "real_in");
}

CLI::Validator physical_spec() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          text = physical_topology::parse(text).str();
          return {};
        } catch (const std::invalid_argument& e) {
          return "got '" + text + "', expected a physical topology such as torus:8x4x8:4 (" + e.what() + ")";
        }
      },
      "", "physical_spec");
}

CLI::Validator one_of(std::vector<std::string> names) {
  return CLI::Validator(
      [names](std::string& text) -> std::string {
        if (std::find(names.begin(), names.end(), text) != names.end()) return {};
        return "got '" + text + "', expected one of " + join(names);
      },
      "", "one_of");
}

std::string join(const std::vector<std::string>& names, std::string_view separator) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

CLI::Option* add_flag_once(CLI::App& app, const std::string& name, bool& flag, const std::string& help) {
  return app.add_flag(name, flag, help)->disable_flag_override()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

void add_table_slots_option(CLI::App& sub, std::uint64_t& slots) {
  sub.add_option("--table-slots", slots, "table entries per PE (default 1000)")
      ->transform(integer_in<std::uint64_t>(1, std::uint64_t{1} << 32, "a positive integer up to 2^32"))
      ->type_name("S");
}

void add_api_option(CLI::App& sub, std::string& api, bool c) {
  std::string help = "streamer (default), or active: the same kernel written with active_messages";
  std::vector<std::string> names{"streamer", "active"};
  if (c) {
    help += ", or c: through the C API (transit.h)";
    names.push_back("c");
  }
  sub.add_option("--api", api, help)->check(one_of(std::move(names)))->type_name("API");
}

void usage_error(std::string_view what, std::string_view value, std::string_view expected) {
  throw CLI::ValidationError(std::string(what),
                             "got '" + std::string(value) + "', expected " + std::string(expected));
}

}  // namespace transit::bench
