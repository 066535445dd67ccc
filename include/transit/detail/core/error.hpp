#pragma once
// One place that formats user-facing errors, so that every message reads alike:
// "<what>: got <value>, expected <expectation>".
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace transit::detail {

template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// Throws std::invalid_argument naming the offending value and what was expected.
template <class Value>
[[noreturn]] void throw_invalid(std::string_view what, const Value& value, std::string_view expected) {
  throw std::invalid_argument(concat(what, ": got '", value, "', expected ", expected));
}

/// Internal invariant check, cheap enough to stay on in release builds and tests.
[[noreturn]] void assertion_failed(const char* condition, const char* file, int line, const char* message);

}  // namespace transit::detail

#define TRANSIT_ASSERT(cond, msg) \
  ((cond) ? static_cast<void>(0) : ::transit::detail::assertion_failed(#cond, __FILE__, __LINE__, msg))
