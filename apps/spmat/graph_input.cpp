#include "spmat/graph_input.hpp"

#include <cinttypes>
#include <cstdio>

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
  if (o.model == graph_model::flat && !(o.edge_prob > 0.0 && o.edge_prob <= 1.0)) {
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

}  // namespace transit::apps
