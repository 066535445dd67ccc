#include "bfs/kronecker.hpp"

#include <stdexcept>
#include <string>

namespace transit::apps {

namespace {

constexpr std::uint64_t modulus = 0x7FFFFFFF;  // 2^31 - 1
constexpr std::uint64_t multiplier_1 = 107374182;  // of x_{n-1}
constexpr std::uint64_t multiplier_5 = 104480;     // of x_{n-5}

/// x modulo 2^31 - 1, for any 64-bit x (2^31 = 1 modulo it: fold the high bits onto the low).
constexpr std::uint32_t reduce(std::uint64_t x) {
  x = (x & modulus) + (x >> 31);
  x = (x & modulus) + (x >> 31);
  return static_cast<std::uint32_t>(x >= modulus ? x - modulus : x);
}

/// A power of the step's matrix: row i gives the new z_[i] from the old state.
using step_matrix = std::array<std::array<std::uint32_t, 5>, 5>;

step_matrix multiply(const step_matrix& a, const step_matrix& b) {
  step_matrix r{};
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      std::uint64_t sum = 0;  // five terms below 2^32 each after one fold: no overflow
      for (int k = 0; k < 5; ++k) {
        const std::uint64_t p = static_cast<std::uint64_t>(a[i][k]) * b[k][j];
        sum += (p & modulus) + (p >> 31);
      }
      r[i][j] = reduce(sum);
    }
  return r;
}

/// powers[byte][j] = step^(j * 256^byte), byte 0 .. 23: a skip of up to 2^192 draws is one matrix
/// per nonzero byte of its count.
struct skip_table {
  std::vector<std::array<step_matrix, 256>> powers;
  skip_table() : powers(24) {
    step_matrix identity{};
    for (int i = 0; i < 5; ++i) identity[i][i] = 1;
    step_matrix step{};  // z0' = a z0 + b z4; zi' = z(i-1)
    step[0][0] = static_cast<std::uint32_t>(multiplier_1);
    step[0][4] = static_cast<std::uint32_t>(multiplier_5);
    for (int i = 1; i < 5; ++i) step[i][i - 1] = 1;
    for (std::size_t byte = 0; byte < powers.size(); ++byte) {
      powers[byte][0] = identity;
      powers[byte][1] = byte == 0 ? step : multiply(powers[byte - 1][255], powers[byte - 1][1]);
      for (std::size_t j = 2; j < 256; ++j) powers[byte][j] = multiply(powers[byte][j - 1], powers[byte][1]);
    }
  }
};

const skip_table& skips() {
  static const skip_table table;  // built once per process, by the first PE thread to ask
  return table;
}

void apply(const step_matrix& m, std::array<std::uint32_t, 5>& z) {
  std::array<std::uint32_t, 5> out{};
  for (int i = 0; i < 5; ++i) {
    std::uint64_t sum = 0;
    for (int k = 0; k < 5; ++k) {
      const std::uint64_t p = static_cast<std::uint64_t>(m[i][k]) * z[k];
      sum += (p & modulus) + (p >> 31);
    }
    out[i] = reduce(sum);
  }
  z = out;
}

/// One quadrant of the initiator: 0 A (top left), 1 B (top right), 2 C, 3 D. A draw in [0, 10000)
/// without modulo bias: draws below 2^31 - 1 mod 10000 are redrawn.
int quadrant(graph500_rng& rng) {
  constexpr std::uint32_t limit = static_cast<std::uint32_t>(modulus % 10000);
  std::uint32_t value = rng.next_uint();
  while (value < limit) value = rng.next_uint();
  value %= 10000;
  if (value < 1900) return 1;
  if (value < 3800) return 2;
  if (value < 9500) return 0;
  return 3;
}

/// x with its 64 bits in reverse order.
std::uint64_t bit_reverse(std::uint64_t x) {
  x = (x >> 32) | (x << 32);
  x = ((x >> 16) & UINT64_C(0x0000FFFF0000FFFF)) | ((x & UINT64_C(0x0000FFFF0000FFFF)) << 16);
  x = ((x >> 8) & UINT64_C(0x00FF00FF00FF00FF)) | ((x & UINT64_C(0x00FF00FF00FF00FF)) << 8);
  x = ((x >> 4) & UINT64_C(0x0F0F0F0F0F0F0F0F)) | ((x & UINT64_C(0x0F0F0F0F0F0F0F0F)) << 4);
  x = ((x >> 2) & UINT64_C(0x3333333333333333)) | ((x & UINT64_C(0x3333333333333333)) << 2);
  return ((x >> 1) & UINT64_C(0x5555555555555555)) | ((x & UINT64_C(0x5555555555555555)) << 1);
}

/// The label permutation: a bijection on `scale` bits keyed by (key0, key1). Multiplying by an odd
/// number permutes the low bits; the reversal brings them to the top for the next round.
std::int64_t permute_label(std::int64_t vertex, int scale, std::uint64_t key0, std::uint64_t key1) {
  std::uint64_t v = static_cast<std::uint64_t>(vertex) + key0 + key1;
  v *= key0 | UINT64_C(0x4519840211493211);
  v = bit_reverse(v) >> (64 - scale);
  v *= key1 | UINT64_C(0x3050852102C843A5);
  return static_cast<std::int64_t>(bit_reverse(v) >> (64 - scale));
}

}  // namespace

