#pragma once
// profile_file's friend inside the library (src/profile/profile_json.hpp): its JSON sections.

namespace transit::detail {
struct profile_access;
}  // namespace transit::detail
