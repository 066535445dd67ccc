#pragma once
// Private to the library: the transport section of the profile file as the mpi backend's launch
// applies it before MPI starts (src/transport/mpi/launch.cpp). The profile module sits above the
// transport seam, so the runtime hands the launch this function (launch_request::profile_single_copy).
#include <string>

namespace transit::detail {

/// Open MPI's shared-memory single-copy mechanism that calibration chose for this host
/// ("default": Open MPI's own; "none": copy in and out of shared memory), or "" when the profile
/// holds no choice. Local; reads the profile file (default_profile_path()). Never throws: these
/// settings only make things faster, so a profile that cannot be read is reported on stderr (by
/// the first process of a launch) and ignored here; streamers that need it report it as an error.
std::string single_copy_from_profile();

}  // namespace transit::detail
