#include "transit/detail/core/error.hpp"

#include <cstdio>
#include <cstdlib>

#include "core/wire_error.hpp"

namespace transit::detail {

void assertion_failed(const char* condition, const char* file, int line, const char* message) {
  std::fprintf(stderr, "transit: internal error: %s (%s) at %s:%d\n", message, condition, file, line);
  std::fflush(stderr);
  std::abort();
}

void corrupt_message(std::string_view receiver, std::string_view message, int source, std::string_view problem) {
  throw wire_error(concat(receiver, ": corrupt ", message, " from PE ", source, ": ", problem));
}

}  // namespace transit::detail
