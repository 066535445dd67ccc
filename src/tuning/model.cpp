// The cost model (docs/tuning.md): routes are walked hop by hop with the router itself, so link
// loads, message counts and hop counts are those the streamer produces; costs then follow the
// thesis's per-message, per-byte and per-item terms.
#include "transit/tuning/model.hpp"

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
#include "transit/runtime/context.hpp"
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

}  // namespace

double pes_per_core(const context& ctx) {
  const double threads = std::max(1u, std::thread::hardware_concurrency());
  const bool one_host = ctx.backend() == "local" || ctx.options().pes_per_node > 0;
  const int sharing = one_host ? ctx.size() : ctx.machine().pes_on_node(ctx.machine().node_of(ctx.rank()));
  return std::max(1.0, sharing / threads);
}

const topology_manager* named_network(const context& ctx) {
  return ctx.options().physical.empty() ? nullptr : &ctx.topology();  // the option holds TRANSIT_PHYSICAL too
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
  if (network != nullptr && network->num_pes() != pes)
    detail::throw_invalid("PEs of the network for the model", network->num_pes(), detail::concat(pes, ", the grid's PEs"));
  if (buffer_items == 0) detail::throw_invalid("buffer_items for the model", 0, "at least 1");
  if (w.pattern == destinations::histogram && static_cast<int>(w.histogram.size()) != pes)
    detail::throw_invalid("destination histogram size", w.histogram.size(), detail::concat(pes, " weights, one per PE"));
  if (w.pattern == destinations::matrix &&
      w.matrix.size() != static_cast<std::size_t>(pes) * static_cast<std::size_t>(pes))
    detail::throw_invalid("traffic matrix size", w.matrix.size(), detail::concat(pes, " x ", pes, " counts"));
  const auto plan = make_router(route, grid, m);
  link_costs intra_costs = costs.intra, inter_costs = costs.inter;
  if (costs.same_link) {
    // Two calibrations of one link differ by noise only (beta 0.23 against 0.55 ns/byte in one
    // calibration under load). Used apart, that noise ordered mirror-image grids (8x2 against
    // 2x8) by up to 12%; their mean halves it.
    intra_costs = inter_costs = {(costs.intra.alpha + costs.inter.alpha) / 2, (costs.intra.beta + costs.inter.beta) / 2,
                                 (costs.intra.per_item + costs.inter.per_item) / 2};
  }
  const int phases = plan->num_phases();
  const double g = static_cast<double>(buffer_items);
  const std::size_t item_bytes = std::max<std::size_t>(1, w.item_bytes);

  // Sources whose routes are walked: all of them, or an even sample on very large jobs (the
  // counts are then scaled and approximate).
  const bool exact = pes <= exact_limit || w.pattern == destinations::matrix || w.walk_every_source;
  std::vector<int> sources;
  if (exact) {
    sources.resize(pes);
    std::iota(sources.begin(), sources.end(), 0);
  } else {
    for (int i = 0; i < sampled_sources; ++i)
      sources.push_back(static_cast<int>(static_cast<long long>(i) * pes / sampled_sources));
  }
  const double scale = static_cast<double>(pes) / static_cast<double>(sources.size());
  const double histogram_total =
      w.pattern == destinations::histogram ? std::accumulate(w.histogram.begin(), w.histogram.end(), 0.0) : 0.0;

  // Link loads, keyed by (from, to, phase); links of every PE that walks or is walked through.
  std::vector<link_load> loads;
  std::unordered_map<std::int64_t, std::size_t> index;
  std::vector<char> enumerated(pes, 0);
  const auto key = [&](int from, int to, int phase) {
    return (static_cast<std::int64_t>(from) * pes + to) * phases + phase;
  };
  const auto enumerate_links = [&](int pe) {  // every out-link sends a final message, even idle ones
    if (enumerated[pe]) return;
    enumerated[pe] = 1;
    for (const hop& h : plan->out_links(pe)) {
      index.emplace(key(pe, h.pe, h.phase), loads.size());
      loads.push_back({pe, h.pe, h.phase, !plan->ends_route(h.phase), m.node_of(pe) != m.node_of(h.pe), 0});
    }
  };
  std::vector<double> self_items(pes, 0), inserted(pes, 0), delivered_intra(pes, 0), delivered_inter(pes, 0);
  double leaving = 0;  // items that leave their source
  for (const int s : sources) enumerate_links(s);
  for (const int s : sources) {
    for (int d = 0; d < pes; ++d) {
      const double n = w.pattern == destinations::matrix
                           ? static_cast<double>(w.matrix[static_cast<std::size_t>(s) * pes + d])
                           : w.items_per_pe * share(w, s, d, pes, histogram_total);
      if (n == 0) continue;
      inserted[s] += n;
      if (d == s) {
        self_items[s] += n;
        continue;
      }
      leaving += n;
      int at = s, arrived = -1;
      bool last_inter = false;
      while (at != d) {
        const hop next = plan->next_hop(at, d, arrived);
        enumerate_links(at);
        const auto it = index.find(key(at, next.pe, next.phase));
        TRANSIT_ASSERT(it != index.end(), "a route left through a link that out_links does not list");
        loads[it->second].items += n;
        last_inter = loads[it->second].inter;
        at = next.pe;
        arrived = next.phase;
      }
      (last_inter ? delivered_inter : delivered_intra)[d] += n;
    }
  }

  step_prediction p;
  p.exact = exact;
  // Per PE: half of each link's message and byte costs at its sender, half at its receiver (alpha
  // is measured per message sent and received). An item costs half of per_item (measured per item
  // sent and received: one copy into a buffer at the source, one hand-over at the destination)
  // each time it is copied into a buffer (at its source and at every PE that forwards it) and once
  // more where it is delivered; a forwarding PE copies an arriving item straight into its next
  // buffer, so it pays one half, not a receiver's half and a sender's half (thesis table 2.3: o_a
  // per routing step). Charging both halves at every hop put 2 x hops halves on an item where
  // the streamer spends hops + 1: +53% per item on a 6-D grid of 512 PEs, +32% on a 2-D one.
  std::vector<double> message_time(pes, 0), byte_time(pes, 0), item_time(pes, 0);
  std::vector<std::size_t> out_links(pes, 0);
  double messages = 0, inter_messages = 0, bytes = 0, hops = 0;
  std::vector<double> phase_items(phases, 0), phase_links(phases, 0);
  // Bytes between nodes per phase, for the physical links. Sampled routes leave most links
  // unknown, so no link term then.
  const bool physical_links = network != nullptr && exact;
  std::vector<std::vector<comm_edge>> phase_edges(physical_links ? phases : 0);
  for (const link_load& l : loads) {
    const link_costs& c = l.inter ? inter_costs : intra_costs;
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
    const double weight = exact ? 1.0 : scale;
    if (physical_links && l.inter)
      phase_edges[l.phase].push_back({l.from, l.to, static_cast<std::uint64_t>(std::llround(link_bytes))});
    messages += link_messages * weight;
    if (l.inter) inter_messages += link_messages * weight;
    bytes += link_bytes * weight;
    hops += n * weight;
    const double msg = link_messages * c.alpha / 2, byt = link_bytes * c.beta / 2,
                 itm = n * (c.per_item + static_cast<double>(item_bytes > 8 ? item_bytes - 8 : 0) * c.beta) / 2;
    message_time[l.from] += msg;
    message_time[l.to] += msg;
    byte_time[l.from] += byt;
    byte_time[l.to] += byt;
    item_time[l.from] += itm;
    ++out_links[l.from];
    phase_items[l.phase] += n;
    phase_links[l.phase] += 1;
  }
  for (int pe = 0; pe < pes; ++pe) {
    item_time[pe] += self_items[pe] * intra_costs.per_item;  // a copy in and a hand-over, both on pe
    // The hand-over at the destination: the receiving half, at the costs of the link it came by.
    const auto hand_over = [&](const link_costs& c) {
      return (c.per_item + static_cast<double>(item_bytes > 8 ? item_bytes - 8 : 0) * c.beta) / 2;
    };
    item_time[pe] += delivered_intra[pe] * hand_over(intra_costs) + delivered_inter[pe] * hand_over(inter_costs);
  }

  // The busiest PE, and the work of every PE that was counted (all of them when exact).
  int busiest = 0;
  std::vector<double> work;
  for (int pe = 0; pe < pes; ++pe) {
    const double t = message_time[pe] + byte_time[pe] + item_time[pe];
    if (!exact && !enumerated[pe]) continue;
    work.push_back(t);
    if (t > message_time[busiest] + byte_time[busiest] + item_time[busiest]) busiest = pe;
  }
  if (!exact && !work.empty()) {  // sampled: only the mean is known
    const double mean = std::accumulate(work.begin(), work.end(), 0.0) / static_cast<double>(work.size());
    std::fill(work.begin(), work.end(), mean);
  }
  const double pipeline = shared_makespan(std::move(work), costs.pes_per_core);
  // Filling and flushing the pipeline (thesis 2.2.1: up to two stage times): along the phases a
  // last buffer of at most g items (or of the items a link carries) waits for each hop.
  const link_costs& slow = inter_costs.alpha > intra_costs.alpha ? inter_costs : intra_costs;
  double flush = 0;
  for (int ph = 0; ph < phases; ++ph) {
    if (phase_links[ph] == 0) continue;
    const double last = std::min(g, phase_items[ph] / phase_links[ph]);
    flush += slow.alpha + last * (slow.per_item + static_cast<double>(item_bytes) * slow.beta);
  }
  flush *= costs.pes_per_core;

  // The network's share (only with the job's physical links known): a phase's last messages
  // cannot hide their transfer behind CPU work, since the next phase waits for them. A PE's K
  // out-links of a phase send M messages each, one after another between its other charges, so
  // of the busiest physical link's load L in that phase about L / (K M) is left exposed at the
  // end. With one message per link (small volume), a 6-D grid's phases each push a node's data
  // through one torus link, all of it exposed. It replaces the fill-and-flush term: the
  // simulated times showed no CPU-charged last buffer per phase beyond the charges already in
  // T_run (docs/simulation.md, "transit model against the simulated ordering of grids").
  double link_seconds = 0;
  if (physical_links) {
    std::vector<int> identity(pes);
    std::iota(identity.begin(), identity.end(), 0);
    for (int ph = 0; ph < phases; ++ph) {
      if (phase_edges[ph].empty()) continue;  // no link of this phase leaves its node
      const auto loads_now = directed_link_loads(*network, phase_edges[ph], identity);
      const double busiest_link = static_cast<double>(*std::max_element(loads_now.begin(), loads_now.end()));
      const double out_links_per_pe = phase_links[ph] / pes;
      const double messages_per_link = std::max(1.0, std::ceil(phase_items[ph] / phase_links[ph] / g));
      link_seconds += busiest_link * inter_costs.beta / (out_links_per_pe * messages_per_link);
    }
    flush = 0;
  }

  p.message_seconds = message_time[busiest];
  p.byte_seconds = byte_time[busiest];
  p.item_seconds = item_time[busiest];
  p.flush_seconds = flush;
  p.link_seconds = link_seconds;
  p.seconds = pipeline + flush + link_seconds;
  p.messages = static_cast<std::uint64_t>(std::llround(messages));
  p.inter_node_messages = static_cast<std::uint64_t>(std::llround(inter_messages));
  p.bytes = static_cast<std::uint64_t>(std::llround(bytes));
  p.item_hops = static_cast<std::uint64_t>(std::llround(hops));
  const double left = leaving * (exact ? 1.0 : scale);
  p.items_forwarded = static_cast<std::uint64_t>(std::llround(std::max(0.0, hops - left)));
  p.average_hops = left > 0 ? hops / left : 0;
  p.links_per_pe = *std::max_element(out_links.begin(), out_links.end());
  return p;
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
