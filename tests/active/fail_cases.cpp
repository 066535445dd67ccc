// Failures that end the job, through real processes (tests/active/CMakeLists.txt checks the
// message and the exit status on both backends):
//   throw:       a handler on PE 2 throws; nobody catches it: "transit: PE 2: <what>".
//   no-barrier:  PE 0 destroys its active_messages with calls made since its last barrier().
// mismatch.cpp covers PEs running different binaries.
#include <stdexcept>
#include <string>

#include "transit/transit.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  return transit::run(argc, argv, [&](transit::context& ctx) {
    transit::active_messages am(ctx);
    if (mode == "throw") {
      for (int d = 0; d < ctx.size(); ++d) {
        am.async(d, [](transit::active_messages& a, int v) {
          if (a.ctx().rank() == 2)
            throw std::runtime_error("deliberate failure in a handler on PE " + std::to_string(a.ctx().rank()) +
                                     " (argument " + std::to_string(v) + ")");
        }, 41);
      }
      am.barrier();
    } else if (mode == "no-barrier") {
      if (ctx.rank() == 0) am.async(0, [](transit::active_messages&) {});
    } else {
      throw std::invalid_argument("mode: got '" + mode + "', expected throw or no-barrier");
    }
  });
}
