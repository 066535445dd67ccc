#include "transit/topology/simgrid_platform.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "transit/detail/core/error.hpp"

namespace transit {
namespace {

// Enough digits that SimGrid reads back the same double.
// The shortest text that reads back as the same double (1e-06, not 9.9999999999999995e-07).
std::string number(double value) {
  char text[40];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

void check_positive(const char* what, double value) {
  if (!std::isfinite(value) || value <= 0) detail::throw_invalid(what, value, "a positive, finite number");
}

void check_latency(const char* what, double value) {
  if (!std::isfinite(value) || value < 0) detail::throw_invalid(what, value, "a finite number of seconds >= 0");
}

std::string header() {
  return "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<platform version=\"4.1\">\n";
}

// A <cluster> of all nodes: host i is transit's node i when SimGrid's node numbering matches
// transit's (the caller chooses topo_parameters so that it does).
std::string cluster(const physical_topology& p, const platform_links& l, const std::string& topology,
                    const std::string& parameters, bool limiter) {
  std::string out = "  <zone id=\"world\" routing=\"Full\">\n    <cluster id=\"machine\" prefix=\"node-\" suffix=\"\"";
  out += " radical=\"0-" + std::to_string(p.num_nodes() - 1) + "\"";
  out += " speed=\"" + number(l.core_flops) + "f\" core=\"" + std::to_string(p.pes_per_node()) + "\"";
  out += " bw=\"" + number(l.link_bytes_per_second) + "Bps\" lat=\"" + number(l.link_latency_seconds) + "s\"";
  out += " loopback_bw=\"" + number(l.loopback_bytes_per_second) + "Bps\" loopback_lat=\"" +
         number(l.loopback_latency_seconds) + "s\"";
  // A node's network interface: SimGrid's private limiter link of each node, crossed by every
  // message the node sends or receives (and, in a torus, passes on).
  if (limiter && l.nic_bytes_per_second > 0) out += " limiter_link=\"" + number(l.nic_bytes_per_second) + "Bps\"";
  if (!topology.empty()) out += " topology=\"" + topology + "\" topo_parameters=\"" + parameters + "\"";
  return out + "/>\n  </zone>\n";
}

std::string join(const std::vector<int>& values, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += separator;  // appended apart: GCC 12 -O3 warns (-Wrestrict) on "" + string&&
    out += std::to_string(values[i]);
  }
  return out;
}

// Meshes and mixed links: a router per node, its host on a link of its own, and a link between
// neighbouring routers along every mesh or torus dimension; a switched dimension is a switch
// router per line of nodes that differ only there. Dijkstra finds a shortest route, which crosses
// as many router-to-router links as transit counts hops (a switched dimension's two links count as
// transit's one hop). Hosts of a zone that is not a cluster use SimGrid's global loopback for
// messages inside a node (network/loopback-bw and -lat, set by the runner).
std::string router_zone(const physical_topology& p, const platform_links& l) {
  const auto figures = [&](double bandwidth) {
    return "\" bandwidth=\"" + number(bandwidth) + "Bps\" latency=\"" + number(l.link_latency_seconds) + "s\"/>\n";
  };
  const std::string link_figures = figures(l.link_bytes_per_second);
  // The host's link to its router is the node's network interface.
  const std::string nic_figures =
      figures(l.nic_bytes_per_second > 0 ? l.nic_bytes_per_second : l.link_bytes_per_second);
  std::string hosts, links, routes;
  const int nodes = p.num_nodes(), nd = p.ndims();
  // Both directions spelled out: SimGrid 3.32's Dijkstra zone fails on a symmetrical route.
  const auto route = [&](const std::string& a, const std::string& b, const std::string& link) {
    for (const auto& [src, dst] : {std::pair{a, b}, std::pair{b, a}})
      routes += "    <route src=\"" + src + "\" dst=\"" + dst + "\" symmetrical=\"NO\"><link_ctn id=\"" + link +
                "\"/></route>\n";
  };
  for (int n = 0; n < nodes; ++n) {
    const std::string node = std::to_string(n);
    hosts += "    <host id=\"node-" + node + "\" speed=\"" + number(l.core_flops) + "f\" core=\"" +
             std::to_string(p.pes_per_node()) + "\"/>\n    <router id=\"router-" + node + "\"/>\n";
    links += "    <link id=\"nic-" + node + nic_figures;
    route("node-" + node, "router-" + node, "nic-" + node);
  }
  int stride = nodes;
  for (int d = 0; d < nd; ++d) {
    const int size = p.dims()[static_cast<std::size_t>(d)];
    stride /= size;  // row-major: the last dimension has stride 1
    for (int n = 0; n < nodes; ++n) {
      const int c = n / stride % size;
      const std::string id = std::to_string(d) + "-" + std::to_string(n);
      if (p.link(d) == link_kind::switched) {
        if (size == 1) continue;
        const int line = n - c * stride;  // the line's node with coordinate 0 names its switch
        const std::string sw = "switch-" + std::to_string(d) + "-" + std::to_string(line);
        if (c == 0) hosts += "    <router id=\"" + sw + "\"/>\n";
        links += "    <link id=\"port-" + id + link_figures;
        route("router-" + std::to_string(n), sw, "port-" + id);
        continue;
      }
      // The cable from coordinate c up to c + 1; a torus also joins the last to the first (one
      // cable suffices for a ring of two, whose two cables join the same pair of routers).
      const bool last = c + 1 == size;
      if (last && (p.link(d) == link_kind::mesh || size <= 2)) continue;
      const int up = last ? n - c * stride : n + stride;
      links += "    <link id=\"cable-" + id + link_figures;
      route("router-" + std::to_string(n), "router-" + std::to_string(up), "cable-" + id);
    }
  }
  return "  <zone id=\"world\" routing=\"Dijkstra\">\n" + hosts + links + routes + "  </zone>\n";
}

}  // namespace

std::string simgrid_platform(const physical_topology& p, const platform_links& l) {
  check_positive("link bandwidth (bytes per second)", l.link_bytes_per_second);
  check_positive("loopback bandwidth (bytes per second)", l.loopback_bytes_per_second);
  check_positive("core speed (flop/s)", l.core_flops);
  check_latency("link latency (seconds)", l.link_latency_seconds);
  check_latency("loopback latency (seconds)", l.loopback_latency_seconds);
  if (!std::isfinite(l.nic_bytes_per_second) || l.nic_bytes_per_second < 0)
    detail::throw_invalid("network interface bandwidth (bytes per second)", l.nic_bytes_per_second,
                          "a finite number >= 0 (0: none)");
  const std::vector<int> dims(p.dims().begin(), p.dims().end());
  std::string body;
  if (p.network() == network_kind::dragonfly) {
    // SimGrid numbers a dragonfly's nodes group, chassis, router, node (the last fastest), as
    // transit does; one link of each kind between each pair of routers it joins.
    // No limiter: SimGrid would give every router one too. A node's own link to its router is its
    // interface, at the link bandwidth.
    body = cluster(p, l, "DRAGONFLY",
                   std::to_string(dims[0]) + ",1;" + std::to_string(dims[1]) + ",1;" + std::to_string(dims[2]) +
                       ",1;" + std::to_string(dims[3]),
                   false);
  } else if (p.network() == network_kind::fat_tree) {
    // SimGrid lists levels bottom-up: the children of a switch at each level, the parents of a node
    // or switch at each level below the top, and the cables of each connection. Full bisection: a
    // switch has as many parents as children.
    const std::vector<int> children(dims.rbegin(), dims.rend());
    std::vector<int> parents{1}, cables(children.size(), 1);
    for (std::size_t level = 1; level < children.size(); ++level) parents.push_back(children[level - 1]);
    // No limiter, as for a dragonfly: SimGrid would give every switch one too; a node's own
    // cable to its leaf switch is its interface.
    body = cluster(p, l, "FAT_TREE",
                   std::to_string(children.size()) + ";" + join(children, ",") + ";" + join(parents, ",") + ";" +
                       join(cables, ","),
                   false);
  } else {
    bool all_torus = true;
    for (int d = 0; d < p.ndims(); ++d) all_torus = all_torus && p.link(d) == link_kind::torus;
    if (all_torus) {
      // SimGrid's torus has its first dimension fastest: dimensions reversed, its node ids are
      // transit's row-major node numbers. Dimensions of size 1 are left out: SimGrid would declare
      // a node's link to itself twice and stop ("declared several times"), and they add no link
      // and do not change the numbering.
      std::vector<int> torus;
      for (auto d = dims.rbegin(); d != dims.rend(); ++d)
        if (*d > 1) torus.push_back(*d);
      if (torus.empty()) torus.push_back(1);
      body = cluster(p, l, "TORUS", join(torus, ","), true);
    } else if (p.ndims() == 1 && p.link(0) == link_kind::switched) {
      body = cluster(p, l, "", "", true);  // a flat cluster: every host on its own link to one switch
    } else {
      body = router_zone(p, l);
    }
  }
  std::string note;
  if (l.nic_bytes_per_second > 0 &&
      (p.network() == network_kind::dragonfly || p.network() == network_kind::fat_tree))
    note = "  <!-- network interface: each node's own link to its router or switch, at the link bandwidth; the "
           "interface bandwidth given (" + number(l.nic_bytes_per_second) + " B/s) applies to tori, switches and meshes only -->\n";
  return header() + "  <!-- transit physical topology " + p.str() + " -->\n" + note + body + "</platform>\n";
}

std::string simgrid_hostfile(const topology_manager& topo) {
  std::string out;
  for (int pe = 0; pe < topo.num_pes(); ++pe) out += "node-" + std::to_string(topo.node_of(pe)) + "\n";
  return out;
}

}  // namespace transit
