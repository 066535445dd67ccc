// transit map: what topology-aware mapping buys (issue 15). Maps a communication pattern onto a
// physical topology with every mapper, evaluates each mapping (hop-bytes, average hops, dilation,
// busiest link, objects per PE) and the time it took, and prints a table or, with --json, one JSON
// object per mapper (fields: API.md "Topology-aware mapping"; tools/plot.py draws the link loads
// per dimension). Pure computation on one process: its default job is one local PE, and inside a
// larger job only PE 0 works.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "progress.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "core/median.hpp"
#include "transit/mapping/mapping.hpp"
#include "transit/mapping/patterns.hpp"

namespace transit::cli {
namespace {

using detail::median;

/// Everything `transit map` accepts. Empty or 0 = the pattern's default.
struct map_options {
  std::string physical = "torus:8x4x8:4";  // --physical: the machine, a physical_topology spec
  std::string pattern = "openatom";        // --pattern: openatom, stencil2d, stencil3d, random
  std::string size;                        // --size: states x planes, the stencil's dims, objects
  std::uint64_t bytes = 0;                 // --bytes: stencil edge, OpenAtom plane, random maximum
  int degree = 6;                          // --degree: partners per object (random)
  int state_block = 0;                     // --state-block: states per pair-calculator block
  std::uint64_t seed = 1;                  // --seed (random, colocated)
  std::string mapper = "all";              // --mapper: block, greedy, bisection, colocated, scotch, prism, all
  int instances = 1;                       // --instances: copies on sub-partitions
  int repeat = 1;                          // --repeat: timings are the median of this many runs
  bool json = false;                       // --json
  bool quiet = false;                      // --quiet: no progress line
};

const std::vector<std::string> pattern_names{"openatom", "stencil2d", "stencil3d", "random"};
const std::vector<std::string> mapper_names{"block", "greedy", "bisection", "colocated", "scotch", "prism", "all"};

// "128x32" -> {128, 32}; every entry a positive int.
std::vector<int> parse_size(const std::string& text, std::size_t count, const char* expected) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, 'x')) {
    std::size_t used = 0;
    long value = 0;
    try {
      value = std::stol(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || part.empty() || value < 1 || value > std::numeric_limits<int>::max())
      detail::throw_invalid("--size", text, expected);
    out.push_back(static_cast<int>(value));
  }
  if (out.size() != count) detail::throw_invalid("--size", text, expected);
  return out;
}

// The pattern of the options, and for OpenAtom its sizes (for the prism placement).
struct built_pattern {
  comm_pattern pattern;
  std::optional<openatom_sizes> atom;
};

built_pattern build_pattern(const map_options& opt) {
  built_pattern b;
  if (opt.pattern == "openatom") {
    openatom_sizes sizes;
    if (!opt.size.empty()) {
      const auto s = parse_size(opt.size, 2, "STATESxPLANES, e.g. 128x32");
      sizes.states = s[0];
      sizes.planes = s[1];
    }
    if (opt.state_block > 0) sizes.state_block = opt.state_block;
    if (opt.bytes > 0) sizes.plane_bytes = opt.bytes;
    b.pattern = openatom_pattern(sizes);
    b.atom = sizes;
  } else if (opt.pattern == "stencil2d" || opt.pattern == "stencil3d") {
    const bool three = opt.pattern == "stencil3d";
    std::vector<int> dims = three ? std::vector<int>{32, 32, 32} : std::vector<int>{256, 128};
    if (!opt.size.empty()) dims = parse_size(opt.size, three ? 3 : 2, three ? "AxBxC, e.g. 32x32x32" : "AxB, e.g. 256x128");
    b.pattern = stencil_pattern(dims, opt.bytes > 0 ? opt.bytes : 1024);
  } else {
    int objects = 8192;
    if (!opt.size.empty()) objects = parse_size(opt.size, 1, "the number of objects, e.g. 8192")[0];
    b.pattern = random_pattern(objects, opt.degree, opt.bytes > 0 ? opt.bytes : 4096, opt.seed);
  }
  return b;
}

// One mapper's result over all instances.
struct result {
  std::string mapper;
  mapping_quality quality;
  double seconds = 0;        // median time to compute the map of one instance
  int shared_links = 0;      // links carrying bytes of more than one instance
  std::vector<std::uint64_t> link_max, link_sum, link_count;  // per dimension
};

