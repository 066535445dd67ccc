// The seam's launch (src/transport/launch.hpp): the backends this build has, by name.
#include "transport/launch.hpp"

#include <cstdio>
#include <cstdlib>

#include "transit/detail/core/error.hpp"
#include "transit/detail/core/simulation.hpp"
#include "transport/local_transports.hpp"
#ifdef TRANSIT_WITH_MPI
#include "transport/mpi_transports.hpp"
#endif

namespace transit::detail {

bool launched_by_mpi() {
  // A simulation runs only under smpirun, which sets none of the variables below.
  if constexpr (simulated_build) return true;
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                               "MPI_LOCALNRANKS", "HYDRA_CONTROL_FD"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

backend_launch& backend_named(std::string_view name) {
  if (name.empty()) name = launched_by_mpi() ? "mpi" : "local";
  if (name == "local") return local_backend_launch();
  if (name == "mpi") {
#ifdef TRANSIT_WITH_MPI
    return mpi_backend_launch();
#else
    throw_invalid("--transit-backend", name,
                  "'local': this transit was built without MPI (TRANSIT_WITH_MPI=OFF)");
#endif
  }
  throw_invalid("--transit-backend", name, "'local' or 'mpi'");
}

#ifdef TRANSIT_WITH_MPI
std::unique_ptr<process_launch> attach_to_program_group(const void* group, const launch_request& request) {
  return attach_process(*static_cast<const MPI_Comm*>(group), request);
}

bool prepare_program_start(const launch_request& request) { return prepare_mpi_before_init(request); }
#endif

backend_launch& session_backend_named(std::string_view name) {
  return backend_named(name.empty() ? std::string_view("local") : name);
}

void report_failure(int pe, const char* what) {
  std::fprintf(stderr, "transit: PE %d: %s\n", pe, what);
  std::fflush(stderr);
}

std::shared_ptr<const machine> emulated_machine(int pes, int pes_per_node) {
  return std::make_shared<const machine>(pes_per_node > 0 ? machine::uniform(pes, pes_per_node) : machine(pes));
}

}  // namespace transit::detail
