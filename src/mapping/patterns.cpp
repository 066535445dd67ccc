#include "transit/mapping/patterns.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <numeric>

#include "mapping_detail.hpp"
#include "transit/detail/core/error.hpp"

namespace transit {
namespace {

std::string join_dims(std::span<const int> dims) {
  std::string out;
  for (const int d : dims) {
    if (!out.empty()) out += 'x';
    out += std::to_string(d);
  }
  return out;
}

}  // namespace

comm_pattern stencil_pattern(std::span<const int> dims, std::uint64_t bytes) {
  if (dims.empty()) detail::throw_invalid("stencil dimensions", "none", "at least one");
  std::int64_t total = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 1) detail::throw_invalid(detail::concat("stencil dimension ", d), dims[d], "at least 1");
    total *= dims[d];
    if (total > INT_MAX) detail::throw_invalid("stencil objects", total, "at most INT_MAX");
  }
  comm_pattern p;
  p.name = detail::concat("stencil", dims.size(), "d ", join_dims(dims));
  p.num_objects = static_cast<int>(total);
  for (int object = 0; object < p.num_objects; ++object) {
    int stride = 1;
    for (std::size_t d = dims.size(); d-- > 0;) {
      const int c = (object / stride) % dims[d];
      if (dims[d] > 1) p.edges.push_back({object, object + (((c + 1) % dims[d]) - c) * stride, bytes});
      stride *= dims[d];
    }
  }
  return p;
}

comm_pattern random_pattern(int num_objects, int degree, std::uint64_t max_bytes, std::uint64_t seed) {
  if (num_objects < 2) detail::throw_invalid("objects of a random pattern", num_objects, "at least 2");
  if (degree < 1) detail::throw_invalid("degree of a random pattern", degree, "at least 1");
  if (max_bytes < 1) detail::throw_invalid("bytes of a random pattern", max_bytes, "at least 1");
  comm_pattern p;
  p.name = detail::concat("random ", num_objects, " degree ", degree);
  p.num_objects = num_objects;
  detail::splitmix rng(seed);
  for (int object = 0; object < num_objects; ++object) {
    for (int k = 0; k < degree; ++k) {
      // Another object: draw from the num_objects - 1 others.
      auto other = static_cast<int>(rng.below(static_cast<std::uint64_t>(num_objects - 1)));
      if (other >= object) ++other;
      p.edges.push_back({object, other, 1 + rng.below(max_bytes)});
    }
  }
  return p;
}

// ---- OpenAtom-like pattern ------------------------------------------------------------------

openatom_layout::openatom_layout(const openatom_sizes& sizes) : sizes_(sizes) {
  if (sizes.states < 1) detail::throw_invalid("OpenAtom states", sizes.states, "at least 1");
  if (sizes.planes < 1) detail::throw_invalid("OpenAtom planes", sizes.planes, "at least 1");
  if (sizes.state_block < 1) detail::throw_invalid("OpenAtom state block", sizes.state_block, "at least 1");
  if (sizes.plane_bytes < static_cast<std::uint64_t>(sizes.planes))
    detail::throw_invalid("OpenAtom plane bytes", sizes.plane_bytes,
                          detail::concat("at least the number of planes (", sizes.planes, ")"));
  blocks_ = (sizes.states + sizes.state_block - 1) / sizes.state_block;
  const std::int64_t per_array = std::int64_t{sizes.states} * sizes.planes;
  const std::int64_t total = 2 * per_array + 2 * sizes.planes + std::int64_t{blocks_} * blocks_ * sizes.planes;
  if (total > INT_MAX) detail::throw_invalid("OpenAtom objects", total, "at most INT_MAX");
  realspace_ = static_cast<int>(per_array);
  density_ = static_cast<int>(2 * per_array);
  pairs_ = density_ + 2 * sizes.planes;
}

