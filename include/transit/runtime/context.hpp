#pragma once
// A PE's view of the job: who it is, the machine, the physical topology, and collectives.
// transit's own layers reach the transport through detail/runtime/context_access.hpp; users need
// only this.
#include <memory>
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

 private:
  friend class detail::context_access;
  explicit context(std::unique_ptr<detail::context_state> state);
  void allreduce_raw(void* value, detail::scalar_type type, reduce_op op);

  std::unique_ptr<detail::context_state> state_;
  int rank_ = 0;
  int size_ = 0;
};

template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
T context::allreduce(T value, reduce_op op) {
  if constexpr (std::is_floating_point_v<T>) {
    double v = static_cast<double>(value);
    allreduce_raw(&v, detail::scalar_type::f64, op);
    return static_cast<T>(v);
  } else if constexpr (std::is_signed_v<T>) {
    std::int64_t v = value;
    allreduce_raw(&v, detail::scalar_type::i64, op);
    return static_cast<T>(v);
  } else {
    std::uint64_t v = value;
    allreduce_raw(&v, detail::scalar_type::u64, op);
    return static_cast<T>(v);
  }
}

}  // namespace transit
