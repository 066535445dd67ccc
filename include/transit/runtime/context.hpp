#pragma once
// A PE's view of the job: who it is, the machine, the physical topology, and collectives.
// transit's own layers reach the transport through detail/runtime/context_access.hpp; users need
// only this. The collectives' template bodies are in detail/runtime/context_impl.hpp. The launch
// options and the physical topology are only named here: include runtime/options.hpp or
// topology/topology_manager.hpp (or transit.hpp) to read ctx.options() or ctx.topology().
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "transit/core/reduce.hpp"
#include "transit/detail/runtime/context_fwd.hpp"
#include "transit/topology/machine.hpp"

namespace transit {

struct run_options;      // runtime/options.hpp
class topology_manager;  // topology/topology_manager.hpp

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
  /// Takes ownership of `state` once constructed (context_access::make holds it until then).
  explicit context(detail::context_state* state);
  void allreduce_raw(void* values, std::size_t count, detail::scalar_type type, reduce_op op);
  void check_same_count(std::size_t count);
  void allgather_raw(const void* value, std::size_t bytes, void* all);
  void broadcast_raw(void* value, std::size_t bytes, int root);
  template <class T>
  static T scan(const std::vector<T>& all, int last, reduce_op op);

  // Owned; a plain pointer so that this header, on every program's path, needs no <memory>.
  detail::context_state* state_;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace transit

// The collectives' template bodies.
#include "transit/detail/runtime/context_impl.hpp"
