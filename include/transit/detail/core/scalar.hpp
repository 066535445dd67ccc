#pragma once
// The transports' own allreduces: every value travels as 64 bits, combined by reduce_op.
#include <cstdint>
#include <cstring>

#include "transit/core/reduce.hpp"

namespace transit::detail {
/// Element type of a transport-level allreduce: every value travels as 64 bits.
enum class scalar_type { i64, u64, f64 };

/// `op` of two values of `type`, each held as its 64 bits (the transports' own allreduces).
template <class T>
std::uint64_t combine_as(std::uint64_t a, std::uint64_t b, reduce_op op) noexcept {
  T x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  T r = x;
  switch (op) {
    case reduce_op::sum: r = x + y; break;
    // std::min and std::max, spelled out: this header is in every public one, <algorithm> is not.
    case reduce_op::min: r = y < x ? y : x; break;
    case reduce_op::max: r = x < y ? y : x; break;
  }
  std::uint64_t bits;
  std::memcpy(&bits, &r, sizeof bits);
  return bits;
}
inline std::uint64_t combine(std::uint64_t a, std::uint64_t b, scalar_type type, reduce_op op) noexcept {
  switch (type) {
    case scalar_type::i64: return combine_as<std::int64_t>(a, b, op);
    case scalar_type::u64: return combine_as<std::uint64_t>(a, b, op);
    case scalar_type::f64: return combine_as<double>(a, b, op);
  }
  return a;
}

}  // namespace transit::detail
