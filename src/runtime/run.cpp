#include "transit/runtime/run.hpp"

#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>

#include "runtime/launch/common.hpp"

namespace transit {

const char* version() noexcept { return "0.1.0"; }

int detail::run_body(int& argc, char**& argv, detail::function_ref<void(context&)> call) {
  const std::function<void(context&)> body = [call](context& ctx) { call(ctx); };
  run_options options;
  try {
    options = parse_run_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "transit: error: %s\n", e.what());
    return 2;
  }
  const bool use_mpi = options.backend.empty() ? started_by_mpi_launcher() : options.backend == "mpi";
  if (!use_mpi) {
    try {
      return detail::run_local(options, body);
    } catch (const std::invalid_argument& e) {  // options that only the job's size can judge
      std::fprintf(stderr, "transit: error: %s\n", e.what());
      return 2;
    }
  }
#ifdef TRANSIT_WITH_MPI
  try {
    return detail::run_mpi(options, body);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transit: error: %s\n", e.what());
    return 2;
  }
#else
  std::fprintf(stderr,
               "transit: error: --transit-backend=mpi: this transit was built without MPI "
               "(TRANSIT_WITH_MPI=OFF); use --transit-backend=local\n");
  return 2;
#endif
}

}  // namespace transit
