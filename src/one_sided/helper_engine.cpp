#include <stdexcept>

#include "routed_engine.hpp"

namespace transit::detail {
std::unique_ptr<one_sided_engine> make_helper_engine(context&, const engine_config&) {
  throw std::logic_error("helper mode: not yet");
}
}  // namespace transit::detail
