#pragma once
// Shared by the grid tests: exhaustive checks of the router contract
// (include/transit/grid/router.hpp), machines with uneven nodes, and error-message checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "transit/grid/router.hpp"
#include "transit/grid/virtual_grid.hpp"
#include "transit/topology/machine.hpp"

namespace transit::testing {

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// A grid and the machine it runs on.
struct grid_case {
  virtual_grid grid;
  machine m;
};

/// Runs `action`, expects std::invalid_argument, and checks that its message names each part.
template <class Action>
void expect_invalid(Action action, const std::vector<std::string>& message_parts) {
  try {
    action();
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    for (const auto& part : message_parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "message '" << message << "' lacks '" << part << "'";
  }
}

struct route_expectations {
  bool hops_are_grid_peers = false;               // grid router: every hop changes one coordinate
  std::function<int(int pe)> max_next_hop_peers;  // buffer bound per PE; empty: not checked
  bool all_broadcast_roots = true;                // else every root up to 16 PEs, then a sample
};

/// Follows the route of every source-destination pair and checks the router contract: delivery
/// within max_hops, strictly increasing phases, nothing after the last phase, next_hop independent
/// of arrived_phase, out_links/in_links complete and exact, buffer bounds, broadcast trees.
/// Reports at most one failure per kind; `label` names the configuration.
inline void check_router(const router& r, const route_expectations& expect,
                         const std::string& label) {
  const virtual_grid& g = r.grid();
  const int num_pes = g.num_pes();
  std::vector<std::set<std::pair<int, int>>> used(num_pes);  // (phase, pe) links used from a PE
  std::set<std::string> reported;
  const auto fail = [&](const std::string& kind, const std::string& detail) {
    if (reported.insert(kind).second) ADD_FAILURE() << label << ": " << kind << ": " << detail;
  };

  for (int src = 0; src < num_pes; ++src) {
    for (int dest = 0; dest < num_pes; ++dest) {
      int at = src;
      int arrived = -1;
      int hops = 0;
      while (at != dest) {
        const std::string where = "route " + std::to_string(src) + "->" + std::to_string(dest) +
                                  " at PE " + std::to_string(at);
        if (arrived >= 0 && r.ends_route(arrived)) {
          fail("hop after a phase that ends routes (the last phase included)", where);
          break;
        }
        const hop next = r.next_hop(at, dest, arrived);
        if (next.pe < 0 || next.pe >= num_pes || next.pe == at) {
          fail("invalid next PE", where + " -> " + std::to_string(next.pe));
          break;
        }
        if (next.phase <= arrived || next.phase >= r.num_phases())
          fail("phases not strictly increasing", where + " phase " + std::to_string(next.phase) +
                                                     " after " + std::to_string(arrived));
        if (arrived >= 0 && !(r.next_hop(at, dest, -1) == next))
          fail("next_hop depends on arrived_phase", where);
        if (expect.hops_are_grid_peers && !g.is_peer(at, next.pe))
          fail("hop to a non-peer", where + " -> " + std::to_string(next.pe));
        used[at].insert({next.phase, next.pe});
        at = next.pe;
        arrived = next.phase;
        if (++hops > r.max_hops()) {
          fail("route longer than max_hops", where);
          break;
        }
      }
    }
  }

  std::vector<std::vector<hop>> expected_in(num_pes);
  for (int pe = 0; pe < num_pes; ++pe) {
    std::vector<hop> expected_out;
    std::set<int> next_pes;
    for (const auto& [phase, to] : used[pe]) {
      expected_out.push_back({to, phase});
      expected_in[to].push_back({pe, phase});
      next_pes.insert(to);
    }
    if (r.out_links(pe) != expected_out)
      fail("out_links differ from the hops used", "PE " + std::to_string(pe));
    if (expect.max_next_hop_peers &&
        static_cast<int>(next_pes.size()) > expect.max_next_hop_peers(pe))
      fail("too many next-hop peers", "PE " + std::to_string(pe) + " has " +
                                          std::to_string(next_pes.size()) + ", bound " +
                                          std::to_string(expect.max_next_hop_peers(pe)));
  }
  for (int pe = 0; pe < num_pes; ++pe) {
    auto& expected = expected_in[pe];
    std::sort(expected.begin(), expected.end(), [](const hop& a, const hop& b) {
      return a.phase != b.phase ? a.phase < b.phase : a.pe < b.pe;
    });
    if (r.in_links(pe) != expected)
      fail("in_links differ from the hops used", "PE " + std::to_string(pe));
  }

  std::vector<int> roots;
  for (int root = 0; root < num_pes; ++root) {
    const bool sampled =
        root <= 1 || root == num_pes / 3 || root == num_pes / 2 || root >= num_pes - 2;
    if (expect.all_broadcast_roots || num_pes <= 16 || sampled) roots.push_back(root);
  }
  std::vector<hop> children;
  for (const int root : roots) {
    std::vector<int> received(num_pes, 0);
    std::vector<hop> frontier{{root, -1}};
    received[root] = 1;
    while (!frontier.empty()) {
      const hop item = frontier.back();
      frontier.pop_back();
      children.clear();
      r.broadcast_children(item.pe, root, item.phase, children);
      for (const hop& child : children) {
        const std::string where = "broadcast from " + std::to_string(root) + " at PE " +
                                  std::to_string(item.pe) + " to " + std::to_string(child.pe);
        if (child.pe < 0 || child.pe >= num_pes) {
          fail("broadcast child out of range", where);
          continue;
        }
        if (child.phase <= item.phase) fail("broadcast phases not increasing", where);
        if (item.phase >= 0 && r.ends_route(item.phase))
          fail("broadcast hop after a phase that ends routes", where);
        if (!used[item.pe].count({child.phase, child.pe}))
          fail("broadcast link not in out_links", where);
        if (++received[child.pe] == 1) frontier.push_back(child);
      }
    }
    for (int pe = 0; pe < num_pes; ++pe) {
      if (received[pe] != 1)
        fail("broadcast does not reach every PE exactly once",
             "root " + std::to_string(root) + ", PE " + std::to_string(pe) + " received " +
                 std::to_string(received[pe]));
    }
  }
}

/// Machines with nodes of uneven size for `num_pes` PEs: sizes cycle through `pattern`.
inline machine uneven_machine(int num_pes, const std::vector<int>& pattern) {
  std::vector<int> node_of(num_pes);
  int node = 0;
  int filled = 0;
  std::size_t next = 0;
  for (int pe = 0; pe < num_pes; ++pe) {
    node_of[pe] = node;
    if (++filled == pattern[next % pattern.size()]) {
      ++node;
      filled = 0;
      ++next;
    }
  }
  return machine::from_node_ids(std::move(node_of));
}

}  // namespace transit::testing
