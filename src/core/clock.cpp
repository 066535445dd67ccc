// The waits of the clock seam (include/transit/detail/core/clock.hpp), out of line so that the
// header needs no <thread>.
#include <thread>

#include "transit/detail/core/clock.hpp"

namespace transit::detail {

void sleep_for(std::chrono::nanoseconds d) noexcept(!waits_can_throw) {
  if constexpr (simulated_build) {
    simulated_sleep(std::chrono::duration<double>(d).count());
  } else {
    std::this_thread::sleep_for(d);
  }
}

void yield() noexcept(!waits_can_throw) {
  if constexpr (simulated_build) {
    simulated_sleep(std::chrono::duration<double>(simulated_poll).count());
  } else {
    std::this_thread::yield();
  }
}

}  // namespace transit::detail
