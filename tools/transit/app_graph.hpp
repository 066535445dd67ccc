#pragma once
// bale's standard graph options (std_graph_options: -n -N -e -z -K -f -F -G -d -l -w) for the
// graph applications' subcommands (app_transpose_matrix.cpp, app_triangles.cpp, ...), beside
// add_bale_std_options.
#include <string>

#include "app.hpp"
#include "spmat/graph_input.hpp"

namespace transit::bench {

/// Adds bale's graph options to `sub`, bound to `options` (whose l_numrows is the application's
/// default, as each bale app sets it). -K is parsed here (a malformed spec is a usage error,
/// status 2); -e and -z are checked to be probabilities / non-negative; -G is taken, and
/// get_input_graph refuses it. apps::resolve_graph_options finishes them once the PE count is
/// known.
void add_bale_graph_options(CLI::App& sub, apps::bale_graph_options& options);

/// "-n 10000 -z 10 [-N ..] [-e ..] [-K ..] [-f ..] [-d] [-l] [-w]": the graph options as taken,
/// for the banner.
std::string bale_graph_line(const apps::bale_graph_options& options);

}  // namespace transit::bench
