#include "spmat/graph_input.hpp"

#include <cinttypes>
#include <cstdio>

#include "common/bale_options.hpp"
#include "spmat/matrix_market.hpp"

namespace transit::apps {

bale_graph_options resolve_graph_options(const bale_graph_options& options, int pes) {
  bale_graph_options r = options;
  if (r.numrows == 0) r.numrows = r.l_numrows * pes;
  resolve_edge_prob_and_nz_per_row(r.edge_prob, r.nz_per_row, r.numrows, r.type(), r.self_loops_kind());
  return r;
}

void write_graph_options(bale_report& report, const bale_graph_options& o) {
  if (o.readfile()) {
    if (report.json()) report.write_string("input_file", o.filename);
    else report.note("Reading input from " + o.filename + "\n");
    return;
  }
  const char* model = o.model == graph_model::flat        ? "FLAT        (-F)"
                      : o.model == graph_model::geometric ? "GEOMETRIC   (-G)"
                                                          : "KRONECKER   (-K)";
  if (report.json()) {
    report.write_string("graph_model", std::string(model, 9));  // bale writes "%.*s" with 9
    return;
  }
  char text[512];
  std::snprintf(text, sizeof text,
                "Input Graph/Matrix parameters:\n----------------------------------------------------\n"
                "Graph model: %s.\n%s, %s, %s\nNumber of rows           (-N): %" PRId64
                "\nAvg # nnz per row        (-z): %2.2lf\nEdge probability         (-e): %lf\n",
                model, o.directed ? "Directed" : "Undirected", o.weighted ? "Weighted" : "Unweighted",
                o.loops ? "Loops" : "No Loops", o.numrows, o.nz_per_row, o.edge_prob);
  report.note(text);
}

sparse_matrix make_input_graph(context& ctx, const bale_std_options& std_options, const bale_graph_options& o) {
  if (o.readfile()) return read_matrix_mm_to_dist(ctx, o.filename);
  if (o.model == graph_model::kronecker) return generate_kronecker_graph_from_spec(ctx, o.kron);
  if (!(o.edge_prob > 0.0 && o.edge_prob <= 1.0)) {
    char text[160];
    std::snprintf(text, sizeof text, "%g", o.edge_prob);
    throw input_error(std::string("--edge_prob (-e) / --nz_per_row (-z): the edge probability is ") + text +
                      ", expected one in (0, 1] (more than 0 nonzeros per row, and at least 2 rows)");
  }
  // bale's get_input_graph: seed = MYTHREAD + -s, and random_graph is given seed + 2.
  return random_graph(ctx, o.numrows, o.model, o.type(), o.self_loops_kind(), o.edge_prob,
                      std_options.seed + ctx.rank() + 2);
}

sparse_matrix get_input_graph(context& ctx, bale_report& report, const bale_std_options& std_options,
                              const bale_graph_options& o) {
  sparse_matrix mat = make_input_graph(ctx, std_options, o);
  if (report.json()) {
    report.write_int("matrix_numrows", mat.numrows);
    report.write_int("matrix_numcols", mat.numcols);
    report.write_int("matrix_nnz", mat.nnz);
  } else {
    // bale prints the columns on the "rows" line and the rows on the "columns" line; kept.
    char text[200];
    std::snprintf(text, sizeof text,
                  "Input matrix:\n----------------------------------------------------\n\t%" PRId64
                  " rows\n\t%" PRId64 " columns\n\t%" PRId64 " nonzeros\n",
                  mat.numcols, mat.numrows, mat.nnz);
    report.note(text);
  }
  return mat;
}

namespace {

/// -K's check: bale's spec parsed (what parse_kronecker_spec says when it is not one).
std::string kronecker_problem(const std::string& text) {
  try {
    parse_kronecker_spec(text);
    return {};
  } catch (const input_error& e) {
    const std::string what = e.what();
    const std::string prefix = "--kronecker (-K): ";  // the command line names the option itself
    return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
  }
}

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

option_table bale_graph_option_table(bale_graph_options& o) {
  const option_table file = {{.names = "-f,--readfile",
                              .help = "read the matrix from FILE (MatrixMarket) instead of generating it",
                              .target = &o.filename,
                              .type_name = "FILE"}};
  const option_table rows = bale_count_options({"l_numrows", "numrows", "rows per PE of the generated matrix",
                                                "rows of the generated matrix", "a number of rows", &o.l_numrows,
                                                &o.numrows, 1});
  // The model: the last of -F, -G, -K given wins, as in bale (they act as they are parsed).
  return file + rows + option_table{
      {.names = "-e,--edge_prob",
       .help = "probability of each edge (instead of -z)",
       .target = &o.edge_prob,
       .check = real_range{0, 1, "a probability from 0 to 1"},
       .type_name = "EDGEP"},
      {.names = "-z,--nz_per_row",
       .help = "mean nonzeros per row, when -e is not given (default 10)",
       .target = &o.nz_per_row,
       .check = real_range{0, 70368744177664.0, "a number of nonzeros from 0 to 2^46"},
       .type_name = "NZPR"},
      {.names = "-F,--flat",
       .help = "flat (Erdős–Rényi) random graph (the default)",
       .kind = option_kind::repeatable_flag,
       .on_parse = [&o](const std::string&) { o.model = graph_model::flat; }},
      {.names = "-G,--geometric",
       .help = "geometric random graph (points in the unit square, edges between close ones)",
       .kind = option_kind::repeatable_flag,
       .on_parse = [&o](const std::string&) { o.model = graph_model::geometric; }},
      {.names = "-K,--kronecker",
       .help = "Kronecker product of stars MODE:S1xS2x...: MODE 0 no triangles, 1 many, 2 few; K_{1,Si} the stars",
       .check = custom_check(kronecker_problem),
       .type_name = "KSTR",
       .on_parse =
           [&o](const std::string& text) {
             o.kron_string = text;
             o.kron = parse_kronecker_spec(text);
             o.model = graph_model::kronecker;
           }},
      {.names = "-d,--directed", .help = "a directed graph", .target = &o.directed, .kind = option_kind::flag},
      {.names = "-l,--loops", .help = "a loop at every vertex", .target = &o.loops, .kind = option_kind::flag},
      {.names = "-w,--weighted",
       .help = "weighted edges (values in [0, 1))",
       .target = &o.weighted,
       .kind = option_kind::flag},
  };
}

std::string bale_graph_line(const bale_graph_options& o) {
  if (o.readfile()) return "-f " + o.filename;
  std::string line = o.model == graph_model::kronecker ? "-K " + o.kron_string
                     : o.model == graph_model::geometric ? std::string("-G")
                                                         : std::string("-F");
  if (o.model != graph_model::kronecker) {
    line += o.numrows != 0 ? " -N " + std::to_string(o.numrows) : " -n " + std::to_string(o.l_numrows);
    line += o.edge_prob != 0 ? " -e " + number(o.edge_prob) : " -z " + number(o.nz_per_row);
  }
  if (o.directed) line += " -d";
  if (o.loops) line += " -l";
  if (o.weighted) line += " -w";
  return line;
}

}  // namespace transit::apps
