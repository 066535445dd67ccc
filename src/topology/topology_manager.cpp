#include "transit/topology/topology_manager.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "transit/detail/core/error.hpp"
#include "transit/topology/machine.hpp"

namespace transit {
namespace {

constexpr std::string_view spec_format =
    "KIND:DIMS[:PES_PER_NODE] with KIND torus, mesh, switch, dragonfly or fattree and DIMS such as 8x4x8 "
    "(e.g. 'torus:8x4x8:16', 'mesh:4x4:2', 'dragonfly:4x6x16x4:24', 'fattree:8x16:24')";

std::string_view kind_name(link_kind k) {
  if (k == link_kind::torus) return "torus";
  if (k == link_kind::mesh) return "mesh";
  return "switch";
}

char link_suffix(link_kind k) { return kind_name(k)[0]; }

std::optional<link_kind> kind_of_suffix(char c) {
  if (c == 't') return link_kind::torus;
  if (c == 'm') return link_kind::mesh;
  if (c == 's') return link_kind::switched;
  return std::nullopt;
}

// A positive decimal int, or std::invalid_argument naming `what` and `shown` (overflow included).
int parse_count(std::string_view token, const std::string& what, std::string_view shown) {
  int value = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (token.empty() || ec != std::errc{} || ptr != end || value < 1)
    detail::throw_invalid(what, shown, "a positive integer");
  return value;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

[[noreturn]] void throw_out_of_range(std::string_view what, int value, int size) {
  throw std::out_of_range(
      detail::concat(what, ": got '", value, "', expected 0..", size - 1));
}

}  // namespace

// ---- physical_topology ----------------------------------------------------------------------

physical_topology::physical_topology(std::vector<int> dims, std::vector<link_kind> links,
                                     int pes_per_node)
    : dims_(std::move(dims)), links_(std::move(links)), pes_per_node_(pes_per_node) {
  if (dims_.empty()) detail::throw_invalid("physical topology dimensions", "none", "at least one");
  if (links_.size() != dims_.size())
    detail::throw_invalid("physical topology links", links_.size(),
                          detail::concat("one per dimension (", dims_.size(), ")"));
  if (pes_per_node_ < 1) detail::throw_invalid("PEs per node", pes_per_node_, "at least 1");
  std::int64_t capacity = pes_per_node_;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d] < 1)
      detail::throw_invalid(detail::concat("size of physical dimension ", d), dims_[d], "at least 1");
    capacity *= dims_[d];
    if (capacity > INT_MAX)
      detail::throw_invalid("capacity of the physical topology", capacity, "at most INT_MAX PEs");
  }
  num_nodes_ = static_cast<int>(capacity / pes_per_node_);
}

physical_topology::physical_topology(network_kind network, std::vector<int> dims, int pes_per_node)
    : physical_topology(dims, std::vector<link_kind>(dims.size(), link_kind::switched), pes_per_node) {
  network_ = network;
}

physical_topology physical_topology::dragonfly(int groups, int chassis, int routers, int nodes_per_router,
                                               int pes_per_node) {
  physical_topology t(network_kind::dragonfly, {groups, chassis, routers, nodes_per_router}, pes_per_node);
  if (groups > routers)
    detail::throw_invalid("dragonfly groups", groups,
                          detail::concat("at most ", routers,
                                         ", the routers per chassis (SimGrid's minimal routing attaches group g's "
                                         "global link to router g of chassis 0)"));
  return t;
}

physical_topology physical_topology::fat_tree(std::vector<int> fan_outs, int pes_per_node) {
  return {network_kind::fat_tree, std::move(fan_outs), pes_per_node};
}

physical_topology physical_topology::torus(std::vector<int> dims, int pes_per_node) {
  std::vector<link_kind> links(dims.size(), link_kind::torus);
  return {std::move(dims), std::move(links), pes_per_node};
}

physical_topology physical_topology::mesh(std::vector<int> dims, int pes_per_node) {
  std::vector<link_kind> links(dims.size(), link_kind::mesh);
  return {std::move(dims), std::move(links), pes_per_node};
}

physical_topology physical_topology::switched(int num_nodes, int pes_per_node) {
  return {{num_nodes}, {link_kind::switched}, pes_per_node};
}

