#include <stdexcept>

#include "routed_engine.hpp"

namespace transit::detail {
std::unique_ptr<one_sided_engine> make_mpi_rma_engine(context&, const engine_config&) {
  throw std::logic_error("mpi_rma: not yet");
}
}  // namespace transit::detail
