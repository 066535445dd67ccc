#include "transit/core/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace transit::detail {

void assertion_failed(const char* condition, const char* file, int line, const char* message) {
  std::fprintf(stderr, "transit: internal error: %s (%s) at %s:%d\n", message, condition, file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace transit::detail
