// The registry of top-level commands and the shared value checks (see cli.hpp).
#include "cli.hpp"

#include "transit/detail/core/error.hpp"
#include "transit/topology/topology_manager.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <variant>

namespace transit::cli {

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

namespace {

/// The check of `spec`, reading the value as T (the bound variable's type).
template <class T>
void add_check(CLI::Option& option, const apps::option_check& check) {
  if (const auto* integers = std::get_if<apps::integer_range>(&check)) {
    if constexpr (std::is_integral_v<T>)
      option.transform(
          integer_in<T>(static_cast<T>(integers->min), static_cast<T>(integers->max), integers->expected));
  } else if (const auto* reals = std::get_if<apps::real_range>(&check)) {
    option.transform(real_in(reals->min, reals->max, reals->expected));
  } else if (const auto* names = std::get_if<apps::one_of_names>(&check)) {
    option.check(one_of(names->names));
  } else if (const auto* custom = std::get_if<apps::custom_check>(&check)) {
    option.check(CLI::Validator([problem = *custom](std::string& text) { return problem(text); }, "", "custom"));
  }
}

CLI::Option* add_spec(CLI::App& sub, const apps::option_spec& spec) {
  if (spec.on_parse) {
    if (spec.kind != apps::option_kind::value)
      return sub.add_flag_callback(spec.names, [call = spec.on_parse] { call(""); }, spec.help)->trigger_on_parse();
    CLI::Option* option = sub.add_option_function<std::string>(spec.names, spec.on_parse, spec.help);
    add_check<std::string>(*option, spec.check);
    return option->trigger_on_parse();
  }
  TRANSIT_ASSERT(!std::holds_alternative<std::monostate>(spec.target), "an option with neither a variable nor on_parse");
  return std::visit(
      [&]([[maybe_unused]] auto target) -> CLI::Option* {
        using pointer = decltype(target);
        if constexpr (std::is_same_v<pointer, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<pointer, bool*>) {
          if (spec.kind == apps::option_kind::flag) return add_flag_once(sub, spec.names, *target, spec.help);
          return sub.add_flag(spec.names, *target, spec.help);
        } else {
          CLI::Option* option = sub.add_option(spec.names, *target, spec.help);
          add_check<std::remove_pointer_t<pointer>>(*option, spec.check);
          return option;
        }
      },
      spec.target);
}

}  // namespace

void add_option_table(CLI::App& sub, const apps::option_table& table) {
  for (const apps::option_spec& spec : table) {
    CLI::Option* option = add_spec(sub, spec);
    if (!spec.type_name.empty()) option->type_name(spec.type_name);
  }
}

void usage_error(std::string_view what, std::string_view value, std::string_view expected) {
  throw CLI::ValidationError(std::string(what),
                             "got '" + std::string(value) + "', expected " + std::string(expected));
}

}  // namespace transit::cli
