#pragma once
// Arithmetic on one element type, type-erased so that the request engine (compiled once, in
// src/one_sided) can apply accumulate, fetch_add and compare_exchange to elements of any
// global_array<T>. One indirect call per request served; the per-request bytes are copied by the
// engine itself.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "transit/core/reduce.hpp"

namespace transit::detail {

/// The arithmetic type behind an element_ops, for backends that need to name it (MPI datatypes).
enum class scalar_kind : std::uint8_t {
  int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, long_double
};

template <class T>
constexpr scalar_kind scalar_kind_of() noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return sizeof(T) == 4 ? scalar_kind::float32 : sizeof(T) == 8 ? scalar_kind::float64 : scalar_kind::long_double;
  } else if constexpr (std::is_signed_v<T>) {
    return sizeof(T) == 1 ? scalar_kind::int8 : sizeof(T) == 2 ? scalar_kind::int16 : sizeof(T) == 4 ? scalar_kind::int32 : scalar_kind::int64;
  } else {
    return sizeof(T) == 1 ? scalar_kind::uint8 : sizeof(T) == 2 ? scalar_kind::uint16 : sizeof(T) == 4 ? scalar_kind::uint32 : scalar_kind::uint64;
  }
}

struct element_ops {
  std::size_t size = 0;
  scalar_kind kind = scalar_kind::uint8;
  /// Integral: sums of deltas combine exactly (modulo 2^bits), so requests may be combined.
  bool combinable = false;
  /// dst[i] = dst[i] op src[i] for i < count; atomic per element when `atomic`.
  void (*accumulate)(std::byte* dst, const std::byte* src, std::size_t count, reduce_op op, bool atomic) = nullptr;
  /// old = dst; dst += delta (atomic when `atomic`).
  void (*fetch_add)(std::byte* dst, const std::byte* delta, std::byte* old, bool atomic) = nullptr;
  /// old = dst; if dst == expected (object representations) dst = desired. `expected_desired`
  /// holds expected then desired.
  void (*compare_exchange)(std::byte* dst, const std::byte* expected_desired, std::byte* old, bool atomic) = nullptr;
  /// acc = acc op value: combining deltas (sum) or values (min, max) of requests for one word.
  void (*combine)(std::byte* acc, const std::byte* value, reduce_op op) = nullptr;
};

template <class T>
T load_element(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
void store_element(std::byte* p, T v) noexcept {
  std::memcpy(p, &v, sizeof(T));
}

/// a op b; integer sums wrap (computed unsigned, so signed overflow is not undefined).
template <class T>
T reduce_values(T a, T b, reduce_op op) noexcept {
  switch (op) {
    case reduce_op::min: return std::min(a, b);
    case reduce_op::max: return std::max(a, b);
    case reduce_op::sum: break;
  }
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class T>
void apply_reduce(std::byte* dst, T value, reduce_op op, bool atomic) noexcept {
  if (!atomic) {
    store_element<T>(dst, reduce_values(load_element<T>(dst), value, op));
    return;
  }
  std::atomic_ref<T> word(*reinterpret_cast<T*>(dst));
  if (op == reduce_op::sum) {
    word.fetch_add(value);
    return;
  }
  T seen = word.load();
  while (!word.compare_exchange_weak(seen, reduce_values(seen, value, op))) {
  }
}

template <class T>
const element_ops* element_ops_for() noexcept {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  static const element_ops ops{
      sizeof(T),
      scalar_kind_of<T>(),
      std::is_integral_v<T>,
      [](std::byte* dst, const std::byte* src, std::size_t count, reduce_op op, bool atomic) {
        for (std::size_t i = 0; i < count; ++i)
          apply_reduce<T>(dst + i * sizeof(T), load_element<T>(src + i * sizeof(T)), op, atomic);
      },
      [](std::byte* dst, const std::byte* delta, std::byte* old, bool atomic) {
        const T d = load_element<T>(delta);
        if (atomic) {
          store_element<T>(old, std::atomic_ref<T>(*reinterpret_cast<T*>(dst)).fetch_add(d));
        } else {
          const T before = load_element<T>(dst);
          store_element<T>(old, before);
          store_element<T>(dst, reduce_values(before, d, reduce_op::sum));
        }
      },
      [](std::byte* dst, const std::byte* expected_desired, std::byte* old, bool atomic) {
        T expected = load_element<T>(expected_desired);
        const T desired = load_element<T>(expected_desired + sizeof(T));
        if (atomic) {
          std::atomic_ref<T>(*reinterpret_cast<T*>(dst)).compare_exchange_strong(expected, desired);
          store_element<T>(old, expected);  // the value seen, whether or not it was replaced
        } else {
          std::memcpy(old, dst, sizeof(T));
          if (std::memcmp(dst, expected_desired, sizeof(T)) == 0) std::memcpy(dst, &desired, sizeof(T));
        }
      },
      [](std::byte* acc, const std::byte* value, reduce_op op) {
        store_element<T>(acc, reduce_values(load_element<T>(acc), load_element<T>(value), op));
      }};
  return &ops;
}

}  // namespace transit::detail
