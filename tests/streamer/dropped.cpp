// A streamer destroyed mid-step, with items in flight towards PE 1: the job must still end
// (no hang in teardown) and say that items were lost, on both backends.
#include "transit/transit.hpp"

int main(int argc, char** argv) {
  return transit::run(argc, argv, [](transit::context& ctx) {
    transit::streamer_options o;
    o.buffer_items = 1;
    transit::streamer<long> s(ctx, o, [](const long&) {});
    if (ctx.rank() == 0)
      for (int i = 0; i < 200; ++i) s.insert(i, 1 % ctx.size());
    ctx.barrier();  // PE 1 never calls finish(): what arrived for it is lost
  });
}
