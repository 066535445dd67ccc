// transit platform: a physical topology written out for SimGrid (issue 24). Prints the platform XML
// of --physical, or writes it and the hostfile that puts each of --pes ranks on its node, so that a
// simulated run (SMPI's smpirun -platform FILE -hostfile FILE) runs on the machine transit's
// topology manager describes, node by node. Pure computation on one process, like `transit map`.
#include <cstdio>
#include <fstream>
#include <string>

#include "cli.hpp"
#include "transit/topology/simgrid_platform.hpp"

namespace transit::cli {
namespace {

struct platform_options {
  std::string physical;  // --physical: the machine
  int pes = 0;           // --pes: ranks in the hostfile; 0 = every PE slot of the machine
  std::string platform;  // --platform: the XML file; empty = standard output
  std::string hostfile;  // --hostfile: one host per rank; empty = none
  platform_links links;  // --link-*, --loopback-*, --core-speed: the figures of the platform's links and cores
};

platform_options command_line;  // set by parsing `transit platform`, read-only while the job runs

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("transit platform: cannot write '" + path + "'");
}

int platform_command(const platform_options& opt) {
  const physical_topology phys = physical_topology::parse(opt.physical);
  const topology_manager topo(phys, opt.pes > 0 ? opt.pes : phys.capacity());
  const std::string xml = simgrid_platform(phys, opt.links);
  if (opt.platform.empty()) {
    std::fputs(xml.c_str(), stdout);
  } else {
    write_file(opt.platform, xml);
  }
  if (!opt.hostfile.empty()) write_file(opt.hostfile, simgrid_hostfile(topo));
  return 0;
}

void add_platform_options(CLI::App& app) {
  app.add_option("--physical", command_line.physical, "the machine (docs/topology.md), e.g. dragonfly:4x6x16x4:24")
      ->required()
      ->check(physical_spec())
      ->type_name("SPEC");
  app.add_option("--pes", command_line.pes, "ranks in the hostfile, PE p on its node (default: every PE slot)")
      ->transform(integer_in<int>(1, 1 << 30, "a positive integer"))
      ->type_name("N");
  app.add_option("--platform", command_line.platform, "write the SimGrid platform here (default: standard output)")
      ->type_name("FILE");
  app.add_option("--hostfile", command_line.hostfile, "write the hostfile (one host per rank) here")->type_name("FILE");
  // The figures scripts/simulate takes from a named calibration (scripts/calibrations/).
  const auto figure = [&app](const char* name, double& value, const char* help, bool zero_allowed, const char* unit) {
    app.add_option(name, value, help)
        ->check(zero_allowed ? real_in(0, 1e300, "a number >= 0") : real_in(1e-300, 1e300, "a positive number"))
        ->type_name(unit);
  };
  platform_links& links = command_line.links;
  figure("--link-bandwidth", links.link_bytes_per_second, "bytes/s of each network link, each direction", false, "B/S");
  figure("--link-latency", links.link_latency_seconds, "seconds of each network link", true, "SECONDS");
  figure("--loopback-bandwidth", links.loopback_bytes_per_second, "bytes/s between PEs of one node", false, "B/S");
  figure("--loopback-latency", links.loopback_latency_seconds, "seconds between PEs of one node", true, "SECONDS");
  figure("--core-speed", links.core_flops, "flop/s of each core", false, "FLOPS");
  figure("--nic-bandwidth", links.nic_bytes_per_second,
         "bytes/s of each node's network interface, in and out together (default 0: none)", true, "B/S");
  app.final_callback([] {
    const physical_topology phys = physical_topology::parse(command_line.physical);
    if (command_line.pes > phys.capacity())
      usage_error("--pes", std::to_string(command_line.pes),
                  "at most " + std::to_string(phys.capacity()) + ", the PE slots of " + phys.str());
  });
}

const bool registered = register_command({
    .name = "platform",
    .summary = "write a physical topology as a SimGrid platform and hostfile (pure computation, 1 PE)",
    .add_options = add_platform_options,
    .run = [](context& ctx) { return ctx.rank() == 0 ? platform_command(command_line) : 0; },
    .local_pes = 1,
});

}  // namespace
}  // namespace transit::cli
