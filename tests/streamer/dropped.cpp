// Streamers destroyed at the wrong time end the job with a message instead of hanging or losing
// items silently (a test of each case, on both backends; see tests/streamer/CMakeLists.txt).
//   mid-step:     PE 0 streams to PE 1, which never finishes the step and destroys its streamer
//                 with the items queued.
//   idle-wait:    PE 1 destroys its streamer without taking part in a step the others finish.
//   idle-quiesce: the same while the others quiesce.
//   used-after:   every PE finishes a step; PE 1 destroys its streamer, the others stream to it.
//   mixed-endings: even PEs end the step with finish(), odd ones with quiesce().
//   clean:        every PE finishes and destroys: no message, status 0.
// Where two PEs see the mistake at once, either may report it first: both messages are accepted.
// In idle-wait and idle-quiesce a peer's end-of-step marker may reach PE 1 after it destroyed its
// streamer and before its notice reached the peer: PE 1 then reports the late message instead.
#include <cstring>
#include <stdexcept>
#include <string>

#include "transit/transit.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  return transit::run(argc, argv, [&](transit::context& ctx) {
    transit::streamer_options o;
    o.buffer_items = 1;
    const int other = 1 % ctx.size();
    if (mode == "mid-step") {
      transit::streamer<long> s(ctx, o, [](const long&) {});
      if (ctx.rank() == 0)
        for (int i = 0; i < 200; ++i) s.insert(i, other);
      ctx.barrier();  // PE 1 never calls finish(): what arrived for it would be lost
    } else if (mode == "idle-wait" || mode == "idle-quiesce") {
      transit::streamer<long> s(ctx, o, [](const long&) {});
      if (ctx.rank() == 1) return;  // leaves without taking part in the step
      s.insert(1, ctx.rank());
      if (mode == "idle-wait") s.finish();
      else s.quiesce();
    } else if (mode == "used-after") {
      {
        transit::streamer<long> s(ctx, o, [](const long&) {});
        s.finish();
        if (ctx.rank() != 1) {
          ctx.barrier();  // PE 1 has destroyed its streamer by now
          s.insert(1, 1);
          s.finish();
          return;
        }
      }
      ctx.barrier();
      ctx.barrier();  // keeps receiving: the others' items arrive for a destroyed streamer
    } else if (mode == "mixed-endings") {
      transit::streamer<long> s(ctx, o, [](const long&) {});
      for (int d = 0; d < ctx.size(); ++d) s.insert(d, d);
      if (ctx.rank() % 2 == 0) s.finish();
      else s.quiesce();
    } else if (mode == "clean") {
      transit::streamer<long> s(ctx, o, [](const long&) {});
      for (int d = 0; d < ctx.size(); ++d) s.insert(d, d);
      s.finish();
      transit::streamer<long> unused(ctx, o, [](const long&) {});
    } else {
      throw std::invalid_argument("mode: got '" + mode +
                                  "', expected mid-step, idle-wait, idle-quiesce, used-after, mixed-endings or clean");
    }
  });
}
