// A deliberately stuck program for the watchdog test: PE 1 never calls done(); it leaves the
// step (and the streamer) behind. The others wait; with TRANSIT_WATCHDOG set the job must end
// with a diagnostic instead of hanging.
#include "transit/transit.hpp"

int main(int argc, char** argv) {
  return transit::run(argc, argv, [](transit::context& ctx) {
    transit::streamer_options o;
    o.buffer_items = 64;
    transit::streamer<long> s(ctx, o, [](const long&) {});
    for (int d = 0; d < ctx.size(); ++d) s.insert(d, d);
    if (ctx.rank() == 1) {
      s.progress();
      for (;;) ctx.barrier();  // never reaches done(); waits where the others will never come
    }
    s.finish();
  });
}
