#pragma once
// What the layers above the seam hold of the transport without calling it: a received message and
// a group of collectives (the streamer core keeps both; transport.hpp has the transport itself).
#include <cstdint>

#include "transit/core/reduce.hpp"
#include "transit/detail/core/scalar.hpp"
#include "transit/detail/transport/buffer.hpp"

namespace transit::detail {

/// A message as received: who sent it, on which channel, and the payload.
struct message {
  int source = -1;
  std::uint32_t channel = 0;
  message_buffer data;
};

/// One ordered sequence of non-blocking collectives over all PEs. At most one collective of a
/// group is in flight; start it, then call test() until it returns true.
class collective_group {
 public:
  virtual ~collective_group() = default;
  /// Starts an allreduce of `count` values in place. `values` must stay valid until test() is true.
  virtual void start_allreduce(void* values, int count, scalar_type type, reduce_op op) = 0;
  virtual void start_barrier() = 0;
  /// Non-blocking; true once the started collective is complete (and then its values are final).
  virtual bool test() = 0;
};

}  // namespace transit::detail
