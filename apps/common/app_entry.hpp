#pragma once
// One application as a front end sees it (`transit app NAME`, tools/transit/app.cpp): its name, its
// option table and its program. Each application exports one (histo_app(), ...); the catalog
// (apps/catalog) lists them.
#include <functional>
#include <string>

#include "common/option_table.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

struct app_entry {
  std::string name;
  std::string summary{};  ///< one line for `transit app --help`
  /// The options; they bind to the application's own state: set before any PE starts, read-only
  /// while the job runs.
  option_table options{};
  /// Collective: the application on every PE, with the options parsed; returns its exit status (0
  /// self-check passed, 1 failed, 2 bad input).
  std::function<int(context&)> run{};
};

}  // namespace transit::apps
