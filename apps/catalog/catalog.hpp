#pragma once
// Every application of apps/, for a front end that runs them by name (`transit app NAME`): the one
// place that lists them, above all of them.
#include <vector>

#include "common/app_entry.hpp"

namespace transit::apps {

/// Local: every application (histo_app(), ...), sorted by name. Built on the first call; the
/// entries' options bind to state of their own, so call it once per process.
const std::vector<app_entry>& applications();

}  // namespace transit::apps
