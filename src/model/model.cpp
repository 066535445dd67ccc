// The cost model (docs/tuning.md): routes are walked hop by hop with the router itself, so link
// loads, message counts and hop counts are those the streamer produces; costs then follow the
// thesis's per-message, per-byte and per-item terms.
#include "transit/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "transit/detail/core/error.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"
#include "transit/mapping/mapping.hpp"

namespace transit {

namespace {

constexpr std::size_t header_bytes = 16;  // the streamer's wire_header
constexpr int exact_limit = 2048;         // beyond this many PEs, sources are sampled
constexpr int sampled_sources = 256;

/// Payload bytes of a message of `n` items of `m` bytes, with destinations when `carries`
/// (the streamer's layout: header, items, pad to 4, int32 destinations).
double message_bytes(double n, std::size_t m, bool carries) {
  if (!carries || n == 0) return static_cast<double>(header_bytes) + n * static_cast<double>(m);
  const double items_end = static_cast<double>(header_bytes) + n * static_cast<double>(m);
  return std::ceil(items_end / 4) * 4 + 4 * n;
}

struct link_load {
  int from = -1, to = -1, phase = -1;
  bool carries = false, inter = false;
  double items = 0;
};

/// Share of a source's items that go to each destination, for the non-matrix patterns.
double share(const step_workload& w, int source, int dest, int pes, double histogram_total) {
  switch (w.pattern) {
    case destinations::uniform: return 1.0 / pes;
    case destinations::others:
      if (pes == 1) return 1.0;
      return dest == source ? 0.0 : 1.0 / (pes - 1);
    case destinations::self_others:
      if (pes == 1) return 1.0;
      return dest == source ? w.self_fraction : (1.0 - w.self_fraction) / (pes - 1);
    case destinations::histogram: return histogram_total > 0 ? w.histogram[dest] / histogram_total : 0.0;
    case destinations::matrix: break;
  }
  return 0.0;
}

void factorizations(int n, int max_parts, std::vector<int>& prefix, std::vector<std::vector<int>>& out) {
  if (n == 1) {
    if (!prefix.empty()) out.push_back(prefix);
    return;
  }
  if (static_cast<int>(prefix.size()) == max_parts) return;
  for (int f = 2; f <= n; ++f) {
    if (n % f != 0) continue;
    prefix.push_back(f);
    factorizations(n / f, max_parts, prefix, out);
    prefix.pop_back();
  }
}

/// How long PEs with the given work take when `pes_per_core` of them share each core (thesis
/// 2.2's stage time, with the core as the shared resource): the scheduler shares a core fairly
/// among the PEs that still have work, and a PE runs on at most one core. So while k PEs remain
/// on C = PEs / pes_per_core cores each advances at min(1, C / k), and the step ends when the
/// busiest finishes. Equal work gives work x pes_per_core; one PE alone gives its own work; a PE
/// with more work than the rest finishes its excess at full speed once the others are done,
/// where max(busiest, mean x pes_per_core) charged either the one or the other.
double shared_makespan(std::vector<double> work, double pes_per_core) {
  if (work.empty()) return 0;
  std::sort(work.begin(), work.end());
  const double cores = static_cast<double>(work.size()) / std::max(1.0, pes_per_core);
  double t = 0, done = 0;
  for (std::size_t k = 0; k < work.size(); ++k) {
    const double remaining = static_cast<double>(work.size() - k);
    t += (work[k] - done) * std::max(1.0, remaining / cores);
    done = work[k];
  }
  return t;
}

std::vector<double> ranks_of(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = mean;
    i = j + 1;
  }
  return ranks;
}

/// The costs predict_step charges: intra and inter, or their mean when they are one kind of link.
struct link_pair {
  link_costs intra, inter;
};

/// The sources whose routes are walked: all of them, or an even sample on very large jobs (the
/// counts are then scaled by `scale` and approximate).
struct walked_sources {
  bool exact = true;
  std::vector<int> sources;
  double scale = 1;
};

/// Where the items go: every link's load and what each PE keeps or receives.
struct traffic {
  std::vector<link_load> loads;  // links of every PE that walks or is walked through
  std::vector<char> enumerated;  // PEs whose out-links are in `loads`
  std::vector<double> self_items, delivered_intra, delivered_inter;  // per PE
  double leaving = 0;            // items that leave their source
};

/// What the links cost: each PE's time per term, the job's counts, and each phase's load.
struct pe_charges {
  std::vector<double> message_time, byte_time, item_time;  // per PE
  std::vector<std::size_t> out_links;                      // per PE
  double messages = 0, inter_messages = 0, bytes = 0, hops = 0;
  std::vector<double> phase_items, phase_links;            // per phase
  std::vector<std::vector<comm_edge>> phase_edges;         // per phase: bytes between nodes, per link
};

/// The busiest PE and the pipelined time of all PEs' work.
struct busiest_pe {
  int pe = 0;
  double pipeline = 0;
};

/// Throws std::invalid_argument for a network, buffer or workload that does not fit the grid's PEs.
void check_step_inputs(int pes, std::size_t buffer_items, const step_workload& w, const topology_manager* network) {
  if (network != nullptr && network->num_pes() != pes)
    detail::throw_invalid("PEs of the network for the model", network->num_pes(), detail::concat(pes, ", the grid's PEs"));
  if (buffer_items == 0) detail::throw_invalid("buffer_items for the model", 0, "at least 1");
  if (w.pattern == destinations::histogram && static_cast<int>(w.histogram.size()) != pes)
    detail::throw_invalid("destination histogram size", w.histogram.size(), detail::concat(pes, " weights, one per PE"));
  if (w.pattern == destinations::matrix &&
      w.matrix.size() != static_cast<std::size_t>(pes) * static_cast<std::size_t>(pes))
    detail::throw_invalid("traffic matrix size", w.matrix.size(), detail::concat(pes, " x ", pes, " counts"));
}

/// The intra- and inter-node costs, averaged when both calibrate one link.
link_pair costs_in_use(const machine_costs& costs) {
  if (!costs.same_link) return {costs.intra, costs.inter};
  // Two calibrations of one link differ by noise only (beta 0.23 against 0.55 ns/byte in one
  // calibration under load). Used apart, that noise ordered mirror-image grids (8x2 against
  // 2x8) by up to 12%; their mean halves it.
  const link_costs mean{(costs.intra.alpha + costs.inter.alpha) / 2, (costs.intra.beta + costs.inter.beta) / 2,
                        (costs.intra.per_item + costs.inter.per_item) / 2};
  return {mean, mean};
}

/// Every source, or an even sample of them beyond exact_limit PEs.
walked_sources sources_to_walk(int pes, const step_workload& w) {
  walked_sources out;
  out.exact = pes <= exact_limit || w.pattern == destinations::matrix || w.walk_every_source;
  if (out.exact) {
    out.sources.resize(pes);
    std::iota(out.sources.begin(), out.sources.end(), 0);
  } else {
    for (int i = 0; i < sampled_sources; ++i)
      out.sources.push_back(static_cast<int>(static_cast<long long>(i) * pes / sampled_sources));
  }
  out.scale = static_cast<double>(pes) / static_cast<double>(out.sources.size());
  return out;
}

/// Walks every walked source's items to their destinations with the router: the items each link
/// (from, to, phase) carries, and where they are delivered.
traffic route_traffic(const machine& m, const router& plan, int pes, const walked_sources& walked,
                      const step_workload& w) {
  const int phases = plan.num_phases();
  const double histogram_total =
      w.pattern == destinations::histogram ? std::accumulate(w.histogram.begin(), w.histogram.end(), 0.0) : 0.0;
  traffic t;
  t.enumerated.assign(pes, 0);
  t.self_items.assign(pes, 0);
  t.delivered_intra.assign(pes, 0);
  t.delivered_inter.assign(pes, 0);
  std::unordered_map<std::int64_t, std::size_t> index;  // (from, to, phase) -> position in t.loads
  const auto key = [&](int from, int to, int phase) {
    return (static_cast<std::int64_t>(from) * pes + to) * phases + phase;
  };
  const auto enumerate_links = [&](int pe) {  // every out-link sends a final message, even idle ones
    if (t.enumerated[pe]) return;
    t.enumerated[pe] = 1;
    for (const hop& h : plan.out_links(pe)) {
      index.emplace(key(pe, h.pe, h.phase), t.loads.size());
      t.loads.push_back({pe, h.pe, h.phase, !plan.ends_route(h.phase), m.node_of(pe) != m.node_of(h.pe), 0});
    }
  };
  for (const int s : walked.sources) enumerate_links(s);
  for (const int s : walked.sources) {
    for (int d = 0; d < pes; ++d) {
      const double n = w.pattern == destinations::matrix
                           ? static_cast<double>(w.matrix[static_cast<std::size_t>(s) * pes + d])
                           : w.items_per_pe * share(w, s, d, pes, histogram_total);
      if (n == 0) continue;
      if (d == s) {
        t.self_items[s] += n;
        continue;
      }
      t.leaving += n;
      int at = s, arrived = -1;
      bool last_inter = false;
      while (at != d) {
        const hop next = plan.next_hop(at, d, arrived);
        enumerate_links(at);
        const auto it = index.find(key(at, next.pe, next.phase));
        TRANSIT_ASSERT(it != index.end(), "a route left through a link that out_links does not list");
        t.loads[it->second].items += n;
        last_inter = t.loads[it->second].inter;
        at = next.pe;
        arrived = next.phase;
      }
      (last_inter ? t.delivered_inter : t.delivered_intra)[d] += n;
    }
  }
  return t;
}

/// An item's cost sent and received on a link: per_item, and the bytes beyond 8 at its beta.
double item_cost(const link_costs& c, std::size_t item_bytes) {
  return c.per_item + static_cast<double>(item_bytes > 8 ? item_bytes - 8 : 0) * c.beta;
}

/// Each link's messages and bytes (full buffers and one final message), charged half at its
/// sender and half at its receiver (alpha is measured per message sent and received); an item
/// pays half of per_item where it is copied into a buffer (at its source and at every PE that
/// forwards it). A forwarding PE copies an arriving item straight into its next buffer, so it pays
/// one half, not a receiver's half and a sender's half (thesis table 2.3: o_a per routing step);
/// charging both halves at every hop put 2 x hops halves on an item where the streamer spends
/// hops + 1: +53% per item on a 6-D grid of 512 PEs, +32% on a 2-D one.
pe_charges charge_links(const traffic& t, int pes, int phases, std::size_t buffer_items, std::size_t item_bytes,
                        const walked_sources& walked, const link_pair& costs, bool physical_links) {
  const double g = static_cast<double>(buffer_items);
  pe_charges ch;
  ch.message_time.assign(pes, 0);
  ch.byte_time.assign(pes, 0);
  ch.item_time.assign(pes, 0);
  ch.out_links.assign(pes, 0);
  ch.phase_items.assign(phases, 0);
  ch.phase_links.assign(phases, 0);
  ch.phase_edges.resize(physical_links ? phases : 0);
  for (const link_load& l : t.loads) {
    const link_costs& c = l.inter ? costs.inter : costs.intra;
    const double n = l.items;
    double full = std::floor(n / g), rest = n - full * g;
    if (n == std::floor(n) && n < 0x1p53) {  // whole items: integer arithmetic, exactly as the streamer
      const auto whole = static_cast<std::uint64_t>(n);
      full = static_cast<double>(whole / buffer_items);
      rest = static_cast<double>(whole % buffer_items);
    }
    const double link_messages = full + 1;  // floor(n / g) full buffers and one final message
    const double link_bytes = full * message_bytes(g, item_bytes, l.carries) +
                              (rest > 0 ? message_bytes(rest, item_bytes, l.carries) : header_bytes);
    const double weight = walked.exact ? 1.0 : walked.scale;
    if (physical_links && l.inter)
      ch.phase_edges[l.phase].push_back({l.from, l.to, static_cast<std::uint64_t>(std::llround(link_bytes))});
    ch.messages += link_messages * weight;
    if (l.inter) ch.inter_messages += link_messages * weight;
    ch.bytes += link_bytes * weight;
    ch.hops += n * weight;
    const double msg = link_messages * c.alpha / 2, byt = link_bytes * c.beta / 2,
                 itm = n * item_cost(c, item_bytes) / 2;
    ch.message_time[l.from] += msg;
    ch.message_time[l.to] += msg;
    ch.byte_time[l.from] += byt;
    ch.byte_time[l.to] += byt;
    ch.item_time[l.from] += itm;
    ++ch.out_links[l.from];
    ch.phase_items[l.phase] += n;
    ch.phase_links[l.phase] += 1;
  }
  return ch;
}

/// Adds each PE's items delivered to itself (a copy in and a hand-over, both on the PE) and the
/// receiving half of every item delivered to it, at the costs of the link it came by.
void charge_deliveries(const traffic& t, int pes, std::size_t item_bytes, const link_pair& costs, pe_charges& ch) {
  for (int pe = 0; pe < pes; ++pe) {
    ch.item_time[pe] += t.self_items[pe] * costs.intra.per_item;
    ch.item_time[pe] += t.delivered_intra[pe] * (item_cost(costs.intra, item_bytes) / 2) +
                        t.delivered_inter[pe] * (item_cost(costs.inter, item_bytes) / 2);
  }
}

/// The busiest PE, and the time of every counted PE's work (all of them when exact; sampled:
/// only the mean is known) with `pes_per_core` PEs sharing each core.
busiest_pe pipeline_time(const pe_charges& ch, int pes, bool exact, const std::vector<char>& enumerated,
                         double pes_per_core) {
  busiest_pe out;
  std::vector<double> work;
  const auto total = [&](int pe) { return ch.message_time[pe] + ch.byte_time[pe] + ch.item_time[pe]; };
  for (int pe = 0; pe < pes; ++pe) {
    const double t = total(pe);
    if (!exact && !enumerated[pe]) continue;
    work.push_back(t);
    if (t > total(out.pe)) out.pe = pe;
  }
  if (!exact && !work.empty()) {
    const double mean = std::accumulate(work.begin(), work.end(), 0.0) / static_cast<double>(work.size());
    std::fill(work.begin(), work.end(), mean);
  }
  out.pipeline = shared_makespan(std::move(work), pes_per_core);
  return out;
}

/// Filling and flushing the pipeline (thesis 2.2.1: up to two stage times): along the phases a
/// last buffer of at most g items (or of the items a link carries) waits for each hop.
double flush_time(const pe_charges& ch, double g, std::size_t item_bytes, const link_pair& costs,
                  double pes_per_core) {
  const link_costs& slow = costs.inter.alpha > costs.intra.alpha ? costs.inter : costs.intra;
  double flush = 0;
  for (std::size_t ph = 0; ph < ch.phase_links.size(); ++ph) {
    if (ch.phase_links[ph] == 0) continue;
    const double last = std::min(g, ch.phase_items[ph] / ch.phase_links[ph]);
    flush += slow.alpha + last * (slow.per_item + static_cast<double>(item_bytes) * slow.beta);
  }
  return flush * pes_per_core;
}

/// The network's share (only with the job's physical links known): a phase's last messages
/// cannot hide their transfer behind CPU work, since the next phase waits for them. A PE's K
/// out-links of a phase send M messages each, one after another between its other charges, so
/// of the busiest physical link's load L in that phase about L / (K M) is left exposed at the
/// end. With one message per link (small volume), a 6-D grid's phases each push a node's data
/// through one torus link, all of it exposed. It replaces the fill-and-flush term: the
/// simulated times showed no CPU-charged last buffer per phase beyond the charges already in
/// T_run (docs/simulation.md, "transit model against the simulated ordering of grids").
double links_time(const topology_manager& network, const pe_charges& ch, int pes, double g, const link_costs& inter) {
  std::vector<int> identity(pes);
  std::iota(identity.begin(), identity.end(), 0);
  double link_seconds = 0;
  for (std::size_t ph = 0; ph < ch.phase_edges.size(); ++ph) {
    if (ch.phase_edges[ph].empty()) continue;  // no link of this phase leaves its node
    const auto loads_now = directed_link_loads(network, ch.phase_edges[ph], identity);
    const double busiest_link = static_cast<double>(*std::max_element(loads_now.begin(), loads_now.end()));
    const double out_links_per_pe = ch.phase_links[ph] / pes;
    const double messages_per_link = std::max(1.0, std::ceil(ch.phase_items[ph] / ch.phase_links[ph] / g));
    link_seconds += busiest_link * inter.beta / (out_links_per_pe * messages_per_link);
  }
  return link_seconds;
}

/// The prediction: the busiest PE's terms, the step time and the job's counts.
step_prediction totals(const pe_charges& ch, const busiest_pe& busiest, double flush, double link_seconds,
                       double leaving, const walked_sources& walked) {
  step_prediction p;
  p.exact = walked.exact;
  p.message_seconds = ch.message_time[busiest.pe];
  p.byte_seconds = ch.byte_time[busiest.pe];
  p.item_seconds = ch.item_time[busiest.pe];
  p.flush_seconds = flush;
  p.link_seconds = link_seconds;
  p.seconds = busiest.pipeline + flush + link_seconds;
  p.messages = static_cast<std::uint64_t>(std::llround(ch.messages));
  p.inter_node_messages = static_cast<std::uint64_t>(std::llround(ch.inter_messages));
  p.bytes = static_cast<std::uint64_t>(std::llround(ch.bytes));
  p.item_hops = static_cast<std::uint64_t>(std::llround(ch.hops));
  const double left = leaving * (walked.exact ? 1.0 : walked.scale);
  p.items_forwarded = static_cast<std::uint64_t>(std::llround(std::max(0.0, ch.hops - left)));
  p.average_hops = left > 0 ? ch.hops / left : 0;
  p.links_per_pe = *std::max_element(ch.out_links.begin(), ch.out_links.end());
  return p;
}

}  // namespace

