#pragma once
// bale's standard graph options (std_options: std_graph_args_t, -n -N -e -z -K -f -F -G -d -l -w)
// and get_input_graph: the input matrix of the graph applications, read from a MatrixMarket
// file or generated, with bale's report of its parameters.
#include <cstdint>
#include <string>

#include "common/bale_report.hpp"
#include "common/option_table.hpp"
#include "spmat/generators.hpp"

namespace transit::apps {

/// bale's std_graph_args_t with its defaults (each application sets its own l_numrows default,
/// as bale's apps do before parsing).
struct bale_graph_options {
  std::int64_t l_numrows = 10000;  ///< -n: rows per PE
  std::int64_t numrows = 0;        ///< -N: rows over all PEs (takes precedence when nonzero)
  std::string filename{};          ///< -f FILE: read the matrix (MatrixMarket) instead of generating
  graph_model model = graph_model::flat;  ///< -F flat (default), -G geometric, -K kronecker
  double edge_prob = 0.0;          ///< -e: edge probability (0: from nz_per_row)
  double nz_per_row = 10.0;        ///< -z: mean nonzeros per row
  bool directed = false;           ///< -d
  bool loops = false;              ///< -l
  bool weighted = false;           ///< -w
  std::string kron_string{};       ///< -K's text, as given
  kronecker_spec kron{};           ///< -K parsed (parse_kronecker_spec)

  /// Local: true when -f names a file to read.
  bool readfile() const noexcept { return !filename.empty(); }
  /// Local: bale's edge type for -d and -w.
  edge_type type() const noexcept {
    if (directed) return weighted ? edge_type::directed_weighted : edge_type::directed;
    return weighted ? edge_type::undirected_weighted : edge_type::undirected;
  }
  /// Local: bale's self_loops for -l.
  self_loops self_loops_kind() const noexcept { return loops ? self_loops::loops : self_loops::no_loops; }
};

/// Local: bale's graph options (std_graph_options_argp: -f -n -N -e -z -F -G -K -d -l -w), bound to
/// `options` (whose l_numrows is the application's default, as each bale app sets it). -K is
/// parsed as it is given (a malformed spec is a usage error); -e and -z are checked to be a
/// probability and a count. resolve_graph_options finishes them once the PE count is known.
option_table bale_graph_option_table(bale_graph_options& options);

/// Local: "-n 10000 -z 10 [-N ..] [-e ..] [-K ..] [-f ..] [-d] [-l] [-w]": the graph options as
/// taken, for the banner.
std::string bale_graph_line(const bale_graph_options& options);

/// Local: what bale's ARGP_KEY_END does once the options are parsed on `pes` PEs: numrows =
/// l_numrows * pes unless -N was given, then resolve_edge_prob_and_nz_per_row. Returns the
/// resolved copy.
bale_graph_options resolve_graph_options(const bale_graph_options& options, int pes);

/// Local (PE 0 writes): bale's write_std_graph_options: the model and its parameters (stderr), or
/// "graph_model" / "input_file" in the JSON file. `options` resolved.
void write_graph_options(bale_report& report, const bale_graph_options& options);

/// Collective: the input matrix get_input_graph reports, without a word: -f's file, the
/// Kronecker graph, or the FLAT random graph seeded as bale seeds it. `options` resolved.
/// Throws input_error on every PE as get_input_graph does.
sparse_matrix make_input_graph(context& ctx, const bale_std_options& std_options, const bale_graph_options& options);

/// Collective: bale's get_input_graph: reads -f's file, or generates the Kronecker graph, or
/// the FLAT random graph with seed std.seed + pe + 2 as bale passes it (so PE p's stream is
/// ranf_start(seed + 2p + 3)); then reports its rows, columns and nonzeros (stderr), or
/// matrix_numrows / matrix_numcols / matrix_nnz (JSON). `options` resolved. Throws input_error
/// on every PE for a bad file or bad generator parameters.
sparse_matrix get_input_graph(context& ctx, bale_report& report, const bale_std_options& std_options,
                              const bale_graph_options& options);

}  // namespace transit::apps