// Maps `instances` copies of the pattern: one mapped onto the first sub-partition and translated
// onto the others (Bhatele et al.), or with one instance, onto the whole machine. `colocated` is
// bisection with its nodes shuffled (shuffle_nodes, `seed`): the co-locating but topology-unaware
// baseline.
result run_mapper(const std::string& name, const topology_manager& topo, const built_pattern& b, int instances,
                  int repeat, std::uint64_t seed) {
  const comm_pattern& p = b.pattern;
  const topology_manager target = instances > 1 ? sub_partition_topology(topo, instances) : topo;
  std::function<std::vector<int>()> compute;
  if (name == "prism") {
    compute = [&] { return openatom_prism_mapping(target, *b.atom); };
  } else if (name == "colocated") {
    compute = [&] {
      return shuffle_nodes(target, map_objects(target, p.num_objects, p.edges, mapper::bisection), seed);
    };
  } else {
    mapper m = mapper::block;
    for (const mapper candidate : {mapper::block, mapper::greedy, mapper::bisection, mapper::scotch})
      if (to_string(candidate) == name) m = candidate;
    compute = [&, m] { return map_objects(target, p.num_objects, p.edges, m); };
  }
  result r;
  r.mapper = name;
  std::vector<double> times;
  std::vector<int> first;
  for (int i = 0; i < repeat; ++i) {
    const auto start = detail::steady_clock::now();
    first = compute();
    times.push_back(detail::seconds_since(start));
  }
  r.seconds = median(times);

  // All instances as one pattern on the whole machine: instance k's objects are k * n + o.
  std::vector<comm_edge> edges;
  std::vector<int> pe_of;
  const int D = topo.physical().ndims();
  std::vector<int> owner(static_cast<std::size_t>(topo.physical().num_nodes() * D), -1);
  std::vector<bool> shared(owner.size(), false);
  for (int k = 0; k < instances; ++k) {
    const std::vector<int> placed = instances > 1 ? translate_mapping(topo, instances, k, first) : first;
    pe_of.insert(pe_of.end(), placed.begin(), placed.end());
    for (const comm_edge& e : p.edges)
      edges.push_back({e.a + k * p.num_objects, e.b + k * p.num_objects, e.bytes});
    const std::vector<std::uint64_t> loads = link_loads(topo, p.edges, placed);
    for (std::size_t l = 0; l < loads.size(); ++l) {
      if (loads[l] == 0) continue;
      if (owner[l] >= 0 && owner[l] != k) shared[l] = true;
      owner[l] = k;
    }
  }
  r.shared_links = static_cast<int>(std::count(shared.begin(), shared.end(), true));
  r.quality = evaluate_mapping(topo, edges, pe_of);
  const std::vector<std::uint64_t> loads = link_loads(topo, edges, pe_of);
  r.link_max.assign(static_cast<std::size_t>(D), 0);
  r.link_sum.assign(static_cast<std::size_t>(D), 0);
  r.link_count.assign(static_cast<std::size_t>(D), 0);
  for (std::size_t l = 0; l < loads.size(); ++l) {
    const auto d = l % static_cast<std::size_t>(D);
    r.link_max[d] = std::max(r.link_max[d], loads[l]);
    r.link_sum[d] += loads[l];
    ++r.link_count[d];
  }
  return r;
}