double pes_per_core(const context& ctx) {
  const double threads = std::max(1u, std::thread::hardware_concurrency());
  const bool one_host = detail::context_access::net(ctx).threads_of_one_process() || ctx.options().pes_per_node > 0;
  const int sharing = one_host ? ctx.size() : ctx.machine().pes_on_node(ctx.machine().node_of(ctx.rank()));
  return std::max(1.0, sharing / threads);
}

const topology_manager* named_network(const context& ctx) {
  return ctx.options().physical.empty() ? nullptr : &ctx.topology();  // the option holds TRANSIT_PHYSICAL too
}

profile_status profile_in_use(const context& ctx) {
  return profile_in_use(ctx.backend(), ctx.machine().max_pes_per_node());
}

machine_costs costs_from(const streamer_profile& profile, double sharing) {
  machine_costs c;
  c.intra = profile.intra.measured ? profile.intra.costs : profile.inter.costs;
  c.inter = profile.inter.measured ? profile.inter.costs : c.intra;
  // The local backend's nodes are labels on one host: its two links are one kind of link.
  c.same_link = profile.backend == "local" && profile.intra.measured && profile.inter.measured;
  c.pes_per_core = std::max(1.0, sharing);
  return c;
}

machine_costs built_in_costs(std::string_view backend, double sharing) {
  // BENCHMARKS.md ("Where the time goes"): about 1.7 us per message and 13 ns per item on 2 MPI
  // ranks, 1.1 us and 10.6 ns on the local backend; shared memory copies at a few GB/s.
  machine_costs c;
  if (backend == "mpi") {
    c.intra = {1.7e-6, 0.3e-9, 13e-9};
  } else {
    c.intra = {1.1e-6, 0.2e-9, 10.6e-9};
  }
  c.inter = c.intra;
  c.pes_per_core = std::max(1.0, sharing);
  return c;
}

