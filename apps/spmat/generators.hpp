#pragma once
// bale's graph generators (spmat/spmat_utils.upc), bit for bit: Erdős–Rényi by Batagelj and
// Brandes' skipping with Knuth's ranf as bale seeds it, and Kronecker products of stars, with
// the closed-form triangle count of the latter and a parser for bale's -K spec.
#include <cstdint>
#include <string>
#include <vector>

#include "spmat/spmat.hpp"

namespace transit::apps {

/// Collective: bale's erdos_renyi_random_graph(n, p, edgetype, loops, seed): each possible edge
/// present with probability p, drawn by skipping (gaps 1 + floor(log(1 - u) / log(1 - p))) with
/// this PE's ranf stream lgp_rand_seed(seed) (ranf_start(seed + 1 + pe)). `seed` is what bale's
/// caller passes on this PE (get_input_graph passes -s + pe + 2; see graph_input.hpp). Undirected graphs are
/// strictly lower triangular (plus the diagonal with loops); weighted ones then draw one value
/// per nonzero from the same stream, in storage order. Rows tidy. Throws std::invalid_argument
/// for n < 1 or p outside (0, 1].
sparse_matrix erdos_renyi_random_graph(context& ctx, std::int64_t n, double p, edge_type type, self_loops loops,
                                       std::int64_t seed);

/// Collective: bale's random_graph for the FLAT model (erdos_renyi_random_graph with
/// edge_density as p). Throws input_error for the geometric model (not ported) and what
/// erdos_renyi_random_graph throws.
sparse_matrix random_graph(context& ctx, std::int64_t n, graph_model model, edge_type type, self_loops loops,
                           double edge_density, std::int64_t seed);

/// Local: bale's resolve_edge_prob_and_nz_per_row: when edge_prob is 0 it is computed from
/// nz_per_row ((z or z - 1 with loops) / (n - 1), doubled for undirected, at most 1), otherwise
/// nz_per_row is computed from edge_prob (e * (n - 1) / 2, for every edge type, as bale does).
void resolve_edge_prob_and_nz_per_row(double& edge_prob, double& nz_per_row, std::int64_t numrows, edge_type type,
                                      self_loops loops);

/// bale's -K MODE:S1xS2x...: MODE 0 (no triangles), 1 (many: a loop at each star's centre) or 2
/// (few: a loop at one leaf of each star); the stars K_{1,Si} whose Kronecker product is the graph.
struct kronecker_spec {
  int mode = 0;
  std::vector<std::int64_t> stars{};
};

/// Local: parses bale's -K string. Throws input_error ("-K: got 'TEXT', expected ...") for
/// anything but MODE:S1xS2x...xSk with MODE 0, 1 or 2, k from 3 to 64 stars (bale needs more than
/// 2), each Si from 1 to 2^20, and the product of the (Si + 1) below 2^40 rows.
kronecker_spec parse_kronecker_spec(const std::string& text);

/// Local: K_{1,m} as a local matrix (bale's gen_star_graph), with mode 1's loop at the centre or
/// mode 2's at the last leaf.
sparse_matrix star_graph(std::int64_t m, int mode);

/// Local: the Kronecker product of the stars K_{1,m[i]} as a local matrix (bale's
/// kronecker_product_of_stars). Throws std::invalid_argument for an empty list.
sparse_matrix kronecker_product_of_stars(const std::vector<std::int64_t>& m, int mode);

/// Local: kron(B, C) of two local matrices (bale's kronecker_product_graph_local).
sparse_matrix kronecker_product_graph_local(const sparse_matrix& b, const sparse_matrix& c);

/// Collective: the strictly lower triangular part of kron(B, C), cyclic rows (bale's
/// kronecker_product_graph_dist; B and C the same local matrices on every PE).
sparse_matrix kronecker_product_graph_dist(context& ctx, const sparse_matrix& b, const sparse_matrix& c);

/// Collective: bale's generate_kronecker_graph_from_spec: the first half of the stars (k / 2)
/// make B, the rest C, and the result is kronecker_product_graph_dist(B, C), an undirected graph
/// held strictly lower triangular.
sparse_matrix generate_kronecker_graph_from_spec(context& ctx, const kronecker_spec& spec);

/// Local: the triangles of the graph generate_kronecker_graph_from_spec makes, in closed form
/// (bale's calc_num_tri_kron_graph, rounding as bale rounds).
std::int64_t calc_num_tri_kron_graph(const kronecker_spec& spec);

}  // namespace transit::apps
