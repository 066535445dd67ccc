// Must not compile: a lambda with captures cannot be named by another PE.
#include "transit/transit.hpp"

void call(transit::active_messages& am, int& counter) {
  am.async(0, [&counter](transit::active_messages&, int v) { counter += v; }, 1);
}
