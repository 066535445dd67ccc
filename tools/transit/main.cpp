// The transit command: check an install and a launch (--version, info) and run benchmarks (bench).
#include <cstdio>
#include <cstring>
#include <string>

#include "transit/transit.hpp"

namespace {

int usage(FILE* out) {
  std::fputs(
      "usage: transit [--transit-* options] COMMAND\n"
      "  --version        print the version\n"
      "  info             print backend, PEs, nodes and PEs per node\n"
      "launch options (also TRANSIT_* environment variables):\n"
      "  --transit-backend=local|mpi  --transit-pes=N  --transit-pes-per-node=K\n"
      "  --transit-physical=SPEC      --transit-watchdog=SECONDS\n",
      out);
  return out == stderr ? 2 : 0;
}

void info(transit::context& ctx) {
  ctx.barrier();
  if (ctx.rank() != 0) return;
  const auto& m = ctx.machine();
  std::printf("transit %s\nbackend: %.*s\npes: %d\nnodes: %d\npes per node:", transit::version(),
              static_cast<int>(ctx.backend().size()), ctx.backend().data(), ctx.size(), m.num_nodes());
  for (int n = 0; n < m.num_nodes(); ++n) std::printf(" %d", m.pes_on_node(n));
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("transit %s\n", transit::version());
    return 0;
  }
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) return usage(stdout);
  return transit::run(argc, argv, [&](transit::context& ctx) {
    const std::string command = argc >= 2 ? argv[1] : "";
    if (command == "info") {
      info(ctx);
    } else {
      throw std::invalid_argument(command.empty() ? std::string("no command given; try 'transit --help'")
                                                  : "unknown command '" + command + "'; try 'transit --help'");
    }
  });
}
