// PE 0 waits in a barrier that the other PEs never join: the watchdog ends the job, and PE 0's
// trace is written before it does (trace_watchdog.sh checks the file).
#include <transit/transit.hpp>

int main(int argc, char** argv) {
  return transit::run(argc, argv, [](transit::context& ctx) {
    if (ctx.rank() == 0) ctx.barrier();
  });
}
