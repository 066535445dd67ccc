#pragma once
// Private to src/active: what a received call's record fails (too short for its arguments, an
// unknown handler id or handler code). It says what was wrong only; active_messages catches it
// where it knows which message the call came in and from which PE, and reports it there through
// corrupt_message (core/wire_error.hpp).
#include <stdexcept>

namespace transit::detail {

class call_record_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace transit::detail
