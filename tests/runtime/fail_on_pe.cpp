// Throws on the PE named by argv[1] while the others wait in a barrier (they must be unwound,
// not left hanging); on local with PE 0 the others are busy in barriers too.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "transit/transit.hpp"

int main(int argc, char** argv) {
  return transit::run(argc, argv, [&](transit::context& ctx) {
    const int failing = argc >= 2 ? std::atoi(argv[1]) : 0;
    if (ctx.rank() == failing) throw std::runtime_error("deliberate failure on PE " + std::to_string(failing));
    for (;;) ctx.barrier();
  });
}
