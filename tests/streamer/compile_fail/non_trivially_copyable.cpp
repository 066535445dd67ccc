// Must not compile: a streamer of a type with a std::string member.
#include <string>

#include "transit/transit.hpp"

struct named_item {
  std::string name;
};

void instantiate(transit::context& ctx) {
  transit::streamer<named_item> s(ctx, {}, [](const named_item&) {});
}