std::string json_line(const result& r, const built_pattern& b, const topology_manager& topo, int instances,
                      int repeat, const result* block) {
  nlohmann::ordered_json out = {{"mapper", r.mapper},
                                {"pattern", b.pattern.name},
                                {"objects", static_cast<long long>(b.pattern.num_objects) * instances},
                                {"physical", topo.physical().str()},
                                {"pes", topo.num_pes()},
                                {"instances", instances},
                                {"hop_bytes", r.quality.hop_bytes},
                                {"average_hops", r.quality.average_hops},
                                {"dilation", r.quality.dilation},
                                {"max_link_bytes", r.quality.max_link_bytes},
                                {"max_objects_per_pe", r.quality.max_objects_per_pe},
                                {"seconds", r.seconds},
                                {"repeat", repeat}};
  if (instances > 1) out["shared_links"] = r.shared_links;
  if (block != nullptr && block->quality.hop_bytes > 0 && block->quality.max_link_bytes > 0) {
    out["hop_bytes_vs_block"] = static_cast<double>(r.quality.hop_bytes) / static_cast<double>(block->quality.hop_bytes);
    out["max_link_bytes_vs_block"] =
        static_cast<double>(r.quality.max_link_bytes) / static_cast<double>(block->quality.max_link_bytes);
  }
  out["link_bytes_max_per_dimension"] = r.link_max;
  std::vector<double> mean;
  for (std::size_t d = 0; d < r.link_sum.size(); ++d)
    mean.push_back(r.link_count[d] ? static_cast<double>(r.link_sum[d]) / static_cast<double>(r.link_count[d]) : 0.0);
  out["link_bytes_mean_per_dimension"] = mean;
  return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// The checks that involve several options or a computation (the others are CLI11 validators):
// a usage error before any PE starts.
void check_map_options(const map_options& opt) {
  if (opt.mapper == "prism" && opt.pattern != "openatom")
    usage_error("--mapper", opt.mapper, "block, greedy, bisection, colocated, scotch or all with --pattern " + opt.pattern +
                                            " (prism is the OpenAtom placement)");
  if (opt.mapper == "scotch" && !has_scotch())
    usage_error("--mapper", opt.mapper,
                "block, greedy, bisection, colocated, prism or all: this transit was built without Scotch");
  try {
    (void)build_pattern(opt);
  } catch (const std::invalid_argument& e) {  // "<what>: got '<value>', expected <...>"
    const std::string message = e.what();
    const std::size_t colon = message.find(": ");
    std::string what = message.substr(0, colon);
    if (what == "OpenAtom plane bytes") what = "--bytes";  // the generator's names, as options
    if (what == "OpenAtom objects" || what == "stencil objects") what = "--size";
    throw CLI::ValidationError(what, message.substr(colon + 2));
  }
  const physical_topology phys = physical_topology::parse(opt.physical);
  const topology_manager topo(phys, phys.capacity());
  if (opt.instances > 1 && phys.network() != network_kind::direct)
    usage_error("--instances", std::to_string(opt.instances),
                "1 on " + phys.str() + " (instances are sub-partitions of a torus, mesh or switch)");
  const int split = topo.longest_dimension();
  const int length = phys.dims()[static_cast<std::size_t>(split)];
  if (length % opt.instances != 0)
    usage_error("--instances", std::to_string(opt.instances),
                "a divisor of " + std::to_string(length) + ", the longest dimension (" + std::to_string(split) +
                    ") of " + phys.str() + ", which the instances split");
}

int map_command(const map_options& opt) {
  const physical_topology phys = physical_topology::parse(opt.physical);
  const topology_manager topo(phys, phys.capacity());
  const built_pattern b = build_pattern(opt);

  std::vector<std::string> mappers;
  if (opt.mapper == "all") {
    mappers = {"block", "greedy", "bisection", "colocated"};
    if (has_scotch()) mappers.push_back("scotch");
    if (b.atom) mappers.push_back("prism");
  } else {
    mappers = {opt.mapper};
  }
  std::vector<result> results;
  std::optional<result> block;
  // map runs on PE 0 alone.
  progress line("map " + b.pattern.name, "mapper", progress::for_this_process(true, opt.quiet));
  const bool block_extra = std::find(mappers.begin(), mappers.end(), "block") == mappers.end();
  const int total = static_cast<int>(mappers.size()) + (block_extra ? 1 : 0);
  if (block_extra) {
    line.update(0, total, "block, for the ratios");
    block = run_mapper("block", topo, b, opt.instances, 1, opt.seed);  // the ratios' denominator
  }
  for (const std::string& name : mappers) {
    line.update(static_cast<int>(results.size()) + (block_extra ? 1 : 0), total, name);
    results.push_back(run_mapper(name, topo, b, opt.instances, opt.repeat, opt.seed));
    if (name == "block") block = results.back();
    line.clear();
    if (opt.json) {
      std::printf("%s\n", json_line(results.back(), b, topo, opt.instances, opt.repeat, block ? &*block : nullptr).c_str());
      std::fflush(stdout);
    }
  }
  if (opt.json) return 0;

  std::printf("%s (%d objects%s) on %s (%d PEs); seconds: median of %d\n", b.pattern.name.c_str(),
              b.pattern.num_objects * opt.instances,
              opt.instances > 1 ? (", " + std::to_string(opt.instances) + " instances").c_str() : "",
              phys.str().c_str(), topo.num_pes(), opt.repeat);
  std::printf("%-10s %16s %8s %9s %8s %14s %8s %8s %9s%s\n", "mapper", "hop-bytes", "/block", "avg hops", "dilation",
              "max link bytes", "/block", "obj/PE", "seconds", opt.instances > 1 ? "  shared links" : "");
  for (const result& r : results) {
    const double hb = static_cast<double>(r.quality.hop_bytes) / static_cast<double>(std::max<std::uint64_t>(1, block->quality.hop_bytes));
    const double ml = static_cast<double>(r.quality.max_link_bytes) / static_cast<double>(std::max<std::uint64_t>(1, block->quality.max_link_bytes));
    std::printf("%-10s %16llu %8.3f %9.3f %8d %14llu %8.3f %8d %9.4f", r.mapper.c_str(),
                static_cast<unsigned long long>(r.quality.hop_bytes), hb, r.quality.average_hops, r.quality.dilation,
                static_cast<unsigned long long>(r.quality.max_link_bytes), ml, r.quality.max_objects_per_pe, r.seconds);
    if (opt.instances > 1) std::printf("  %13d", r.shared_links);
    std::printf("\n");
  }
  return 0;
}

map_options command_line;  // set by parsing `transit map`, read-only while the job runs

void add_map_options(CLI::App& app) {
  app.add_option("--physical", command_line.physical, "the machine (default torus:8x4x8:4; docs/topology.md)")
      ->check(physical_spec())
      ->type_name("SPEC");
  app.add_option("--pattern", command_line.pattern, "openatom (default), stencil2d, stencil3d, random")
      ->check(one_of(pattern_names))
      ->type_name("NAME");
  app.add_option("--size", command_line.size,
                 "openatom STATESxPLANES (128x32), stencil2d AxB (256x128), stencil3d AxBxC (32x32x32), "
                 "random OBJECTS (8192)")
      ->type_name("SIZE");
  app.add_option("--bytes", command_line.bytes,
                 "bytes of a stencil edge (1024), an OpenAtom plane (16384), at most per random edge (4096)")
      ->transform(integer_in<std::uint64_t>(1, std::uint64_t{1} << 40, "an integer in [1, 2^40]"))
      ->type_name("B");
  app.add_option("--degree", command_line.degree, "random: partners per object (default 6)")
      ->transform(integer_in<int>(1, 1000, "an integer in [1, 1000]"))
      ->type_name("D");
  app.add_option("--state-block", command_line.state_block, "openatom: states per pair-calculator block (32)")
      ->transform(integer_in<int>(1, 1 << 20, "a positive integer"))
      ->type_name("S");
  app.add_option("--seed", command_line.seed, "random: the graph's seed; colocated: the node order's (default 1)")
      ->transform(integer_in<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max(),
                                            "an integer in [0, 18446744073709551615]"))
      ->type_name("S");
  app.add_option("--mapper", command_line.mapper,
                 "block, greedy, bisection, colocated, scotch, prism (openatom) or all (default)")
      ->check(one_of(mapper_names))
      ->type_name("NAME");
  app.add_option("--instances", command_line.instances,
                 "K copies, one mapped on the first of K sub-partitions and translated (default 1)")
      ->transform(integer_in<int>(1, 1 << 20, "a positive integer"))
      ->type_name("K");
  app.add_option("--repeat", command_line.repeat, "time each mapper R times, report the median (default 1)")
      ->transform(integer_in<int>(1, 1000, "an integer in [1, 1000]"))
      ->type_name("R");
  app.add_flag("--json", command_line.json, "one JSON object per mapper on stdout")
      ->disable_flag_override()
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  add_flag_once(app, "--quiet", command_line.quiet, "no progress line on stderr (there is none when stderr is not a terminal)");
  app.final_callback([] { check_map_options(command_line); });
}

const bool registered = register_command({
    .name = "map",
    .summary = "compare topology-aware mappings of a pattern on a machine (pure computation, 1 PE)",
    .add_options = add_map_options,
    .run = [](context& ctx) { return ctx.rank() == 0 ? map_command(command_line) : 0; },
    .local_pes = 1,
});

}  // namespace

}  // namespace transit::cli
