#pragma once
// Private to src/protocols: the profile `automatic` uses, read once per process and path.
#include <memory>

#include "transit/protocols/protocols.hpp"

namespace transit::detail {

/// The job's profile entry (protocol_profile_in_use), or the built-in rule (an empty profile with
/// source "built-in"). Throws protocol_profile_error when the file cannot be used.
std::shared_ptr<const protocol_profile> profile_for(const context& ctx);

}  // namespace transit::detail
