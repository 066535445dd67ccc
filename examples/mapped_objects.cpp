// Objects placed by a topology-aware mapping, then addressed through object_streamer: the README
// example. The test suite builds and runs it (tests/topology/CMakeLists.txt), so it cannot rot.
#include <transit/transit.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  return transit::run(argc, argv, [](transit::context& ctx) {
    // 64 x 64 cells on a periodic grid; each sends an 8-byte value to its 4 neighbours per step.
    const int dims[] = {64, 64};
    const transit::comm_pattern halo = transit::stencil_pattern(dims, 8);

    // Mapping is deterministic: every PE computes the same map, nobody has to broadcast it.
    const transit::topology_manager& topo = ctx.topology();  // --transit-physical=torus:4x4:2 ...
    const std::vector<int> home =
        transit::map_objects(topo, halo.num_objects, halo.edges, transit::mapper::bisection);

    std::vector<double> received(halo.num_objects, 0.0);  // touched only for cells this PE owns
    transit::object_streamer<double, int> stream(
        ctx, {}, [&](const int& cell) { return home[cell]; },        // looked up once, at the source
        [&](const int& cell, const double& value) { received[cell] += value; });
    for (const transit::comm_edge& e : halo.edges) {  // each edge joins two neighbours: both send
      if (home[e.a] == ctx.rank()) stream.insert(1.0, e.b);
      if (home[e.b] == ctx.rank()) stream.insert(1.0, e.a);
    }
    stream.finish();

    long wrong = 0;
    for (int cell = 0; cell < halo.num_objects; ++cell)
      if (home[cell] == ctx.rank() && received[cell] != 4.0) ++wrong;
    wrong = ctx.allreduce(wrong, transit::reduce_op::sum);
    if (ctx.rank() == 0) {
      const auto mapped = transit::evaluate_mapping(topo, halo.edges, home);
      const auto block = transit::evaluate_mapping(
          topo, halo.edges, transit::map_objects(topo, halo.num_objects, halo.edges, transit::mapper::block));
      std::printf("hop-bytes per step on %s: bisection %llu, block %llu\n", topo.physical().str().c_str(),
                  static_cast<unsigned long long>(mapped.hop_bytes), static_cast<unsigned long long>(block.hop_bytes));
      std::printf("every cell heard from its 4 neighbours: %s\n", wrong == 0 ? "yes" : "no");
    }
  });
}
