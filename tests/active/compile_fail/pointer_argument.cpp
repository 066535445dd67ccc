// Must not compile: a pointer means nothing on another PE.
#include "transit/transit.hpp"

void call(transit::active_messages& am, int* p) {
  am.async(0, [](transit::active_messages&, int*) {}, p);
}
