#include "spmat/generators.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <numbers>

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

namespace {

struct point {
  double x;
  double y;
};

/// bale's relabelling of a geometric graph's vertices: point g's place in bale's BLOCK layout of
/// n over pes (libgetput's global_index_to_pe_and_offset) becomes the cyclic index offset * pes + pe.
std::int64_t block_to_cyclic(std::int64_t g, std::int64_t n, int pes) {
  const std::int64_t upper = n / pes + (n % pes > 0 ? 1 : 0);
  const std::int64_t rem = n % pes;
  std::int64_t pe = 0, offset = 0;
  if (rem == 0 || g / upper < rem) {
    pe = g / upper;
    offset = g % upper;
  } else {
    pe = (g - rem) / (upper - 1);
    offset = (g - rem) % (upper - 1);
  }
  return offset * pes + pe;
}

/// bale's geometric_random_graph (spmat/geometric.upc) for undirected edge types, drawing from
/// `rng` (this PE's stream, left where bale leaves it): n points in the unit square, in sectors
/// of width 1 / floor(1 / r); an edge between points closer than r; held lower triangular.
sparse_matrix geometric_graph(context& ctx, std::int64_t n, double r, bool weighted, self_loops loops,
                              knuth_ranf& rng) {
  const int pe = ctx.rank(), pes = ctx.size();
  // bale's radius stays below 0.8 for any edge density; 0 (one row) would make no sectors.
  if (!(r > 0.0 && r <= 1.0))
    throw input_error("--geometric (-G): the neighbourhood radius is " + std::to_string(r) +
                      ", expected one in (0, 1] (at least 2 rows)");
  const auto across = static_cast<std::int64_t>(std::floor(1.0 / r));
  const double width = 1.0 / static_cast<double>(across);
  const std::int64_t nsectors = across * across;
  const double r2 = r * r;

  // Each PE throws its n / P points into sectors (bale's counts, a cyclic array)...
  std::vector<std::int64_t> cyclic_counts(static_cast<std::size_t>(nsectors), 0);
  for (std::int64_t i = 0; i < cyclic_local_count(n, pe, pes); ++i) ++cyclic_counts[static_cast<std::size_t>(rng.next_int(nsectors))];
  ctx.allreduce(std::span<std::int64_t>(cyclic_counts), reduce_op::sum);
  // ...which bale then reads as the counts of its block of sectors: PE q's i-th sector (sector
  // first(q) + i) has the count at cyclic index i * P + q.
  std::vector<std::int64_t> count(static_cast<std::size_t>(nsectors)), first_point(static_cast<std::size_t>(nsectors) + 1, 0);
  std::vector<std::int64_t> first_sector(static_cast<std::size_t>(pes) + 1, 0);
  for (int q = 0; q < pes; ++q) {
    const std::int64_t local = cyclic_local_count(nsectors, q, pes);
    first_sector[static_cast<std::size_t>(q) + 1] = first_sector[static_cast<std::size_t>(q)] + local;
    for (std::int64_t i = 0; i < local; ++i)
      count[static_cast<std::size_t>(first_sector[static_cast<std::size_t>(q)] + i)] = cyclic_counts[static_cast<std::size_t>(i * pes + q)];
  }
  for (std::int64_t s = 0; s < nsectors; ++s)
    first_point[static_cast<std::size_t>(s) + 1] = first_point[static_cast<std::size_t>(s)] + count[static_cast<std::size_t>(s)];
  const std::int64_t my_first = first_sector[static_cast<std::size_t>(pe)], my_end = first_sector[static_cast<std::size_t>(pe) + 1];

  // This PE's points, drawn sector by sector; every PE gets them all (neighbours' points).
  std::vector<point> mine;
  for (std::int64_t s = my_first; s < my_end; ++s) {
    const double x_off = static_cast<double>(s / across) * width, y_off = static_cast<double>(s % across) * width;
    for (std::int64_t j = 0; j < count[static_cast<std::size_t>(s)]; ++j) {
      const double x = rng.next_double() * width + x_off;
      const double y = rng.next_double() * width + y_off;
      mine.push_back({x, y});
    }
  }
  std::vector<parcel<point>> outgoing;
  for (int q = 0; q < pes; ++q) outgoing.push_back({q, mine});
  sparse_exchange<point> share(ctx);
  std::vector<point> points;
  points.reserve(static_cast<std::size_t>(n));
  for (const auto& in : share.run(std::move(outgoing))) points.insert(points.end(), in.items.begin(), in.items.end());

  // The edges of each local sector with its 9 neighbours (itself included), in bale's order.
  auto dist2 = [](const point& a, const point& b) { return (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y); };
  std::vector<matrix_entry> edges;
  for (std::int64_t s = my_first; s < my_end; ++s) {
    const std::int64_t srow = s % across, scol = s / across;
    for (std::int64_t di = -1; di < 2; ++di) {
      for (std::int64_t dj = -1; dj < 2; ++dj) {
        const std::int64_t ncol = scol + di, nrow = srow + dj;
        if (ncol < 0 || ncol == across || nrow < 0 || nrow == across) continue;
        const std::int64_t other = ncol * across + nrow;
        const bool same = other == s;
        for (std::int64_t j = 0; j < count[static_cast<std::size_t>(s)]; ++j) {
          const std::int64_t pa = first_point[static_cast<std::size_t>(s)] + j;
          for (std::int64_t l = 0; l < count[static_cast<std::size_t>(other)]; ++l) {
            if (same && loops != self_loops::loops && l == j) continue;
            const std::int64_t pb = first_point[static_cast<std::size_t>(other)] + l;
            if (dist2(points[static_cast<std::size_t>(pa)], points[static_cast<std::size_t>(pb)]) < r2) {
              const std::int64_t row = block_to_cyclic(pa, n, pes), col = block_to_cyclic(pb, n, pes);
              if (col <= row) edges.push_back({row, col, 0.0});  // bale tosses the upper triangle
            }
          }
        }
      }
    }
  }

  // bale sends each edge to its row's PE through an exstack of 128 per destination (its own
  // rows placed at once) and draws a weight as each edge is placed: the rounds are replayed.
  std::vector<matrix_entry> placed;
  std::vector<parcel<matrix_entry>> round(static_cast<std::size_t>(pes));
  sparse_exchange<matrix_entry> exchange(ctx);
  constexpr std::size_t round_capacity = 128;
  std::size_t i = 0;
  for (;;) {
    for (int q = 0; q < pes; ++q) {
      round[static_cast<std::size_t>(q)].peer = q;
      round[static_cast<std::size_t>(q)].items.clear();
    }
    for (; i < edges.size(); ++i) {
      matrix_entry e = edges[i];
      const auto dest = static_cast<std::size_t>(e.row % pes);
      if (static_cast<int>(dest) == pe) {
        if (weighted) e.val = rng.next_double();
        placed.push_back(e);
        continue;
      }
      if (round[dest].items.size() == round_capacity) break;
      round[dest].items.push_back(e);
    }
    const bool mine_sent = i == edges.size();
    for (const auto& in : exchange.run(round)) {  // by source, in order: bale's pops
      for (matrix_entry e : in.items) {
        if (weighted) e.val = rng.next_double();
        placed.push_back(e);
      }
    }
    if (ctx.allreduce(mine_sent ? 0 : 1, reduce_op::sum) == 0) break;
  }
  sparse_matrix a = matrix_from_entries(n, n, pe, pes, weighted, placed);
  sort_nonzeros(a);
  finish_matrix(ctx, a);
  return a;
}

}  // namespace

sparse_matrix random_graph(context& ctx, std::int64_t n, graph_model model, edge_type type, self_loops loops,
                           double edge_density, std::int64_t seed) {
  if (model == graph_model::flat) return erdos_renyi_random_graph(ctx, n, edge_density, type, loops, seed);
  if (model != graph_model::geometric) throw std::invalid_argument("random_graph: expected the flat or geometric model");
  if (n < 1) throw std::invalid_argument("random_graph: got " + std::to_string(n) + " rows, expected at least 1");
  // bale's radius for the edge density: about n pi r^2 / 2 edges of the n (n - 1) / 2 possible.
  const auto nd = static_cast<double>(n);
  const double r = is_undirected(type) ? std::sqrt((nd - 1) * edge_density / (std::numbers::pi * nd))
                                       : std::sqrt(2 * (nd - 1) * edge_density / (std::numbers::pi * nd));
  knuth_ranf rng = knuth_ranf::for_pe(seed, ctx.rank());
  sparse_matrix lower = geometric_graph(ctx, n, r, is_weighted(type), loops, rng);
  if (is_undirected(type)) return lower;
  return direct_undirected_graph(ctx, lower, rng);  // the same stream, going on
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
