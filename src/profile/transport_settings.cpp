// The transport section as the mpi launch applies it (transport_settings.hpp).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "profile/profile_json.hpp"
#include "profile/transport_settings.hpp"

namespace transit::detail {

std::string single_copy_from_profile() {
  try {
    const auto file = cached_profile(default_profile_path());
    const auto entry = file->find_transport("mpi", this_host());
    return entry ? entry->single_copy_choice : std::string();
  } catch (const profile_error& e) {
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (rank == nullptr || std::strcmp(rank, "0") == 0)
      std::fprintf(stderr, "transit: warning: %s; Open MPI's settings from it are not applied\n", e.what());
    return {};
  }
}

}  // namespace transit::detail
