#pragma once
// The transport's hook into the tuning layer (which sits above it): transport settings that
// calibration decided and recorded in the profile, applied by a backend before it starts.
// Declared here, defined in src/tuning/transport_settings.cpp, so the transport includes no tuning
// header (the layers include one way only).
#include <string>

namespace transit::detail {

/// Open MPI's shared-memory single-copy mechanism that calibration chose for this host
/// ("default": Open MPI's own; "none": copy in and out of shared memory), or "" when the profile
/// holds no choice. Local; reads the profile file (default_profile_path()). Never throws: these
/// settings only make things faster, so a profile that cannot be read is reported on stderr (by
/// the first process of a launch) and ignored here; streamers that need it report it as an error.
std::string single_copy_from_profile();

}  // namespace transit::detail
