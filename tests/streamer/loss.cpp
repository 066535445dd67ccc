// Items lost by a C++ front end dropped mid-step are reported the same way on every backend and
// launch: "transit: PE <r>: <what was lost>" and a nonzero status (transit::run), or the exception
// of session::run / session::close (transit::session). One mode per run (tests/streamer/CMakeLists.txt):
//   typed     every PE inserts 10 items for the next PE into a streamer<uint64_t> and drops it;
//   object    the same with an object_streamer (objects homed on the next PE);
//   active    every PE makes 10 calls on active_messages and drops it without a barrier;
//   session   the typed mistake on a local transit::session of --pes=N PEs (1: its one PE's
//             context, on this thread; more: session::run), which must throw the report.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "transit/transit.hpp"

namespace {

void drop_typed(transit::context& ctx) {
  transit::streamer<std::uint64_t> s(ctx, {}, [](const std::uint64_t&) {});
  for (int i = 0; i < 10; ++i) s.insert(std::uint64_t(i), (ctx.rank() + 1) % ctx.size());
}

void drop_object(transit::context& ctx) {
  const int size = ctx.size();
  transit::object_streamer<std::uint64_t> s(
      ctx, {}, [size](const std::int64_t& object) { return static_cast<int>(object % size); },
      [](const std::int64_t&, const std::uint64_t&) {});
  for (int i = 0; i < 10; ++i) s.insert(std::uint64_t(i), (ctx.rank() + 1) % size);
}

void ignore(transit::active_messages&, std::uint64_t) {}

void drop_active(transit::context& ctx) {
  transit::active_messages am(ctx);
  for (int i = 0; i < 10; ++i) am.async((ctx.rank() + 1) % ctx.size(), ignore, std::uint64_t(i));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "session") {
    transit::run_options o;
    o.pes = argc > 2 ? std::stoi(argv[2]) : 1;
    try {
      transit::session s(o);
      if (s.local_pes() == 1) {
        drop_typed(s.pe());
      } else {
        s.run(drop_typed);
      }
      s.close();
    } catch (const std::logic_error& e) {
      std::fprintf(stderr, "session: %s\n", e.what());
      return 1;
    }
    std::fprintf(stderr, "session: nothing thrown\n");
    return 0;
  }
  return transit::run(argc, argv, [&](transit::context& ctx) {
    if (mode == "typed") drop_typed(ctx);
    else if (mode == "object") drop_object(ctx);
    else if (mode == "active") drop_active(ctx);
    else throw std::invalid_argument("mode: got '" + mode + "', expected typed, object, active or session");
  });
}
