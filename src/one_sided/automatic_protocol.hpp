#pragma once
// What one_sided's multi-region transfers take when the protocol is `automatic`: the choice from
// the job's measured protocol profile (transit/one_sided/protocol_profile.hpp), made in
// protocol_profile.cpp beside the transfers (see include/transit/detail/one_sided/transfers.hpp).
#include <cstddef>
#include <memory>

#include "transit/one_sided/regions.hpp"

namespace transit {
class context;
}  // namespace transit

namespace transit::detail {

/// The choice `automatic` makes for one owner's pieces of a transfer.
class automatic_protocol {
 public:
  virtual ~automatic_protocol() = default;
  /// A fixed protocol (never automatic) for `regions` regions of `region_bytes` each to a target
  /// on this node or not. Answers by (floor(log2 S), floor(log2 N), same_node) alone, so callers
  /// may keep the answers by that key.
  virtual transfer_protocol choose(std::size_t region_bytes, std::size_t regions, bool same_node) const = 0;
};

/// The job's choice (the profile entry in use, or the built-in rule); read once per process and
/// profile path. Throws protocol_profile_error when the profile file cannot be used. Thread-safe.
std::shared_ptr<const automatic_protocol> automatic_protocol_for(const context& ctx);

}  // namespace transit::detail