graph500_rng::graph500_rng(std::uint64_t seed1, std::uint64_t seed2) {
  z_[0] = static_cast<std::uint32_t>(seed1 & 0x3FFFFFFF) + 1;
  z_[1] = static_cast<std::uint32_t>((seed1 >> 30) & 0x3FFFFFFF) + 1;
  z_[2] = static_cast<std::uint32_t>(seed2 & 0x3FFFFFFF) + 1;
  z_[3] = static_cast<std::uint32_t>((seed2 >> 30) & 0x3FFFFFFF) + 1;
  z_[4] = static_cast<std::uint32_t>((seed2 >> 60) << 4) + static_cast<std::uint32_t>(seed1 >> 60) + 1;
}

void graph500_rng::skip(std::uint64_t high, std::uint64_t middle, std::uint64_t low) {
  const skip_table& table = skips();
  const std::uint64_t words[3] = {low, middle, high};
  for (std::size_t w = 0; w < 3; ++w)
    for (std::size_t byte = 0; byte < 8; ++byte)
      if (const std::size_t j = (words[w] >> (8 * byte)) & 0xFF; j != 0) apply(table.powers[8 * w + byte][j], z_);
}

std::uint32_t graph500_rng::next_uint() {
  const std::uint32_t fresh = reduce(multiplier_1 * z_[0] + multiplier_5 * z_[4]);
  z_ = {fresh, z_[0], z_[1], z_[2], z_[3]};
  return fresh;
}

double graph500_rng::next_double() {
  // (2^31 - 1)^-1 and (2^31 - 1)^-2, as the reference spells them (the same doubles).
  const double first = static_cast<double>(next_uint()) * .000000000465661287524579692;
  return first + static_cast<double>(next_uint()) * .0000000000000000002168404346990492787;
}

std::vector<kronecker_edge> kronecker_edges(int scale, std::uint64_t seed1, std::uint64_t seed2, std::int64_t begin,
                                            std::int64_t end) {
  if (scale < 1 || scale > 62)
    throw std::invalid_argument("kronecker_edges: scale " + std::to_string(scale) + ", expected 1 to 62");
  if (begin < 0 || begin > end)
    throw std::invalid_argument("kronecker_edges: edges [" + std::to_string(begin) + ", " + std::to_string(end) +
                                "), expected 0 <= begin <= end");
  const graph500_rng seeded(seed1, seed2);
  graph500_rng keys = seeded;
  keys.skip(50, 7, 0);
  std::uint64_t key0 = keys.next_uint();
  key0 = key0 * UINT64_C(0xFFFFFFFF) + keys.next_uint();
  std::uint64_t key1 = keys.next_uint();
  key1 = key1 * UINT64_C(0xFFFFFFFF) + keys.next_uint();

  std::vector<kronecker_edge> edges;
  edges.reserve(static_cast<std::size_t>(end - begin));
  graph500_rng block = seeded;  // the generator skipped to the start of edge e's block of 256
  std::int64_t block_start = -1;
  for (std::int64_t e = begin; e < end; ++e) {
    if ((e & ~std::int64_t{0xFF}) != block_start) {
      block_start = e & ~std::int64_t{0xFF};
      block = seeded;
      block.skip(0, static_cast<std::uint64_t>(block_start), 0);
    }
    graph500_rng rng = block;
    rng.skip(0, static_cast<std::uint64_t>(e & 0xFF), 0);  // one matrix at most
    std::int64_t src = 0, tgt = 0, half = std::int64_t{1} << scale;
    for (int level = 0; level < scale; ++level) {
      const int q = quadrant(rng);
      int src_bit = q / 2, tgt_bit = q % 2;
      if (src == tgt && src_bit > tgt_bit) std::swap(src_bit, tgt_bit);  // undirected: the upper triangle
      half /= 2;
      src += half * src_bit;
      tgt += half * tgt_bit;
    }
    edges.push_back({permute_label(src, scale, key0, key1), permute_label(tgt, scale, key0, key1)});
  }
  return edges;
}

std::vector<double> graph500_random_numbers(std::uint64_t seed1, std::uint64_t seed2, std::int64_t position,
                                            std::int64_t count) {
  graph500_rng rng(seed1, seed2);
  rng.skip(2, 0, 2 * static_cast<std::uint64_t>(position));
  std::vector<double> values(static_cast<std::size_t>(count));
  for (double& v : values) v = rng.next_double();
  return values;
}

}  // namespace transit::apps
