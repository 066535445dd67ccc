// The transit command: check an install and a launch (--version, info), run benchmarks (bench) and
// the aggregation demo (demo).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench.hpp"
#include "transit/transit.hpp"

namespace {

int usage(FILE* out) {
  std::fprintf(out,
               "usage: transit [--transit-* options] COMMAND\n"
               "  --version        print the version\n"
               "  info             print backend, PEs, nodes and PEs per node\n"
               "  %s"
               "launch options (also TRANSIT_* environment variables):\n"
               "  --transit-backend=local|mpi  --transit-pes=N  --transit-pes-per-node=K\n"
               "  --transit-physical=SPEC      --transit-watchdog=SECONDS\n",
               transit::bench::options_help());
  return out == stderr ? 2 : 0;
}

void info(transit::context& ctx) {
  ctx.barrier();
  if (ctx.rank() != 0) return;
  const auto& m = ctx.machine();
  std::printf("transit %s\nbackend: %.*s\npes: %d\nnodes: %d\npes per node:", transit::version(),
              static_cast<int>(ctx.backend().size()), ctx.backend().data(), ctx.size(), m.num_nodes());
  for (int n = 0; n < m.num_nodes(); ++n) std::printf(" %d", m.pes_on_node(n));
  std::printf("\nphysical: %s\n", ctx.topology().physical().str().c_str());
}

/// False in every process but the first of an MPI launch, so that an option error that every
/// rank finds before MPI starts is printed once.
bool first_process() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* rank = std::getenv(name)) return std::strcmp(rank, "0") == 0;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("transit %s\n", transit::version());
    return 0;
  }
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) return usage(stdout);

  // Look at the command on a copy without the --transit-* options, before any PE starts: bench
  // options are checked once here (one message, exit status 2), and demo picks its PE count.
  std::vector<char*> stripped(argv, argv + argc + 1);
  int stripped_argc = argc;
  char** stripped_argv = stripped.data();
  transit::run_options launch;
  try {
    launch = transit::parse_run_options(stripped_argc, stripped_argv);
  } catch (const std::invalid_argument&) {
    return transit::run(argc, argv, [](transit::context&) {});  // run() reports the bad launch option
  }
  const std::string command = stripped_argc >= 2 ? stripped_argv[1] : "";

  transit::bench::options bench_options;
  if (command == "bench") {
    try {
      bench_options = transit::bench::parse_options(stripped_argc, stripped_argv, 2);
    } catch (const std::invalid_argument& e) {
      if (first_process()) std::fprintf(stderr, "transit bench: %s\n", e.what());
      return 2;
    }
  }

  std::vector<char*> args(argv, argv + argc);
  std::string pes_option = "--transit-pes=8", per_node_option = "--transit-pes-per-node=4";
  const bool local = launch.backend == "local" || (launch.backend.empty() && !transit::started_by_mpi_launcher());
  if (command == "demo" && local) {
    // The demo's default job: 8 PEs in nodes of 4, unless the user chose (flag or environment).
    if (launch.pes == 0) args.push_back(pes_option.data());
    if (launch.pes_per_node == 0) args.push_back(per_node_option.data());
  }
  int run_argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  char** run_argv = args.data();

  std::atomic<int> status{0};
  const int run_status = transit::run(run_argc, run_argv, [&](transit::context& ctx) {
    int mine = 0;
    if (command == "info") {
      info(ctx);
    } else if (command == "bench") {
      mine = transit::bench::bench_command(ctx, bench_options);
    } else if (command == "demo") {
      mine = transit::bench::demo_command(ctx);
    } else {
      throw std::invalid_argument(command.empty() ? std::string("no command given; try 'transit --help'")
                                                  : "unknown command '" + command + "'; try 'transit --help'");
    }
    for (int seen = status.load(); mine > seen && !status.compare_exchange_weak(seen, mine);) {
    }
  });
  return run_status != 0 ? run_status : status.load();
}
