#include "spmat/generators.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace transit::apps {

namespace {

/// The next Batagelj–Brandes column: bale's `col += 1 + floor(log(1 - u) / D)` in doubles, as C
/// evaluates it. A gap beyond any matrix (tiny p) stops at 2^62 instead of overflowing.
std::int64_t skip(std::int64_t col, knuth_ranf& rng, double d) {
  const double next = static_cast<double>(col) + (1.0 + std::floor(std::log(1.0 - rng.next_double()) / d));
  constexpr double far = 4611686018427387904.0;  // 2^62
  return next >= far ? static_cast<std::int64_t>(far) : static_cast<std::int64_t>(next);
}

[[noreturn]] void bad_spec(const std::string& text, const std::string& expected) {
  throw input_error("--kronecker (-K): got '" + text + "', expected " + expected);
}

}  // namespace

sparse_matrix erdos_renyi_random_graph(context& ctx, std::int64_t n, double p, edge_type type, self_loops loops,
                                       std::int64_t seed) {
  if (n < 1) throw std::invalid_argument("erdos_renyi_random_graph: got " + std::to_string(n) + " rows, expected at least 1");
  if (!(p > 0.0 && p <= 1.0))
    throw std::invalid_argument("erdos_renyi_random_graph: got edge probability " + std::to_string(p) +
                                ", expected one in (0, 1]");
  const int pe = ctx.rank(), pes = ctx.size();
  const bool undirected = is_undirected(type);
  sparse_matrix a = make_matrix(n, n, pe, pes, is_weighted(type));
  knuth_ranf rng = knuth_ranf::for_pe(seed, pe);
  // bale counts first and fills after reseeding: the same draws, so one pass does both.
  const double d = std::log(1.0 - p);
  std::int64_t col = skip(0, rng, d);
  std::int64_t end = n;
  for (std::int64_t row = pe; row < n;) {
    if (undirected) end = row;
    bool need_diag = loops == self_loops::loops;
    while (col < end) {
      if (col == row) need_diag = false;
      a.nonzero.push_back(col);
      col = skip(col, rng, d);
    }
    if (need_diag) a.nonzero.push_back(row);
    row += pes;
    col -= end;  // the gaps run on through this PE's rows as if they were one long row
    a.offset[static_cast<std::size_t>(row / pes)] = static_cast<std::int64_t>(a.nonzero.size());
  }
  if (a.weighted) {
    a.value.resize(a.nonzero.size());
    for (double& v : a.value) v = rng.next_double();  // after the structure, in storage order
  }
  // A directed row's loop was appended after its later columns: bale sorts (undirected rows end
  // at the diagonal, so they are tidy already).
  if (loops == self_loops::loops && !undirected) sort_nonzeros(a);
  finish_matrix(ctx, a);
  return a;
}

sparse_matrix random_graph(context& ctx, std::int64_t n, graph_model model, edge_type type, self_loops loops,
                           double edge_density, std::int64_t seed) {
  if (model == graph_model::geometric)
    throw input_error("--geometric (-G): the geometric graph model is not ported to transit, expected -F (flat, the default) or -K");
  if (model != graph_model::flat) throw std::invalid_argument("random_graph: expected the flat or geometric model");
  return erdos_renyi_random_graph(ctx, n, edge_density, type, loops, seed);
}

void resolve_edge_prob_and_nz_per_row(double& edge_prob, double& nz_per_row, std::int64_t numrows, edge_type type,
                                      self_loops loops) {
  const auto others = static_cast<double>(numrows - 1);
  if (edge_prob == 0.0) {
    edge_prob = (loops == self_loops::loops ? nz_per_row - 1 : nz_per_row) / others;
    if (is_undirected(type)) edge_prob *= 2;
    if (edge_prob > 1.0) edge_prob = 1.0;
  } else {
    nz_per_row = edge_prob * (others / 2.0);
  }
}

kronecker_spec parse_kronecker_spec(const std::string& text) {
  const std::string form = "MODE:S1xS2x...xSk with MODE 0, 1 or 2 and 3 to 64 star sizes from 1 to 2^20";
  kronecker_spec spec;
  if (text.size() < 3 || text[1] != ':' || text[0] < '0' || text[0] > '2') bad_spec(text, form);
  spec.mode = text[0] - '0';
  std::size_t at = 2;
  double rows = 1;
  for (;;) {
    std::size_t digits = 0;
    std::int64_t size = 0;
    while (at + digits < text.size() && text[at + digits] >= '0' && text[at + digits] <= '9' && digits < 8) {
      size = size * 10 + (text[at + digits] - '0');
      ++digits;
    }
    if (digits == 0 || size < 1 || size > (std::int64_t{1} << 20)) bad_spec(text, form);
    spec.stars.push_back(size);
    rows *= static_cast<double>(size + 1);
    at += digits;
    if (at == text.size()) break;
    if (text[at] != 'x') bad_spec(text, form);
    ++at;
  }
  if (spec.stars.size() < 3 || spec.stars.size() > 64) bad_spec(text, form);
  if (rows >= 1099511627776.0) bad_spec(text, "a graph of fewer than 2^40 vertices (the product of the Si + 1)");
  return spec;
}