physical_topology physical_topology::parse(std::string_view spec) {
  const std::vector<std::string_view> parts = split(spec, ':');
  if (parts.size() < 2 || parts.size() > 3 || parts[1].empty())
    detail::throw_invalid("physical topology spec", spec, spec_format);

  link_kind kind = link_kind::torus;
  network_kind network = network_kind::direct;
  if (parts[0] == "torus") kind = link_kind::torus;
  else if (parts[0] == "mesh") kind = link_kind::mesh;
  else if (parts[0] == "switch") kind = link_kind::switched;
  else if (parts[0] == "dragonfly") network = network_kind::dragonfly;
  else if (parts[0] == "fattree") network = network_kind::fat_tree;
  else
    detail::throw_invalid(detail::concat("topology kind in '", spec, "'"), parts[0],
                          "'torus', 'mesh', 'switch', 'dragonfly' or 'fattree'");

  std::vector<int> dims;
  std::vector<link_kind> links;
  for (const std::string_view original : split(parts[1], 'x')) {
    std::string_view token = original;
    link_kind link = kind;
    if (!token.empty() && network == network_kind::direct) {  // indirect networks have no per-dimension links
      if (const auto suffix = kind_of_suffix(token.back())) {
        link = *suffix;
        token.remove_suffix(1);
      }
    }
    dims.push_back(parse_count(
        token, detail::concat("size of dimension ", dims.size(), " in physical topology '", spec, "'"),
        original));
    links.push_back(link);
  }
  const int pes_per_node =
      parts.size() == 3
          ? parse_count(parts[2], detail::concat("PEs per node in physical topology '", spec, "'"),
                        parts[2])
          : 1;
  if (network == network_kind::dragonfly) {
    if (dims.size() != 4)
      detail::throw_invalid(detail::concat("dimensions of dragonfly '", spec, "'"), dims.size(),
                            "4: groups x chassis per group x routers per chassis x nodes per router");
    return dragonfly(dims[0], dims[1], dims[2], dims[3], pes_per_node);
  }
  if (network == network_kind::fat_tree) return fat_tree(std::move(dims), pes_per_node);
  return {std::move(dims), std::move(links), pes_per_node};
}

std::optional<physical_topology> physical_topology::from_environment() {
  const char* value = std::getenv("TRANSIT_PHYSICAL");
  if (value == nullptr || *value == '\0') return std::nullopt;
  return parse(value);
}

int physical_topology::distance(int d, int a, int b) const {
  const int diff = std::abs(a - b);
  const link_kind k = link(d);
  if (k == link_kind::torus) return std::min(diff, dims_[static_cast<std::size_t>(d)] - diff);
  if (k == link_kind::mesh) return diff;
  return diff == 0 ? 0 : 1;
}

int physical_topology::node_hops(std::span<const int> a, std::span<const int> b) const {
  switch (network_) {
    case network_kind::direct: {
      int total = 0;
      for (std::size_t d = 0; d < dims_.size(); ++d) total += distance(static_cast<int>(d), a[d], b[d]);
      return total;
    }
    case network_kind::fat_tree: {
      // Up to the lowest switch above both and down again: the first coordinate (from the top)
      // that differs sets that switch's level.
      const std::size_t levels = dims_.size();
      for (std::size_t d = 0; d < levels; ++d)
        if (a[d] != b[d]) return 2 * static_cast<int>(levels - d) - 1;
      return 0;
    }
    case network_kind::dragonfly: {
      // SimGrid's DragonflyZone::get_local_route, counted in routers crossed. Coordinates: group,
      // chassis, router (SimGrid's blade), node. Between groups the route goes to router
      // <target group> of its chassis, then to chassis 0, over the global link to router <source
      // group> of chassis 0 in the target group; then to the target's router, then its chassis.
      enum { group, chassis, router, node };
      if (a[group] == b[group] && a[chassis] == b[chassis] && a[router] == b[router]) return a[node] == b[node] ? 0 : 1;
      int links = 0;
      int at_chassis = a[chassis], at_router = a[router];
      if (a[group] != b[group]) {
        if (at_router != b[group]) ++links;
        if (at_chassis != 0) ++links;
        ++links;  // the global link
        at_chassis = 0;
        at_router = a[group];
      }
      // SimGrid takes the router reached over a link inside the chassis to be in chassis 0 (its
      // index leaves the chassis out), so a change of router in another chassis costs a link
      // between chassis as well. Reproduced, since the simulated machine is what hops must match.
      if (at_router != b[router]) {
        ++links;
        at_chassis = 0;
      }
      if (at_chassis != b[chassis]) ++links;
      return links + 1;
    }
  }
  return 0;
}

std::string physical_topology::str() const {
  if (network_ != network_kind::direct) {
    std::string out(network_ == network_kind::dragonfly ? "dragonfly" : "fattree");
    for (std::size_t d = 0; d < dims_.size(); ++d) out += (d == 0 ? ':' : 'x') + std::to_string(dims_[d]);
    return out + ':' + std::to_string(pes_per_node_);
  }
  // The first dimension's link names the kind; the others carry a suffix only where they differ.
  std::string out(kind_name(links_[0]));
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    out += d == 0 ? ':' : 'x';
    out += std::to_string(dims_[d]);
    if (links_[d] != links_[0]) out += link_suffix(links_[d]);
  }
  return out + ':' + std::to_string(pes_per_node_);
}