comm_pattern openatom_pattern(const openatom_sizes& sizes) {
  const openatom_layout l(sizes);
  const int S = sizes.states, P = sizes.planes, B = l.blocks();
  const std::uint64_t plane = sizes.plane_bytes, piece = sizes.plane_bytes / static_cast<std::uint64_t>(P);
  comm_pattern p;
  p.name = detail::concat("openatom ", S, "x", P);
  p.num_objects = l.num_objects();
  for (int s = 0; s < S; ++s)  // transposes: all planes of G(s, *) with all planes of R(s, *)
    for (int g = 0; g < P; ++g)
      for (int r = 0; r < P; ++r) {
        p.edges.push_back({l.gspace(s, g), l.realspace(s, r), piece});
        p.edges.push_back({l.realspace(s, r), l.gspace(s, g), piece});
      }
  for (int s = 0; s < S; ++s)  // density contributions and the potential back, plane-wise
    for (int q = 0; q < P; ++q) {
      p.edges.push_back({l.realspace(s, q), l.density_real(q), plane});
      p.edges.push_back({l.density_real(q), l.realspace(s, q), plane});
    }
  for (int a = 0; a < P; ++a)  // density transposes between RhoR and RhoG
    for (int b = 0; b < P; ++b) {
      p.edges.push_back({l.density_real(a), l.density_g(b), piece});
      p.edges.push_back({l.density_g(b), l.density_real(a), piece});
    }
  for (int q = 0; q < P; ++q)  // pair calculators: multicast of G's plane, reduction back
    for (int i = 0; i < B; ++i)
      for (int j = 0; j < B; ++j)
        for (int s = 0; s < S; ++s) {
          const int block = s / sizes.state_block;
          if (block != i && block != j) continue;
          p.edges.push_back({l.gspace(s, q), l.pair(i, j, q), plane});
          p.edges.push_back({l.pair(i, j, q), l.gspace(s, q), plane});
        }
  return p;
}

namespace {

// Placement with a per-PE cap: the wanted PE if it has room, else the closest PE that has.
class placer {
 public:
  placer(const topology_manager& topo, int num_objects)
      : topo_(topo), cap_(detail::objects_per_pe_cap(num_objects, topo.num_pes())),
        load_(static_cast<std::size_t>(topo.num_pes()), 0), pe_of_(static_cast<std::size_t>(num_objects), -1) {}

  bool has_room(int pe) const { return load_[static_cast<std::size_t>(pe)] < cap_; }
  void place(int object, int pe, int avoid = -1) {
    if (!has_room(pe) || pe == avoid) {
      std::vector<int> free;
      for (int q = 0; q < topo_.num_pes(); ++q)
        if (has_room(q) && q != avoid) free.push_back(q);
      if (free.empty())  // only `avoid` has room left
        for (int q = 0; q < topo_.num_pes(); ++q)
          if (has_room(q)) free.push_back(q);
      TRANSIT_ASSERT(!free.empty(), "the cap leaves room for every object");
      pe = topo_.pick_closest(pe, free);
    }
    pe_of_[static_cast<std::size_t>(object)] = pe;
    ++load_[static_cast<std::size_t>(pe)];
  }
  int pe_of(int object) const { return pe_of_[static_cast<std::size_t>(object)]; }
  std::vector<int> result() && { return std::move(pe_of_); }

