// transit info: what a launch gives (backend, PEs, nodes, physical topology), to check an install
// and a launch line.
#include <cstdio>

#include "cli.hpp"

namespace transit::bench {

namespace {

int info(context& ctx) {
  ctx.barrier();
  if (ctx.rank() != 0) return 0;
  const auto& m = ctx.machine();
  std::printf("transit %s\nbackend: %.*s\npes: %d\nnodes: %d\npes per node:", transit::version(),
              static_cast<int>(ctx.backend().size()), ctx.backend().data(), ctx.size(), m.num_nodes());
  for (int n = 0; n < m.num_nodes(); ++n) std::printf(" %d", m.pes_on_node(n));
  std::printf("\nphysical: %s\n", ctx.topology().physical().str().c_str());
  std::printf("protocol profile: %s\n", protocol_profile_in_use(ctx).description.c_str());
  return 0;
}

const bool registered = register_command({
    .name = "info",
    .summary = "print backend, PEs, nodes, PEs per node, the physical topology and the protocol profile",
    .run = info,
});

}  // namespace

}  // namespace transit::bench
