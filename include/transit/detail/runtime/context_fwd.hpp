#pragma once
// What context.hpp names of the implementation: its state (complete only inside the library) and
// the door transit's own layers use.
#include "transit/detail/core/scalar.hpp"

namespace transit::detail {
struct context_state;
class context_access;
}  // namespace transit::detail