sparse_matrix star_graph(std::int64_t m, int mode) {
  sparse_matrix g = make_matrix(m + 1, m + 1, 0, 1, false, 2 * m + (mode > 0 ? 1 : 0));
  if (mode == 1) g.nonzero.push_back(0);  // the centre's loop
  for (std::int64_t i = 1; i <= m; ++i) g.nonzero.push_back(i);
  g.offset[1] = static_cast<std::int64_t>(g.nonzero.size());
  for (std::int64_t i = 1; i <= m; ++i) {
    g.nonzero.push_back(0);
    g.offset[static_cast<std::size_t>(i) + 1] = static_cast<std::int64_t>(g.nonzero.size());
  }
  if (mode == 2) {  // the last leaf's loop
    g.nonzero.push_back(m);
    g.offset[static_cast<std::size_t>(m) + 1] = static_cast<std::int64_t>(g.nonzero.size());
  }
  g.lnnz = g.nnz = static_cast<std::int64_t>(g.nonzero.size());
  return g;
}

sparse_matrix kronecker_product_graph_local(const sparse_matrix& b, const sparse_matrix& c) {
  const std::int64_t n = b.lnumrows * c.lnumrows;
  sparse_matrix a = make_matrix(n, n, 0, 1, false, b.lnnz * c.lnnz);
  for (std::int64_t rb = 0; rb < b.lnumrows; ++rb) {
    for (std::int64_t rc = 0; rc < c.lnumrows; ++rc) {
      for (const std::int64_t cb : b.row(rb))
        for (const std::int64_t cc : c.row(rc)) a.nonzero.push_back(cb * c.numcols + cc);
      a.offset[static_cast<std::size_t>(rb * c.lnumrows + rc) + 1] = static_cast<std::int64_t>(a.nonzero.size());
    }
  }
  a.lnnz = a.nnz = static_cast<std::int64_t>(a.nonzero.size());
  return a;
}

sparse_matrix kronecker_product_of_stars(const std::vector<std::int64_t>& m, int mode) {
  if (m.empty()) throw std::invalid_argument("kronecker_product_of_stars: expected at least one star");
  sparse_matrix a = star_graph(m[0], mode);
  for (std::size_t i = 1; i < m.size(); ++i) a = kronecker_product_graph_local(a, star_graph(m[i], mode));
  return a;
}

sparse_matrix kronecker_product_graph_dist(context& ctx, const sparse_matrix& b, const sparse_matrix& c) {
  const std::int64_t n = b.lnumrows * c.lnumrows;
  sparse_matrix a = make_matrix(n, n, ctx.rank(), ctx.size(), false);
  for (std::int64_t lrow = 0; lrow < a.lnumrows; ++lrow) {
    const std::int64_t row = a.global_row(lrow);
    const std::int64_t rb = row / c.lnumrows, rc = row % c.lnumrows;
    for (const std::int64_t cb : b.row(rb)) {
      for (const std::int64_t cc : c.row(rc)) {
        const std::int64_t col = cb * c.numcols + cc;
        if (col >= row) break;  // bale leaves this C row here and goes on with B's next column
        a.nonzero.push_back(col);
      }
    }
    a.offset[static_cast<std::size_t>(lrow) + 1] = static_cast<std::int64_t>(a.nonzero.size());
  }
  finish_matrix(ctx, a);
  return a;
}

sparse_matrix generate_kronecker_graph_from_spec(context& ctx, const kronecker_spec& spec) {
  if (spec.stars.size() <= 2) throw input_error("--kronecker (-K): expected more than 2 stars");
  const auto half = static_cast<std::ptrdiff_t>(spec.stars.size() / 2);
  const std::vector<std::int64_t> first(spec.stars.begin(), spec.stars.begin() + half);
  const std::vector<std::int64_t> rest(spec.stars.begin() + half, spec.stars.end());
  return kronecker_product_graph_dist(ctx, kronecker_product_of_stars(first, spec.mode),
                                      kronecker_product_of_stars(rest, spec.mode));
}

std::int64_t calc_num_tri_kron_graph(const kronecker_spec& spec) {
  double answer = 0.0;
  const auto num = static_cast<double>(spec.stars.size());
  if (spec.mode == 1) {
    answer = 1;
    for (const std::int64_t s : spec.stars) answer *= static_cast<double>(3 * s + 1);
    answer *= 1.0 / 6.0;
    double x = 1;
    for (const std::int64_t s : spec.stars) x *= static_cast<double>(s + 1);
    answer = answer - 0.5 * x + 1.0 / 3.0;
  } else if (spec.mode == 2) {
    answer = (1.0 / 6.0) * std::pow(4.0, num) - std::pow(2.0, num - 1) + 1.0 / 3.0;
  }
  return static_cast<std::int64_t>(std::round(answer));
}

}  // namespace transit::apps
