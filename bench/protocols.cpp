// Multi-region transfers (protocols/): `transit bench vector` (one (S, N) point per protocol) and
// `transit bench halo` (3-D halo exchange, faces with put_strided and put_regions).
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench.hpp"
#include "transit/protocols/calibrate.hpp"

namespace transit::bench {
namespace {

constexpr std::array<transfer_protocol, 4> every_protocol = {transfer_protocol::blocking, transfer_protocol::pipelined,
                                                             transfer_protocol::packed, transfer_protocol::automatic};

/// --protocol: one of every_protocol, or every one of them ("all").
std::vector<transfer_protocol> protocols_of(const std::string& name) {
  if (name == "all") return {every_protocol.begin(), every_protocol.end()};
  return {parse_transfer_protocol(name)};
}

/// --protocol, which vector and halo take alike, bound to `protocol` (default "all").
apps::option_spec protocol_option(std::string& protocol) {
  return {.names = "--protocol",
          .help = "blocking, pipelined, packed, automatic or all (default)",
          .target = &protocol,
          .check = apps::one_of_names{{"blocking", "pipelined", "packed", "automatic", "all"}},
          .type_name = "P"};
}

// ---- transit bench vector ----

struct vector_params {
  std::size_t region_bytes = 64;
  std::size_t regions = 16;
  std::string protocol = "all";
  std::string target = "auto";  // intra, inter, auto: inter when there are two nodes
  int iterations = 20;
  bool sweep = false;  // every (S, N) of the calibration grid up to the --max-* bounds
  std::size_t max_region_bytes = 64 * 1024, max_regions = 1024, max_transfer_bytes = std::size_t{1} << 20;
} vparams;

/// --sweep: every point of the grid with every protocol, one record each; then a summary record
/// ("summary": true) with, over the grid, the sum of times per protocol and how often automatic
/// took the fastest fixed protocol (the bar).
measurement run_vector_sweep(context& ctx, bool same_node, int target, vector_slots slots) {
  std::size_t largest = 0;
  for (std::size_t s = 8; s <= vparams.max_region_bytes; s *= 2)
    for (std::size_t n = 1; n <= vparams.max_regions && s * n <= vparams.max_transfer_bytes; n *= 2)
      largest = std::max(largest, vector_block_bytes(s, n, slots.slots));
  global_array<std::uint8_t> a(ctx, largest * static_cast<std::size_t>(ctx.size()));
  measurement m;
  m.verified = true;
  std::array<double, 4> sums{};
  int points = 0, automatic_fastest = 0, automatic_close = 0, automatic_same_transfer = 0;
  for (std::size_t s = 8; s <= vparams.max_region_bytes; s *= 2)
    for (std::size_t n = 1; n <= vparams.max_regions && s * n <= vparams.max_transfer_bytes; n *= 2) {
      // Every protocol interleaved at this point: the fixed ones are compared under one load.
      const auto v = time_vector_protocols(
          ctx, a, vector_point{s, n, vparams.iterations, transfer_protocol::automatic, target, slots.slot}, every_protocol);
      std::array<double, 4> t{};
      std::array<bool, 4> verified{};
      for (std::size_t i = 0; i < every_protocol.size(); ++i) {
        verified[i] = all_of(ctx, v[i].verified);  // every PE's verdict: the record says it
        m.verified = m.verified && verified[i];
        t[i] = v[i].seconds;
        sums[i] += v[i].seconds;
      }
      const transfer_protocol chosen = v[3].chosen;
      const protocol_point measured{s, n, t[0], t[1], t[2]};
      const transfer_protocol fastest = measured.fastest();
      ++points;
      automatic_fastest += chosen == fastest ? 1 : 0;
      // Secondary: the chosen protocol's time within 3% of the fastest (the bar counts only the fastest).
      automatic_close += measured.seconds(chosen) <= 1.03 * measured.seconds(fastest) ? 1 : 0;
      // Secondary: regions above the packed limit make packed and pipelined one transfer (the same
      // code runs), so either counts as the fastest when the fastest is either.
      const bool one_transfer = s > a.packed_region_limit();
      const auto sends_per_region = [](transfer_protocol p) {
        return p == transfer_protocol::pipelined || p == transfer_protocol::packed;
      };
      automatic_same_transfer +=
          chosen == fastest || (one_transfer && sends_per_region(chosen) && sends_per_region(fastest)) ? 1 : 0;
      // One record per protocol at this point (the contract's one object per configuration).
      for (std::size_t i = 0; i < every_protocol.size(); ++i) {
        const transfer_protocol p = every_protocol[i];
        m.variants.push_back({{"region_bytes", s},
                              {"regions", n},
                              {"protocol", to_string(p)},
                              {"chosen", to_string(p == transfer_protocol::automatic ? chosen : p)},
                              {"seconds", t[i]},
                              {"items_per_second_per_pe", t[i] > 0 ? static_cast<double>(n) / t[i] : 0.0},
                              {"verified", verified[i]},
                              {"fastest", to_string(fastest)},
                              {"packed_is_pipelined", one_transfer}});
      }
    }
  m.seconds = sums[3];
  m.items_per_pe = points;
  m.extra["target"] = same_node ? "intra" : "inter";
  m.extra["iterations"] = vparams.iterations;
  m.extra["packed_region_limit"] = a.packed_region_limit();
  m.extra["profile"] = protocol_profile_in_use(ctx).description;
  // The sweep's summary, its own record after the points', marked "summary": true.
  m.variants.push_back(
      {{"summary", true},
       {"protocol", "all"},
       {"chosen", "per point"},
       {"seconds", sums[3]},  // automatic's total over the grid
       {"verified", m.verified},
       {"points", points},
       {"sum_seconds", {{"blocking", sums[0]}, {"pipelined", sums[1]}, {"packed", sums[2]}, {"automatic", sums[3]}}},
       {"automatic_picked_fastest", points > 0 ? static_cast<double>(automatic_fastest) / points : 0.0},
       {"automatic_picked_within_3pct", points > 0 ? static_cast<double>(automatic_close) / points : 0.0},
       {"automatic_picked_fastest_transfer", points > 0 ? static_cast<double>(automatic_same_transfer) / points : 0.0}});
  return m;
}

measurement run_vector(context& ctx, const setup&) {
  const bool same_node = vparams.target == "intra" || (vparams.target == "auto" && ctx.machine().num_nodes() < 2);
  int target = vector_partner(ctx, ctx.rank(), same_node);
  vector_slots slots = vector_slot(ctx, ctx.rank(), same_node);
  if (target < 0) {  // one PE (or one per node): to itself
    target = ctx.rank();
    slots = {};
  }
  if (vparams.sweep) return run_vector_sweep(ctx, same_node, target, slots);
  const std::size_t per_pe = vector_block_bytes(vparams.region_bytes, vparams.regions, slots.slots);
  global_array<std::uint8_t> a(ctx, per_pe * static_cast<std::size_t>(ctx.size()));
  // Every protocol asked for, interleaved (one load falls on all of them alike); one record each,
  // as the contract's "one JSON object per measured configuration" asks.
  const std::vector<transfer_protocol> protocols = protocols_of(vparams.protocol);
  const auto timings = time_vector_protocols(
      ctx, a, vector_point{vparams.region_bytes, vparams.regions, vparams.iterations, transfer_protocol::automatic,
                           target, slots.slot},
      protocols);
  measurement m;
  m.verified = true;
  m.items_per_pe = static_cast<double>(vparams.regions);
  m.extra["region_bytes"] = vparams.region_bytes;
  m.extra["regions"] = vparams.regions;
  m.extra["target"] = same_node ? "intra" : "inter";
  m.extra["iterations"] = vparams.iterations;
  m.extra["profile"] = protocol_profile_in_use(ctx).description;
  double best_fixed = 0;
  for (std::size_t i = 0; i < protocols.size(); ++i) {
    const transfer_protocol p = protocols[i];
    const vector_timing& t = timings[i];
    const bool verified = all_of(ctx, t.verified);
    m.verified = m.verified && verified;
    m.seconds = t.seconds;  // the last one: automatic under "all"
    if (p != transfer_protocol::automatic && (best_fixed == 0 || t.seconds < best_fixed)) best_fixed = t.seconds;
    m.variants.push_back({{"protocol", to_string(p)},
                          {"chosen", to_string(p == transfer_protocol::automatic ? t.chosen : p)},
                          {"seconds", t.seconds},
                          {"items_per_second_per_pe", t.seconds > 0 ? m.items_per_pe / t.seconds : 0.0},
                          {"verified", verified}});
  }
  // The text output for people: one line per protocol, against the fastest fixed one.
  char line[160];
  std::snprintf(line, sizeof line, "vector S=%zu N=%zu (%s partner), %d PEs, median of %d\n", vparams.region_bytes,
                vparams.regions, same_node ? "intra-node" : "inter-node", ctx.size(), vparams.iterations);
  m.table = line;
  std::snprintf(line, sizeof line, "%-10s %-10s %12s %8s  %s\n", "protocol", "chosen", "us/transfer", "vs best",
                "verified");
  m.table += line;
  for (const json& v : m.variants) {
    const double seconds = v["seconds"].get<double>();
    std::snprintf(line, sizeof line, "%-10s %-10s %12.2f %8.2f  %s\n", v["protocol"].get<std::string>().c_str(),
                  v["chosen"].get<std::string>().c_str(), seconds * 1e6, best_fixed > 0 ? seconds / best_fixed : 0.0,
                  v["verified"].get<bool>() ? "yes" : "NO");
    m.table += line;
  }
  return m;
}

const bool vector_registered = register_kernel({
    .name = "vector",
    .summary = "multi-region put (then fence) to one target per PE with each protocol (Iancu and Hofmeyr)",
    .item_sizes = {1},
    .run = run_vector,
    .own_options =
        {
          integer_option("--region-bytes", "bytes per region, S (default 64)",
                         &vparams.region_bytes, 1, std::int64_t{1} << 24, "S"),
          integer_option("--regions", "regions per transfer, N (default 16)",
                         &vparams.regions, 1, std::int64_t{1} << 20, "N"),
          protocol_option(vparams.protocol),
          {.names = "--target",
           .help = "intra, inter or auto (default: inter when there are nodes)",
           .target = &vparams.target,
           .check = apps::one_of_names{{"intra", "inter", "auto"}},
           .type_name = "T"},
          integer_option("--iterations", "timed transfers, median taken (default 20)",
                         &vparams.iterations, 1, 1'000'000, "N"),
          {.names = "--sweep",
           .help = "every S = 8..--max-region-bytes, N = 1..--max-regions (powers of two) with every protocol",
           .target = &vparams.sweep,
           .kind = apps::option_kind::repeatable_flag},
          integer_option("--max-region-bytes", "--sweep: largest S (default 65536)",
                         &vparams.max_region_bytes, 8, std::int64_t{1} << 24, "S"),
          integer_option("--max-regions", "--sweep: largest N (default 1024)",
                         &vparams.max_regions, 1, std::int64_t{1} << 16, "N"),
          integer_option("--max-transfer-bytes", "--sweep: leave out points with S x N above (default 1048576)",
                         &vparams.max_transfer_bytes, 8, std::int64_t{1} << 30, "B"),
        },
    .default_items = [] { return std::uint64_t{1}; },
});

// ---- transit bench halo ----

struct halo_params {
  int edge = 16;  // interior elements per side of each PE's block
  int steps = 20;  // --steps (the common bench option), when not given
  std::string protocol = "all";
} hparams;

/// PEs on a 3-D torus of balanced dimensions; each holds an (E+2)^3 block of doubles, its
/// interior [1, E]^3 and one ghost layer, row-major [x][y][z].
struct halo_grid {
  std::array<int, 3> dims{};
  std::array<int, 3> me{};
  std::size_t side;  // E + 2
  std::size_t cells;

