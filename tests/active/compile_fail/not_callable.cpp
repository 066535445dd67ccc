// Must not compile: the handler takes an int, the call passes a string.
#include <string>

#include "transit/transit.hpp"

void call(transit::active_messages& am) {
  am.async(0, [](transit::active_messages&, int) {}, std::string("not an int"));
}