// ---- topology_manager -----------------------------------------------------------------------

topology_manager::topology_manager(physical_topology physical, int num_pes)
    : physical_(std::move(physical)) {
  if (num_pes < 1) detail::throw_invalid("number of PEs", num_pes, "at least 1");
  if (num_pes > physical_.capacity())
    detail::throw_invalid("number of PEs", num_pes,
                          detail::concat("at most ", physical_.capacity(), ", the PE slots of '",
                                         physical_.str(), "'"));
  std::vector<int> slots(static_cast<std::size_t>(num_pes));
  for (int pe = 0; pe < num_pes; ++pe) slots[static_cast<std::size_t>(pe)] = pe;
  place(std::move(slots));
}

topology_manager::topology_manager(const machine& m)
    : physical_(physical_topology::switched(m.num_nodes(), m.max_pes_per_node())) {
  std::vector<int> slots(static_cast<std::size_t>(m.num_pes()));
  for (int pe = 0; pe < m.num_pes(); ++pe)
    slots[static_cast<std::size_t>(pe)] = m.node_of(pe) * m.max_pes_per_node() + m.local_rank(pe);
  place(std::move(slots));
}

topology_manager topology_manager::for_job(const machine& m,
                                           const std::optional<physical_topology>& physical) {
  if (physical) return {*physical, m.num_pes()};
  if (auto from_env = physical_topology::from_environment()) return {std::move(*from_env), m.num_pes()};
  return topology_manager(m);
}

void topology_manager::place(std::vector<int> slot_of_pe) {
  slot_of_pe_ = std::move(slot_of_pe);
  const auto nd = static_cast<std::size_t>(physical_.ndims());
  pe_of_slot_.assign(static_cast<std::size_t>(physical_.capacity()), -1);
  node_coords_.resize(slot_of_pe_.size() * nd);
  for (std::size_t pe = 0; pe < slot_of_pe_.size(); ++pe) {
    pe_of_slot_[static_cast<std::size_t>(slot_of_pe_[pe])] = static_cast<int>(pe);
    // Row-major decode of the node index, last dimension fastest.
    int node = slot_of_pe_[pe] / physical_.pes_per_node();
    for (std::size_t d = nd; d-- > 0;) {
      node_coords_[pe * nd + d] = node % physical_.dims()[d];
      node /= physical_.dims()[d];
    }
  }
}

std::vector<int> topology_manager::coords(int pe) const {
  if (pe < 0 || pe >= num_pes()) throw_out_of_range("PE", pe, num_pes());
  const auto nd = static_cast<std::size_t>(physical_.ndims());
  const auto first = node_coords_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(pe) * nd);
  std::vector<int> out(first, first + static_cast<std::ptrdiff_t>(nd));
  out.push_back(slot_of_pe_[static_cast<std::size_t>(pe)] % physical_.pes_per_node());
  return out;
}

int topology_manager::pe_at(std::span<const int> coords) const {
  if (static_cast<int>(coords.size()) != ndims())
    detail::throw_invalid("number of coordinates", coords.size(),
                          detail::concat(ndims(), " (node dimensions, then the slot on the node)"));
  int slot = 0;
  for (int d = 0; d < ndims(); ++d) {
    const int size = d < physical_.ndims() ? physical_.dims()[static_cast<std::size_t>(d)]
                                           : physical_.pes_per_node();
    const int c = coords[static_cast<std::size_t>(d)];
    if (c < 0 || c >= size)
      detail::throw_invalid(detail::concat("coordinate ", d), c, detail::concat("0..", size - 1));
    slot = slot * size + c;
  }
  return pe_of_slot_[static_cast<std::size_t>(slot)];
}

int topology_manager::hops(int a, int b) const {
  if (a < 0 || a >= num_pes()) throw_out_of_range("PE", a, num_pes());
  if (b < 0 || b >= num_pes()) throw_out_of_range("PE", b, num_pes());
  // PEs of one node have equal node coordinates, so their hops are 0 without a special case.
  const auto nd = static_cast<std::size_t>(physical_.ndims());
  return physical_.node_hops({node_coords_.data() + static_cast<std::size_t>(a) * nd, nd},
                             {node_coords_.data() + static_cast<std::size_t>(b) * nd, nd});
}

int topology_manager::nearest(int pe, std::span<const int> candidates) const {
  if (candidates.empty())
    detail::throw_invalid("candidate PEs for nearest", "an empty list", "at least one PE");
  return pick_closest(pe, candidates);
}

