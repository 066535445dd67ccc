#pragma once
// Reduction operators of context::allreduce and of the transport's collective groups.

namespace transit {

/// Reduction operator for context::allreduce (and accumulate on global arrays).
enum class reduce_op {
  sum,  ///< the sum of the values
  min,  ///< the smallest value
  max   ///< the largest value
};

namespace detail {
/// Element type of a transport-level allreduce: every value travels as 64 bits.
enum class scalar_type { i64, u64, f64 };
}  // namespace detail

}  // namespace transit
