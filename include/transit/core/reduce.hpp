#pragma once
// Reduction operators of context::allreduce and of global arrays' accumulate.

namespace transit {

/// Reduction operator for context::allreduce (and accumulate on global arrays).
enum class reduce_op {
  sum,  ///< the sum of the values
  min,  ///< the smallest value
  max   ///< the largest value
};

}  // namespace transit