step_prediction predict_step(const machine& m, const virtual_grid& grid, routing route, std::size_t buffer_items,
                             const step_workload& w, const machine_costs& costs, const topology_manager* network) {
  const int pes = grid.num_pes();
  check_step_inputs(pes, buffer_items, w, network);
  const auto plan = make_router(route, grid, m);
  const link_pair c = costs_in_use(costs);
  const double g = static_cast<double>(buffer_items);
  const std::size_t item_bytes = std::max<std::size_t>(1, w.item_bytes);

  const walked_sources walked = sources_to_walk(pes, w);
  const traffic t = route_traffic(m, *plan, pes, walked, w);
  // Sampled routes leave most links unknown, so no link term then.
  const bool physical_links = network != nullptr && walked.exact;
  pe_charges charges = charge_links(t, pes, plan->num_phases(), buffer_items, item_bytes, walked, c, physical_links);
  charge_deliveries(t, pes, item_bytes, c, charges);

  const busiest_pe busiest = pipeline_time(charges, pes, walked.exact, t.enumerated, costs.pes_per_core);
  double flush = flush_time(charges, g, item_bytes, c, costs.pes_per_core);
  double link_seconds = 0;
  if (physical_links) {  // the network's share replaces the fill-and-flush term (links_time says why)
    link_seconds = links_time(*network, charges, pes, g, c.inter);
    flush = 0;
  }
  return totals(charges, busiest, flush, link_seconds, t.leaving, walked);
}

