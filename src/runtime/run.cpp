#include "transit/runtime/run.hpp"

#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>

#include "runtime/launch.hpp"

namespace transit {

const char* version() noexcept { return "0.1.0"; }

int detail::run_body(int& argc, char**& argv, detail::function_ref<void(context&)> call) {
  const std::function<void(context&)> body = [call](context& ctx) { call(ctx); };
  try {
    return detail::run_job(parse_run_options(argc, argv), body);
  } catch (const std::invalid_argument& e) {  // the options, or a backend this build has not
    std::fprintf(stderr, "transit: error: %s\n", e.what());
    return 2;
  }
}

}  // namespace transit
