#pragma once
// The input steps bale's graph applications share (triangles, sssp): the graph options and the
// standard ones reported, the graph read or generated, checked, and dumped with -D; bad input
// reported once, by PE 0, with status 2 from every PE; options the application cannot use
// overridden with a warning, as bale does. And the entry of an application that takes
// the graph options and the standard ones (toposort, permute_matrix, transpose_matrix, and with
// options of their own before them sssp and triangles).
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "common/app_entry.hpp"
#include "common/bale_options.hpp"
#include "common/bale_report.hpp"
#include "spmat/graph_input.hpp"
#include "spmat/matrix_market.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// Collective: a graph option the application cannot use, turned off as bale turns it off
/// (toposort -d, sssp -l, triangles -d and -l): when `flag` is set, PE 0 warns once "transit:
/// warning: APP needs NEED, overriding the FLAG flag" and every PE clears it, so the job runs on
/// the graph bale's program would run on.
inline void override_graph_option(context& ctx, bool& flag, const char* app, const char* need, const char* name) {
  if (!flag) return;
  if (ctx.rank() == 0) std::fprintf(stderr, "transit: warning: %s needs %s, overriding the %s flag\n", app, need, name);
  flag = false;
}

/// Collective: bale's write_std_graph_options, write_std_options and get_input_graph, then
/// `prepare(matrix)` (the application's checks and fixes; may throw input_error), then with -D
/// the matrix written to `dump_name`. Returns the matrix, or nothing after an input_error (a bad
/// file or spec, a graph the application cannot take), which PE 0 has reported: the application
/// then ends with status 2. `graph` resolved (resolve_graph_options).
template <class Prepare>
std::optional<sparse_matrix> graph_app_input(context& ctx, bale_report& report, const bale_std_options& std_options,
                                             const bale_graph_options& graph, const char* dump_name, Prepare&& prepare) {
  try {
    write_graph_options(report, graph);
    report.write_std_options();
    sparse_matrix mat = get_input_graph(ctx, report, std_options, graph);
    prepare(mat);
    if (std_options.dump_files) write_matrix_mm(ctx, mat, dump_name);
    return mat;
  } catch (const input_error& e) {
    if (ctx.rank() == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
    return std::nullopt;
  }
}

/// Local: the entry (`transit app NAME`) of an application that takes bale's graph options and
/// the standard ones, and with `own` options of its own before them: its table bound to one
/// `Options` of this process and `program` with the banner echoing them ("transit app NAME
/// <own_line> <graph> <standard>"). Without options of its own (toposort, permute_matrix,
/// transpose_matrix) the graph options come first, as they always have in its --help; with them
/// (sssp, triangles), last. `Options` has `graph` and `std`; `own_line` ends with a space.
template <class Options>
app_entry graph_options_app(std::string name, std::string summary,
                            int (*program)(context&, const Options&, const std::string&),
                            option_table (*own)(Options&) = nullptr,
                            std::string (*own_line)(const Options&) = nullptr) {
  static Options args;  // read-only once the job runs
  option_table options = own != nullptr
                             ? own(args) + bale_std_option_table(args.std) + bale_graph_option_table(args.graph)
                             : bale_graph_option_table(args.graph) + bale_std_option_table(args.std);
  return {.name = name,
          .summary = std::move(summary),
          .options = std::move(options),
          .run = [name, program, own_line](context& ctx) {
            // The options as they were taken, for the banner (bale echoes its argv).
            return program(ctx, args, "transit app " + name + " " + (own_line != nullptr ? own_line(args) : "") +
                                          bale_graph_line(args.graph) + " " + bale_std_line(args.std));
          }};
}

}  // namespace transit::apps