 private:
  const topology_manager& topo_;
  int cap_;
  std::vector<int> load_;
  std::vector<int> pe_of_;
};

// The PE of `pes` (a multiset) with the fewest total hops to all of them: a centroid that exists.
int medoid(const topology_manager& topo, std::span<const int> pes) {
  std::vector<int> distinct(pes.begin(), pes.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  int best = distinct.front();
  long best_sum = std::numeric_limits<long>::max();
  for (const int c : distinct) {
    long sum = 0;
    for (const int pe : pes) sum += topo.hops(c, pe);
    if (sum < best_sum) {
      best_sum = sum;
      best = c;
    }
  }
  return best;
}

// The job's PEs cut into `count` prisms along the longest node dimension: lines along it, taken in
// snake order of the other coordinates, then cut into `count` runs of near-equal size. Each prism
// lists its PEs by coordinate along the long axis (then line, then slot).
std::vector<std::vector<int>> prisms(const topology_manager& topo, int count) {
  const physical_topology& phys = topo.physical();
  const int nd = phys.ndims();
  const int axis = topo.longest_dimension();
  std::vector<int> others;
  for (int d = 0; d < nd; ++d)
    if (d != axis) others.push_back(d);
  int lines = 1;
  for (const int d : others) lines *= phys.dims()[static_cast<std::size_t>(d)];

  struct slot_pe { int along; int pe; };
  std::vector<slot_pe> order;  // PEs line by line
  std::vector<int> coords(static_cast<std::size_t>(nd + 1));
  for (int line = 0; line < lines; ++line) {
    // Boustrophedon: a coordinate runs backwards when the coordinates outside it sum to an odd number.
    int rest = line, outer_sum = 0;
    std::vector<int> digits(others.size());
    for (std::size_t k = others.size(); k-- > 0;) {
      const int size = phys.dims()[static_cast<std::size_t>(others[k])];
      digits[k] = rest % size;
      rest /= size;
    }
    for (std::size_t k = 0; k < others.size(); ++k) {
      const int size = phys.dims()[static_cast<std::size_t>(others[k])];
      const int c = outer_sum % 2 == 1 ? size - 1 - digits[k] : digits[k];
      coords[static_cast<std::size_t>(others[k])] = c;
      outer_sum += digits[k];
    }
    for (int along = 0; along < phys.dims()[static_cast<std::size_t>(axis)]; ++along) {
      coords[static_cast<std::size_t>(axis)] = along;
      for (int slot = 0; slot < phys.pes_per_node(); ++slot) {
        coords[static_cast<std::size_t>(nd)] = slot;
        if (const int pe = topo.pe_at(coords); pe >= 0) order.push_back({along, pe});
      }
    }
  }
  const auto q = static_cast<std::int64_t>(order.size());
  std::vector<std::vector<int>> out(static_cast<std::size_t>(count));
  for (int p = 0; p < count; ++p) {
    auto first = static_cast<std::size_t>(p * q / count), last = static_cast<std::size_t>((p + 1) * q / count);
    if (first == last) last = first + 1;  // more prisms than PEs: prisms share PEs
    std::vector<slot_pe> run(order.begin() + static_cast<std::ptrdiff_t>(first),
                             order.begin() + static_cast<std::ptrdiff_t>(std::min(last, order.size())));
    std::stable_sort(run.begin(), run.end(), [](const slot_pe& x, const slot_pe& y) { return x.along < y.along; });
    for (const slot_pe& s : run) out[static_cast<std::size_t>(p)].push_back(s.pe);
  }
  return out;
}

}  // namespace

std::vector<int> openatom_prism_mapping(const topology_manager& topo, const openatom_sizes& sizes) {
  const openatom_layout l(sizes);
  const int S = sizes.states, P = sizes.planes, B = l.blocks();
  placer place(topo, l.num_objects());

  // GSpace: plane p in prism p, states in increasing order along the long axis.
  const auto prism = prisms(topo, P);
  for (int p = 0; p < P; ++p) {
    const auto& pes = prism[static_cast<std::size_t>(p)];
    const auto k = static_cast<std::int64_t>(pes.size());
    for (int s = 0; s < S; ++s) place.place(l.gspace(s, p), pes[static_cast<std::size_t>(s * k / S)]);
  }

  // RealSpace by Algorithm 1: R(s, *) on the PEs of G(s, *), at most ceil(S x P / PEs) per PE;
  // each plane on the first PE of the list after sorting it by hops from its first PE.
  const int rs_per_pe = detail::objects_per_pe_cap(S * P, topo.num_pes());
  std::vector<int> rs_load(static_cast<std::size_t>(topo.num_pes()), 0);
  for (int s = 0; s < S; ++s) {
    std::vector<int> plist;
    for (int p = 0; p < P; ++p) {
      const int pe = place.pe_of(l.gspace(s, p));
      if (std::find(plist.begin(), plist.end(), pe) == plist.end()) plist.push_back(pe);
    }
    const int anchor = plist.front();
    for (int p = 0; p < P; ++p) {
      std::erase_if(plist, [&](int pe) { return rs_load[static_cast<std::size_t>(pe)] >= rs_per_pe || !place.has_room(pe); });
      if (!plist.empty()) plist = topo.sort_by_hops(plist.front(), plist);
      const int wanted = plist.empty() ? anchor : plist.front();
      place.place(l.realspace(s, p), wanted);
      ++rs_load[static_cast<std::size_t>(place.pe_of(l.realspace(s, p)))];
    }
  }

  // Density: RhoR(p) near the middle of R(*, p), RhoG(p) beside it on another PE.
  for (int p = 0; p < P; ++p) {
    std::vector<int> pes;
    for (int s = 0; s < S; ++s) pes.push_back(place.pe_of(l.realspace(s, p)));
    place.place(l.density_real(p), medoid(topo, pes));
    const int rho_r = place.pe_of(l.density_real(p));
    place.place(l.density_g(p), rho_r, rho_r);
  }

  // Pair calculators: P(i, j, p) near the middle of G(block i, p) and G(block j, p).
  for (int p = 0; p < P; ++p)
    for (int i = 0; i < B; ++i)
      for (int j = 0; j < B; ++j) {
        std::vector<int> pes;
        for (int s = 0; s < S; ++s) {
          const int block = s / sizes.state_block;
          if (block == i || block == j) pes.push_back(place.pe_of(l.gspace(s, p)));
        }
        place.place(l.pair(i, j, p), medoid(topo, pes));
      }
  return std::move(place).result();
}

}  // namespace transit
