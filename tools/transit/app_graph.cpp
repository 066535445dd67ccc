// bale's standard graph options on an application's subcommand (std_options.upc's
// std_graph_options_argp), checked as transit checks options.
#include "app_graph.hpp"

#include <cstdio>

namespace transit::bench {

namespace {

/// -K's check: bale's spec parsed (what parse_kronecker_spec says when it is not one).
CLI::Validator kronecker_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          apps::parse_kronecker_spec(text);
          return {};
        } catch (const apps::input_error& e) {
          const std::string what = e.what();
          const std::string prefix = "--kronecker (-K): ";  // CLI11 names the option itself
          return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
        }
      },
      "", "kronecker_spec");
}

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

void add_bale_graph_options(CLI::App& sub, apps::bale_graph_options& o) {
  sub.add_option("-f,--readfile", o.filename, "read the matrix from FILE (MatrixMarket) instead of generating it")
      ->type_name("FILE");
  sub.add_option("-n,--l_numrows", o.l_numrows,
                 "rows per PE of the generated matrix (default " + std::to_string(o.l_numrows) + ")")
      ->transform(bale_count("a number of rows", 1))
      ->type_name("NUM");
  sub.add_option("-N,--numrows", o.numrows, "rows of the generated matrix (takes precedence over -n)")
      ->transform(bale_count("a number of rows", 1))
      ->type_name("NUM");
  sub.add_option("-e,--edge_prob", o.edge_prob, "probability of each edge (instead of -z)")
      ->transform(real_in(0, 1, "a probability from 0 to 1"))
      ->type_name("EDGEP");
  sub.add_option("-z,--nz_per_row", o.nz_per_row, "mean nonzeros per row, when -e is not given (default 10)")
      ->transform(real_in(0, 70368744177664.0, "a number of nonzeros from 0 to 2^46"))
      ->type_name("NZPR");
  // The model: the last of -F, -G, -K given wins, as in bale (they act as they are parsed).
  sub.add_flag_callback("-F,--flat", [&o] { o.model = apps::graph_model::flat; }, "flat (Erdős–Rényi) random graph (the default)")
      ->trigger_on_parse();
  sub.add_flag_callback("-G,--geometric", [&o] { o.model = apps::graph_model::geometric; },
                        "geometric random graph (bale's; not ported: refused)")
      ->trigger_on_parse();
  sub.add_option_function<std::string>(
         "-K,--kronecker",
         [&o](const std::string& text) {
           o.kron_string = text;
           o.kron = apps::parse_kronecker_spec(text);
           o.model = apps::graph_model::kronecker;
         },
         "Kronecker product of stars MODE:S1xS2x...: MODE 0 no triangles, 1 many, 2 few; K_{1,Si} the stars")
      ->check(kronecker_check())
      ->trigger_on_parse()
      ->type_name("KSTR");
  add_flag_once(sub, "-d,--directed", o.directed, "a directed graph");
  add_flag_once(sub, "-l,--loops", o.loops, "a loop at every vertex");
  add_flag_once(sub, "-w,--weighted", o.weighted, "weighted edges (values in [0, 1))");
}

std::string bale_graph_line(const apps::bale_graph_options& o) {
  std::string line;
  if (o.readfile()) return "-f " + o.filename;
  if (o.model == apps::graph_model::kronecker) {
    line = "-K " + o.kron_string;
  } else {
    line = (o.model == apps::graph_model::geometric ? "-G" : "-F");
    line += o.numrows != 0 ? " -N " + std::to_string(o.numrows) : " -n " + std::to_string(o.l_numrows);
    line += o.edge_prob != 0 ? " -e " + number(o.edge_prob) : " -z " + number(o.nz_per_row);
  }
  if (o.directed) line += " -d";
  if (o.loops) line += " -l";
  if (o.weighted) line += " -w";
  return line;
}

}  // namespace transit::bench
