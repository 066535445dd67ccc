#pragma once
// Private to the library: the JSON inside a profile_file, for the layers that calibrate a section
// of their own (protocols, issue 12: `transit calibrate protocols`; tuning's streamer and
// transport sections), and the cached reading that streamers use. nlohmann-json stays out of the public headers.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "transit/profile/profile.hpp"

namespace transit {

struct profile_file::document {
  nlohmann::json root;
};

namespace detail {

struct profile_access {
  /// The array of entries of section `kind` ("streamer", "transport", "protocols"), created empty
  /// when the file has none. An entry is an object with at least "backend", "pes_per_node" and
  /// "host"; the rest is the section's own.
  static nlohmann::json& section(profile_file& file, std::string_view kind);
  /// The section, or nullptr when the file has none.
  static const nlohmann::json* find_section(const profile_file& file, std::string_view kind);
};

/// The one writer of the profile file, for every section: `text` to a temporary file beside
/// `path`, then renamed over it (a reader never sees half a profile); creates the directory.
/// Throws profile_error naming the file.
void write_profile_text(const std::filesystem::path& path, const std::string& text);

/// The profile at `path`, read once per process and again only when the file changes (many
/// streamers of many PEs ask). Throws profile_error as profile_file::load.
std::shared_ptr<const profile_file> cached_profile(const std::filesystem::path& path);

}  // namespace detail
}  // namespace transit