  halo_grid(const context& ctx, int edge) : side(static_cast<std::size_t>(edge) + 2), cells(side * side * side) {
    // P = dims[0] x dims[1] x dims[2] exactly: prime factors, largest first, to the smallest dimension.
    dims = {1, 1, 1};
    std::vector<int> factors;
    for (int n = ctx.size(), f = 2; n > 1;) {
      if (n % f == 0) {
        factors.push_back(f);
        n /= f;
      } else {
        ++f;
      }
    }
    for (auto it = factors.rbegin(); it != factors.rend(); ++it) *std::min_element(dims.begin(), dims.end()) *= *it;
    int r = ctx.rank();
    for (int d = 2; d >= 0; --d) {
      me[static_cast<std::size_t>(d)] = r % dims[static_cast<std::size_t>(d)];
      r /= dims[static_cast<std::size_t>(d)];
    }
  }
  int neighbour(int dim, int direction) const {
    auto c = me;
    const auto d = static_cast<std::size_t>(dim);
    c[d] = (c[d] + direction + dims[d]) % dims[d];
    return (c[0] * dims[1] + c[1]) * dims[2] + c[2];
  }
  std::size_t at(std::size_t x, std::size_t y, std::size_t z) const { return (x * side + y) * side + z; }
};

double cell_value(int pe, std::size_t cell) { return pe * 1e7 + static_cast<double>(cell); }

measurement run_halo(context& ctx, const setup& run_setup) {
  const int steps = run_setup.opt.steps > 0 ? run_setup.opt.steps : hparams.steps;
  const halo_grid g(ctx, hparams.edge);
  const std::size_t e = static_cast<std::size_t>(hparams.edge), s = g.side;
  global_array<double> a(ctx, g.cells * static_cast<std::size_t>(ctx.size()));
  for (std::size_t x = 1; x <= e; ++x)
    for (std::size_t y = 1; y <= e; ++y)
      for (std::size_t z = 1; z <= e; ++z) a.local()[g.at(x, y, z)] = cell_value(ctx.rank(), g.at(x, y, z));
  a.sync();
  const auto base = [&](int pe) { return static_cast<std::size_t>(pe) * g.cells; };
  // The six faces: my interior layer `from` goes to the neighbour's ghost layer `to`.
  std::vector<double> face(e * e);
  std::vector<region> z_regions(e * e);
  const auto exchange = [&](transfer_protocol p) {
    for (int direction : {-1, 1}) {
      const std::size_t from = direction > 0 ? e : 1, to = direction > 0 ? 0 : e + 1;
      // x: rows of E contiguous z at stride side (y = 1..E): put_strided.
      int n = g.neighbour(0, direction);
      for (std::size_t y = 0; y < e; ++y)
        for (std::size_t z = 0; z < e; ++z) face[y * e + z] = a.local()[g.at(from, y + 1, z + 1)];
      a.put_strided(base(n) + g.at(to, 1, 1), e, s, e, face, p);
      // y: rows of E contiguous z at stride side^2 (x = 1..E): put_strided.
      n = g.neighbour(1, direction);
      for (std::size_t x = 0; x < e; ++x)
        for (std::size_t z = 0; z < e; ++z) face[x * e + z] = a.local()[g.at(x + 1, from, z + 1)];
      a.put_strided(base(n) + g.at(1, to, 1), e, s * s, e, face, p);
      // z: single elements on a 2-D lattice: E^2 one-element regions.
      n = g.neighbour(2, direction);
      for (std::size_t x = 0; x < e; ++x)
        for (std::size_t y = 0; y < e; ++y) {
          face[x * e + y] = a.local()[g.at(x + 1, y + 1, from)];
          z_regions[x * e + y] = region{base(n) + g.at(x + 1, y + 1, to), 1};
        }
      a.put_regions(z_regions, face, p);
    }
    a.sync();
  };
  measurement m;
  m.verified = true;
  const std::vector<transfer_protocol> protocols = protocols_of(hparams.protocol);
  // Interleaved as bench vector's points are: the steps of each protocol in `rounds` slices, the
  // order rotated by one per round, and the median slice taken, so a busy stretch of the shared
  // machine falls on every protocol alike instead of on the one measured then.
  const int rounds = std::min(steps, 10);
  std::vector<std::vector<double>> slices(protocols.size());
  for (const auto p : protocols) exchange(p);  // warm-up
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < protocols.size(); ++j) {
      const std::size_t q = (static_cast<std::size_t>(r) + j) % protocols.size();
      const int slice = steps / rounds + (r < steps % rounds ? 1 : 0);
      slices[q].push_back(measure(ctx, [&] {
                            for (int step = 0; step < slice; ++step) exchange(protocols[q]);
                          }) /
                          slice);
    }
  for (std::size_t q = 0; q < protocols.size(); ++q) {
    const transfer_protocol p = protocols[q];
    const double seconds = median(slices[q]);
    // This protocol's own exchange into cleared ghost layers: every ghost face then holds the
    // neighbour's interior layer.
    a.sync();
    for (std::size_t x = 0; x < s; ++x)
      for (std::size_t y = 0; y < s; ++y)
        for (std::size_t z = 0; z < s; ++z)
          if (x == 0 || y == 0 || z == 0 || x == e + 1 || y == e + 1 || z == e + 1) a.local()[g.at(x, y, z)] = -1;
    a.sync();
    exchange(p);
    bool ok = true;
    for (int dim = 0; dim < 3; ++dim)
      for (int direction : {-1, 1}) {
        const int from_pe = g.neighbour(dim, -direction);  // who sent into my ghost layer on this side
        const std::size_t to = direction > 0 ? 0 : e + 1, from = direction > 0 ? e : 1;
        for (std::size_t i = 1; i <= e; ++i)
          for (std::size_t j = 1; j <= e; ++j) {
            std::array<std::size_t, 3> ghost{i, j, 0}, source{i, j, 0};  // (x, y, z) with `dim` set below
            if (dim == 0) ghost = {to, i, j}, source = {from, i, j};
            if (dim == 1) ghost = {i, to, j}, source = {i, from, j};
            if (dim == 2) ghost = {i, j, to}, source = {i, j, from};
            ok = ok && a.local()[g.at(ghost[0], ghost[1], ghost[2])] ==
                           cell_value(from_pe, g.at(source[0], source[1], source[2]));
          }
      }
    const bool verified = all_of(ctx, ok);
    m.verified = m.verified && verified;
    m.seconds = seconds;
    // What automatic takes for the faces (x face, to the +x neighbour), for the record.
    const std::string chosen(to_string(p == transfer_protocol::automatic
                                           ? a.chosen_protocol(e * sizeof(double), e, g.neighbour(0, 1))
                                           : p));
    // One record per protocol (the contract's one JSON object per measured configuration).
    m.variants.push_back({{"protocol", to_string(p)},
                          {"chosen", chosen},
                          {"chosen_x_face", chosen},
                          {"seconds", seconds},
                          {"seconds_per_step", seconds},
                          {"items_per_second_per_pe", seconds > 0 ? static_cast<double>(6 * e * e) / seconds : 0.0},
                          {"verified", verified}});
  }
  m.items_per_pe = static_cast<double>(6 * e * e);
  m.extra["edge"] = hparams.edge;
  m.extra["pe_grid"] = std::to_string(g.dims[0]) + "x" + std::to_string(g.dims[1]) + "x" + std::to_string(g.dims[2]);
  m.extra["steps"] = steps;
  m.extra["profile"] = protocol_profile_in_use(ctx).description;
  return m;
}

const bool halo_registered = register_kernel({
    .name = "halo",
    .summary = "3-D halo exchange: faces with put_strided and put_regions every step, per protocol",
    .item_sizes = {sizeof(double)},
    .run = run_halo,
    .own_options =
        {
          integer_option("--edge", "interior elements per side of a PE's block (default 16)",
                         &hparams.edge, 1, 512, "E"),
          protocol_option(hparams.protocol),
        },
    .default_items = [] { return std::uint64_t{1}; },
    .steps = true,  // --steps: timed exchange steps per protocol (default 20)
});

}  // namespace

}  // namespace transit::bench
