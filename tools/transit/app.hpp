#pragma once
// `transit app NAME`: one file per bale application (app_histo.cpp, ...), each registering itself
// here as commands register themselves in cli.hpp, with its own options, bale's standard ones
// (add_bale_std_options) and the program it runs on every PE.
#include <functional>
#include <string>

#include "cli.hpp"
#include "common/bale_report.hpp"

namespace transit::bench {

/// One application of `transit app`, registered from its own file:
///   const bool registered = register_app({.name = "histo", ...});
struct app_entry {
  std::string name;
  std::string summary{};  // one line for `transit app --help`
  /// Adds the application's options to its subcommand. They bind to the file's own state: set
  /// before any PE starts, read-only while the job runs.
  std::function<void(CLI::App&)> add_options{};
  /// Collective: the application on every PE; returns its exit status (0 self-check passed, 1
  /// failed, 2 bad input).
  std::function<int(context&)> run{};
};

/// Adds an application; call from a namespace-scope initialiser. Returns true.
bool register_app(app_entry app);

/// bale's standard options (-b -c -D -j -M -s) on an application's subcommand.
void add_bale_std_options(CLI::App& sub, apps::bale_std_options& options);

/// "-b 1024 -M 15 -s 122222 [-D] [-j FILE]": the standard options as taken, for the banner.
std::string bale_std_line(const apps::bale_std_options& options);

/// A count option's check: integers from `min` to 2^46 (far beyond memory), "`what` from ...".
CLI::Validator bale_count(const std::string& what, std::int64_t min = 0);

}  // namespace transit::bench