std::string grid_candidate::spec() const {
  if (grid.ndims() == 1) return "direct";
  for (int pe = 0; pe < grid.num_pes(); ++pe)
    if (grid.slot_of(pe) != pe) return "node";  // only node_pe places PEs otherwise than row-major
  return grid.str();
}

std::string grid_candidate::name() const {
  if (route == routing::grid) return spec();
  return std::string(to_string(route)) + " " + grid.str();
}

std::vector<grid_candidate> candidate_grids(const machine& m, const physical_topology& physical) {
  const int pes = m.num_pes();
  std::vector<std::vector<int>> shapes;
  if (pes == 1) {
    shapes.push_back({1});
  } else {
    std::vector<int> prefix;
    factorizations(pes, 4, prefix, shapes);
    for (int d = 2; d <= 4; ++d) {
      const auto balanced = virtual_grid::balanced(pes, d);
      std::vector<int> dims(balanced.dims().begin(), balanced.dims().end());
      std::erase(dims, 1);
      if (!dims.empty()) shapes.push_back(dims);
    }
    try {
      for (auto dims : minimal_routing_grids(physical)) {
        std::erase(dims, 1);
        if (!dims.empty() && dims.size() <= 4) shapes.push_back(dims);
      }
    } catch (const std::invalid_argument&) {
      // a physical topology too large to enumerate: its grids are left out
    }
  }
  std::vector<grid_candidate> out;
  std::set<std::pair<std::vector<int>, int>> seen;  // (slot of every PE, routing)
  const auto add = [&](const virtual_grid& g, routing r) {
    std::vector<int> placement(g.dims().begin(), g.dims().end());
    placement.push_back(-1);
    for (int pe = 0; pe < pes; ++pe) placement.push_back(g.slot_of(pe));
    if (!seen.emplace(placement, static_cast<int>(r)).second) return;
    try {
      make_router(r, g, m);
    } catch (const std::invalid_argument&) {
      return;  // node-aware routing on a grid whose rows are not nodes
    }
    out.push_back({g, r});
  };
  for (auto dims : shapes) {
    if (dims.size() == 1) dims = {pes};  // a 1-D grid with empty slots routes as the direct one
    std::optional<virtual_grid> g;
    try {
      g.emplace(dims, pes);
    } catch (const std::invalid_argument&) {
      continue;  // more slots than a grid may have
    }
    add(*g, routing::grid);
    if (g->ndims() >= 2) {
      add(*g, routing::node_aware);
      add(*g, routing::node_aware_advanced);
    }
  }
  if (m.num_nodes() > 1 && m.max_pes_per_node() > 1) {
    const virtual_grid nodes = virtual_grid::node_pe(m);  // uneven nodes leave holes
    for (const routing r : {routing::grid, routing::node_aware, routing::node_aware_advanced}) add(nodes, r);
  }
  std::stable_sort(out.begin(), out.end(), [](const grid_candidate& a, const grid_candidate& b) {
    const auto da = a.grid.dims(), db = b.grid.dims();
    if (da.size() != db.size()) return da.size() < db.size();
    const std::vector<int> va(da.begin(), da.end()), vb(db.begin(), db.end());
    if (va != vb) return va < vb;
    return static_cast<int>(a.route) < static_cast<int>(b.route);
  });
  return out;
}

double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const auto ra = ranks_of(a), rb = ranks_of(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va == 0 || vb == 0) return std::numeric_limits<double>::quiet_NaN();
  return cov / std::sqrt(va * vb);
}

}  // namespace transit
