#pragma once
// Graph500's Kronecker graph (specification 3.0, section 3: SCALE, edge factor, initiator A = 0.57,
// B = C = 0.19, D = 0.05) drawn as the reference code draws it, so that `transit app bfs` searches
// the very graph graph500_reference_bfs searches, from the same roots. Written from the reference's
// description (generator/ of graph500/graph500), not copied:
//
// - The random numbers are L'Ecuyer's multiple recursive generator of order 5 modulo 2^31 - 1
//   (x_n = 107374182 x_{n-1} + 104480 x_{n-5}; the one GSL calls mrg), made splittable by skipping
//   ahead: the state times the n-th power of the step's 5x5 matrix, taken byte by byte from a
//   table of powers (this file builds the table itself when first used).
// - Edge e draws from the generator seeded with the user's two 64-bit seeds and skipped e * 2^64,
//   so any PE draws any range of edges and the graph does not depend on the PE count. Each of the
//   SCALE levels picks a quadrant (a draw in [0, 10000) without modulo bias: 1900 B, 1900 C, 5700
//   A, the rest D), clipped and flipped to the upper triangle while the edge is on the diagonal.
// - Vertex labels are permuted by a bijection on SCALE bits (add, multiply by an odd number, bit
//   reversal, twice) whose two keys are drawn from the generator skipped 50 * 2^128 + 7 * 2^64.
// - The edge list needs no shuffle: edge e depends on e alone, and its position says nothing of it.
//   Self loops and duplicate edges stay in the list, as the specification says.
#include <array>
#include <cstdint>
#include <vector>

namespace transit::apps {

/// The generator's state: five values modulo 2^31 - 1, not all zero. Local.
class graph500_rng {
 public:
  /// Local: seeded from two 64-bit seeds as the reference spreads them (30 bits each into four
  /// values, the top bits of both into the fifth, each plus one so none is zero).
  graph500_rng(std::uint64_t seed1, std::uint64_t seed2);
  /// Local: skips ahead high * 2^128 + middle * 2^64 + low draws.
  void skip(std::uint64_t high, std::uint64_t middle, std::uint64_t low);
  /// Local: the next value, in [0, 2^31 - 1).
  std::uint32_t next_uint();
  /// Local: a double in [0, 1) from two draws (the reference's mrg_get_double_orig).
  double next_double();

 private:
  std::array<std::uint32_t, 5> z_{};  // z_[0] is the newest value
};

/// One edge of the list, as generated (either direction; self loops and duplicates kept).
struct kronecker_edge {
  std::int64_t v0 = 0, v1 = 0;
};

/// Local: edges [begin, end) of the Kronecker graph of 2^scale vertices drawn from (seed1, seed2)
/// (the reference's generate_kronecker_range with its make_mrg_seed(seed1, seed2)). scale from 1
/// to 62; throws std::invalid_argument naming the value otherwise, or when begin > end.
std::vector<kronecker_edge> kronecker_edges(int scale, std::uint64_t seed1, std::uint64_t seed2, std::int64_t begin,
                                            std::int64_t end);

/// Local: `count` doubles in [0, 1) from position `position` of the stream the reference draws its
/// search roots from (make_random_numbers: the generator skipped 2 * 2^128 + 2 * position).
std::vector<double> graph500_random_numbers(std::uint64_t seed1, std::uint64_t seed2, std::int64_t position,
                                            std::int64_t count);

}  // namespace transit::apps
