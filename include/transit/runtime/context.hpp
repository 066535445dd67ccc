#pragma once
// A PE's view of the job: who it is, the machine, the physical topology, and collectives.
// transit's own layers reach the transport through detail/runtime/context_access.hpp; users need
// only this.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <span>
#include <vector>
#include <string_view>
#include <type_traits>
#include <cstdint>

#include "transit/core/reduce.hpp"
#include "transit/detail/runtime/context_fwd.hpp"
#include "transit/runtime/options.hpp"
#include "transit/topology/machine.hpp"
#include "transit/topology/topology_manager.hpp"

namespace transit {

/// One per PE, created by transit::run and handed to the body; not copyable.
class context {
 public:
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  /// This PE, in [0, size()). Local, never blocks.
  int rank() const noexcept { return rank_; }
  /// Number of PEs in the job. Local.
  int size() const noexcept { return size_; }
  /// Nodes and PEs of the job. Local.
  const transit::machine& machine() const noexcept;
  /// The physical topology of the job (--transit-physical, TRANSIT_PHYSICAL, or nodes one switch
  /// hop apart): coordinates, hops, nearest PE. Local.
  const topology_manager& topology() const noexcept;
  /// "local" or "mpi". Local.
  std::string_view backend() const noexcept;
  /// The options this job was launched with. Local.
  const run_options& options() const noexcept;

  /// Collective: returns once every PE has called it. Keeps transit's traffic moving meanwhile.
  void barrier();
  /// Collective: the sum, min or max of `value` over all PEs, on every PE. Integers and doubles.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  T allreduce(T value, reduce_op op);
  /// Collective: the element-wise sum, min or max of `values` over all PEs, in place on every PE.
  /// Throws std::invalid_argument on every PE when the PEs passed different counts (naming the
  /// smallest and largest).
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  void allreduce(std::span<T> values, reduce_op op);
  /// Collective: `op` over the values of PEs 0 .. rank(), this one included.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  T inclusive_scan(T value, reduce_op op = reduce_op::sum);
  /// Collective: `op` over the values of PEs 0 .. rank() - 1; on PE 0, op's identity (0 for sum,
  /// the type's largest value for min, its lowest for max). bale's lgp_prior_add is the sum.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  T exclusive_scan(T value, reduce_op op = reduce_op::sum);
  /// Collective: every PE's `value`, indexed by PE, on every PE. Any trivially copyable T; every
  /// PE holds size() of them.
  template <class T>
    requires std::is_trivially_copyable_v<T>
  std::vector<T> allgather(const T& value);
  /// Collective: the `value` of PE `root` on every PE (the others' `value` is not read). Throws
  /// std::out_of_range on every PE for a root outside [0, size()).
  template <class T>
    requires std::is_trivially_copyable_v<T>
  T broadcast(const T& value, int root);

 private:
  friend class detail::context_access;
  explicit context(std::unique_ptr<detail::context_state> state);
  void allreduce_raw(void* values, std::size_t count, detail::scalar_type type, reduce_op op);
  void check_same_count(std::size_t count);
  void allgather_raw(const void* value, std::size_t bytes, void* all);
  void broadcast_raw(void* value, std::size_t bytes, int root);
  template <class T>
  static T scan(const std::vector<T>& all, int last, reduce_op op);

  std::unique_ptr<detail::context_state> state_;
  int rank_ = 0;
  int size_ = 0;
};

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
    acc = op == reduce_op::sum ? static_cast<T>(acc + v) : op == reduce_op::min ? std::min(acc, v) : std::max(acc, v);
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
