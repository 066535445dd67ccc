#pragma once
// The vocabulary of global_array's multi-region transfers (put_regions, get_regions, put_strided):
// regions and the protocols that move them (Iancu and Hofmeyr 2008; docs/protocols.md). The
// measured profiles that `automatic` chooses from are in one_sided/protocol_profile.hpp.
#include <cstddef>
#include <string_view>

namespace transit {

/// `count` elements from global index `index`.
struct region {
  std::size_t index;  ///< global index of the region's first element
  std::size_t count;  ///< elements in the region
};

/// How a multi-region transfer moves its regions to (from) one owner.
/// blocking: one put or get per region, each complete at its target before the next starts;
/// pipelined: every region issued nonblocking, then one completion;
/// packed: regions packed into aggregated messages, unpacked by the target (active-message
/// style); a region too large for one message goes pipelined (GASNet's AMSize rule).
enum class transfer_protocol {
  automatic,  ///< per owner, the fixed protocol the profile says is fastest (docs/protocols.md)
  blocking,   ///< one put or get per region, each complete before the next starts
  pipelined,  ///< every region issued nonblocking, then one completion
  packed      ///< regions packed into aggregated messages, unpacked by the target
};

/// "automatic", "blocking", "pipelined" or "packed". Local.
std::string_view to_string(transfer_protocol p) noexcept;
/// "automatic", "blocking", "pipelined", "packed"; std::invalid_argument otherwise. Local.
transfer_protocol parse_transfer_protocol(std::string_view name);

}  // namespace transit
