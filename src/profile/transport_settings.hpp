#pragma once
// Private to the library: the transport section of the profile file as the runtime's mpi launch
// applies it before MPI starts (src/runtime/launch/mpi.cpp). The profile module sits below the
// runtime, so the launch asks it directly.
#include <string>

namespace transit::detail {

/// Open MPI's shared-memory single-copy mechanism that calibration chose for this host
/// ("default": Open MPI's own; "none": copy in and out of shared memory), or "" when the profile
/// holds no choice. Local; reads the profile file (default_profile_path()). Never throws: these
/// settings only make things faster, so a profile that cannot be read is reported on stderr (by
/// the first process of a launch) and ignored here; streamers that need it report it as an error.
std::string single_copy_from_profile();

}  // namespace transit::detail
