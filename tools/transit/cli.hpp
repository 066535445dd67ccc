#pragma once
// The transit command line (CLI11): the registry of top-level commands, and the value checks that
// every command and kernel uses so that all usage errors read alike:
//   transit: error: <option>: got '<value>', expected <what>
// Everything here runs before any PE starts: a usage error costs no job and exits with status 2.
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/option_table.hpp"
#include "transit/transit.hpp"

namespace transit::cli {

/// A top-level command of `transit` (info, bench, demo, ...), registered from its own file:
///   const bool registered = register_command({.name = "demo", ...});
struct command_entry {
  std::string name;
  std::string summary{};  // one line for `transit --help`
  /// Optional: adds the command's options, positionals and subcommands. They bind to the command
  /// file's own state: set before any PE starts, read-only while the job runs.
  std::function<void(CLI::App&)> add_options{};
  /// Collective: runs on every PE; the returned exit status is the largest over PEs.
  std::function<int(context&)> run{};
  /// The command's job on the local backend when the user chose neither (flag or environment).
  int local_pes = 0, local_pes_per_node = 0;
  /// False for a command that reads traces (transit trace): its own job then records none, so that
  /// a --transit-trace or TRANSIT_TRACE meant for the run never overwrites the files it reads.
  bool traced = true;
};

/// Adds a command; call from a namespace-scope initialiser. Returns true.
bool register_command(command_entry command);

/// The whole command line: every registered command (sorted by name) as a subcommand of `app`.
void add_commands(CLI::App& app);
/// The command that `app` parsed, or nullptr.
const command_entry* parsed_command(const CLI::App& app);

// ---- value checks: each rewrites a valid value into the canonical form CLI11 converts (so that
// "010" is ten, never octal eight) and explains a bad one ----

/// Decimal integers in [min, max]; `expected` completes "got 'x', expected ...".
template <class T>
CLI::Validator integer_in(T min, T max, std::string expected) {
  return CLI::Validator(
      [min, max, expected](std::string& text) -> std::string {
        T value{};
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < min || value > max)
          return "got '" + text + "', expected " + expected;
        text = std::to_string(value);
        return {};
      },
      "", "integer_in");
}

/// Real numbers in [min, max] (finite).
CLI::Validator real_in(double min, double max, std::string expected);

/// One of `names`.
CLI::Validator one_of(std::vector<std::string> names);

/// A physical topology spec (docs/topology.md), rewritten to its canonical form.
CLI::Validator physical_spec();

/// "a, b, c" or "a, b or c" style list of names, for messages.
std::string join(const std::vector<std::string>& names, std::string_view separator = ", ");

/// A flag that takes no value and may be given once (--json, --tune, --measure).
CLI::Option* add_flag_once(CLI::App& app, const std::string& name, bool& flag, const std::string& help);

/// Adds the options an application or a kernel describes (apps/common/option_table.hpp) to `sub`,
/// each with its check: integer_in, real_in, one_of or the table's own.
void add_option_table(CLI::App& sub, const apps::option_table& table);

/// Throws the usage error CLI11 reports like its own (exit status 2 through main).
[[noreturn]] void usage_error(std::string_view what, std::string_view value, std::string_view expected);

}  // namespace transit::cli
