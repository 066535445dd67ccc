#pragma once
// The template bodies of context's collectives, included at the end of runtime/context.hpp: the
// typed calls widen to the 64-bit values the transports reduce, or gather bytes, and call the
// untyped members compiled in src/runtime/context.cpp.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "transit/runtime/context.hpp"

namespace transit {

template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
T context::allreduce(T value, reduce_op op) {
  if constexpr (std::is_floating_point_v<T>) {
    double v = static_cast<double>(value);
    allreduce_raw(&v, 1, detail::scalar_type::f64, op);
    return static_cast<T>(v);
  } else if constexpr (std::is_signed_v<T>) {
    std::int64_t v = value;
    allreduce_raw(&v, 1, detail::scalar_type::i64, op);
    return static_cast<T>(v);
  } else {
    std::uint64_t v = value;
    allreduce_raw(&v, 1, detail::scalar_type::u64, op);
    return static_cast<T>(v);
  }
}

template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
void context::allreduce(std::span<T> values, reduce_op op) {
  // The transports reduce 64-bit values: other widths go through a 64-bit copy.
  using wide = std::conditional_t<std::is_floating_point_v<T>, double,
                                  std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;
  constexpr detail::scalar_type type = std::is_floating_point_v<T> ? detail::scalar_type::f64
                                       : std::is_signed_v<T>       ? detail::scalar_type::i64
                                                                   : detail::scalar_type::u64;
  check_same_count(values.size());
  if constexpr (std::is_same_v<T, wide>) {
    allreduce_raw(values.data(), values.size(), type, op);
  } else {
    std::vector<wide> copy(values.begin(), values.end());
    allreduce_raw(copy.data(), copy.size(), type, op);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(copy[i]);
  }
}

template <class T>
T context::scan(const std::vector<T>& all, int last, reduce_op op) {
  T acc = op == reduce_op::sum   ? T{}
          : op == reduce_op::min ? std::numeric_limits<T>::max()
                                 : std::numeric_limits<T>::lowest();
  for (int pe = 0; pe <= last; ++pe) {
    const T v = all[static_cast<std::size_t>(pe)];
    // (v < acc ? v : acc) and (acc < v ? v : acc) are std::min and std::max, without <algorithm>.
    acc = op == reduce_op::sum ? static_cast<T>(acc + v) : op == reduce_op::min ? (v < acc ? v : acc) : (acc < v ? v : acc);
  }
  return acc;
}

template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
T context::inclusive_scan(T value, reduce_op op) {
  return scan(allgather(value), rank_, op);
}

template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
T context::exclusive_scan(T value, reduce_op op) {
  return scan(allgather(value), rank_ - 1, op);
}

template <class T>
  requires std::is_trivially_copyable_v<T>
std::vector<T> context::allgather(const T& value) {
  std::vector<T> all(static_cast<std::size_t>(size_));
  allgather_raw(&value, sizeof(T), all.data());
  return all;
}

template <class T>
  requires std::is_trivially_copyable_v<T>
T context::broadcast(const T& value, int root) {
  T out = value;
  broadcast_raw(&out, sizeof(T), root);
  return out;
}

}  // namespace transit