int topology_manager::pick_closest(int pe, std::span<const int> candidates) const {
  if (candidates.empty())
    detail::throw_invalid("candidate PEs for pick_closest", "an empty list", "at least one PE");
  int best = candidates[0];
  int best_hops = hops(pe, best);
  for (const int c : candidates.subspan(1)) {
    const int h = hops(pe, c);
    if (h < best_hops) {
      best = c;
      best_hops = h;
    }
  }
  return best;
}

std::vector<int> topology_manager::sort_by_hops(int pe, std::span<const int> pes) const {
  std::vector<std::pair<int, int>> keyed;  // (hops, pe): hops computed once per PE
  keyed.reserve(pes.size());
  for (const int p : pes) keyed.emplace_back(hops(pe, p), p);
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<int> out;
  out.reserve(keyed.size());
  for (const auto& entry : keyed) out.push_back(entry.second);
  return out;
}

int topology_manager::longest_dimension() const noexcept {
  const auto dims = physical_.dims();
  return static_cast<int>(std::max_element(dims.begin(), dims.end()) - dims.begin());  // first of equals
}

std::vector<int> topology_manager::sub_partition(int parts, int index) const {
  const int split = longest_dimension();
  const int length = physical_.dims()[static_cast<std::size_t>(split)];
  if (parts < 1 || length % parts != 0)
    detail::throw_invalid("number of sub-partitions", parts,
                          detail::concat("a divisor of ", length, ", the longest dimension (",
                                         split, ") of '", physical_.str(), "'"));
  if (index < 0 || index >= parts)
    detail::throw_invalid("sub-partition index", index, detail::concat("0..", parts - 1));

  // Walk the sub-box row-major (node coordinates, then the slot), the split dimension restricted
  // to [index * length / parts, (index + 1) * length / parts).
  const int nd = physical_.ndims();
  std::vector<int> lo(static_cast<std::size_t>(nd + 1), 0), hi(static_cast<std::size_t>(nd + 1));
  for (int d = 0; d < nd; ++d) hi[static_cast<std::size_t>(d)] = physical_.dims()[static_cast<std::size_t>(d)];
  hi[static_cast<std::size_t>(nd)] = physical_.pes_per_node();
  lo[static_cast<std::size_t>(split)] = index * (length / parts);
  hi[static_cast<std::size_t>(split)] = (index + 1) * (length / parts);

  std::vector<int> pes;
  std::vector<int> c = lo;
  for (;;) {
    if (const int pe = pe_at(c); pe >= 0) pes.push_back(pe);
    int d = nd;  // odometer: the slot varies fastest
    for (; d >= 0; --d) {
      auto& digit = c[static_cast<std::size_t>(d)];
      if (++digit < hi[static_cast<std::size_t>(d)]) break;
      digit = lo[static_cast<std::size_t>(d)];
    }
    if (d < 0) return pes;
  }
}

// ---- minimal_routing_grids ------------------------------------------------------------------

std::vector<std::vector<int>> minimal_routing_grids(const physical_topology& physical) {
  // Items in routing order: the node dimensions, then the PEs of a node. Size-1 items change no
  // grid, so they are left out before enumerating the 2^(n-1) ways to cut n items into runs.
  std::vector<int> items;
  for (const int size : physical.dims())
    if (size > 1) items.push_back(size);
  const bool pe_item = physical.pes_per_node() > 1;
  if (pe_item) items.push_back(physical.pes_per_node());
  if (items.empty()) return {{1}};
  if (items.size() > 20)
    detail::throw_invalid("dimensions of size > 1 in the physical topology", items.size(),
                          "at most 20 to enumerate grids");

  std::vector<std::vector<int>> grids;
  const std::size_t cuts = items.size() - 1;  // cut bit i: a new dimension starts after item i
  for (std::uint32_t mask = 0; mask < (1u << cuts); ++mask) {
    std::vector<int> dims{items[0]};
    for (std::size_t i = 1; i < items.size(); ++i) {
      if (mask & (1u << (i - 1))) dims.push_back(items[i]);
      else dims.back() *= items[i];
    }
    grids.push_back(dims);
    // The PEs of a node alone in the last dimension may also be split in two: another intra-node
    // step never lengthens a network route (thesis 3.4.4).
    const bool pes_alone = pe_item && (items.size() == 1 || (mask & (1u << (cuts - 1))));
    if (!pes_alone) continue;
    const int ppn = physical.pes_per_node();
    for (int a = 2; a * 2 <= ppn; ++a) {
      if (ppn % a != 0) continue;
      std::vector<int> split_dims(dims.begin(), dims.end() - 1);
      split_dims.push_back(a);
      split_dims.push_back(ppn / a);
      grids.push_back(std::move(split_dims));
    }
  }
  std::sort(grids.begin(), grids.end(), [](const auto& x, const auto& y) {
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  grids.erase(std::unique(grids.begin(), grids.end()), grids.end());
  return grids;
}

}  // namespace transit
