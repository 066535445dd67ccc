// Timing multi-region transfers and calibrating the protocol profiles (include/transit/protocols/calibrate_protocols.hpp).
#include "transit/protocols/calibrate_protocols.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <vector>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/one_sided/global_array.hpp"
#include "transit/runtime/context.hpp"

namespace transit {

std::size_t vector_block_bytes(std::size_t region_bytes, std::size_t regions, int slots) noexcept {
  return 2 * region_bytes * regions * static_cast<std::size_t>(std::max(slots, 1));
}

vector_slots vector_slot(const context& ctx, int pe, bool same_node) {
  std::vector<int> aimed(static_cast<std::size_t>(ctx.size()), 0);
  vector_slots s;
  const int mine = vector_partner(ctx, pe, same_node);
  for (int q = 0; q < ctx.size(); ++q) {
    const int t = vector_partner(ctx, q, same_node);
    if (t < 0) continue;
    if (q < pe && t == mine) ++s.slot;
    s.slots = std::max(s.slots, ++aimed[static_cast<std::size_t>(t)]);
  }
  return s;
}

int vector_partner(const context& ctx, int pe, bool same_node) {
  const machine& m = ctx.machine();
  const int node = m.node_of(pe);
  const int local = m.local_rank(pe);
  if (same_node) {
    const int on_node = m.pes_on_node(node);
    return on_node < 2 ? -1 : m.pe_on_node(node, (local + 1) % on_node);
  }
  if (m.num_nodes() < 2) return -1;
  const int next = (node + 1) % m.num_nodes();
  return m.pe_on_node(next, local % m.pes_on_node(next));
}

namespace {
/// A point whose warm-up transfer took at most this on average (seconds) is cheap: twice it, 2x
/// the iterations; three times, 3x.
constexpr double cheap_point_seconds = 6e-4;
}  // namespace

vector_timing time_vector_point(context& ctx, global_array<std::uint8_t>& a, const vector_point& point) {
  return time_vector_protocols(ctx, a, point, std::span<const transfer_protocol>(&point.protocol, 1)).front();
}

std::vector<vector_timing> time_vector_protocols(context& ctx, global_array<std::uint8_t>& a, const vector_point& point,
                                                 std::span<const transfer_protocol> protocols) {
  const std::size_t s = point.region_bytes, n = point.regions, k = protocols.size();
  const std::size_t per_pe = vector_block_bytes(s, n, point.slot + 1);
  const bool active = point.target >= 0;
  std::vector<region> regions;
  std::vector<std::uint8_t> values(active ? s * n : 0);
  if (active) {
    const detail::block_layout layout(a.size(), static_cast<std::size_t>(ctx.size()));
    TRANSIT_ASSERT(layout.base >= per_pe, "the array holds a point's regions in every block");
    const std::size_t begin = layout.begin_of(static_cast<std::size_t>(point.target));
    const std::size_t slot_begin = begin + static_cast<std::size_t>(point.slot) * 2 * s * n;
    for (std::size_t r = 0; r < n; ++r) regions.push_back(region{slot_begin + 2 * s * r, s});
  }
  // Distinct contents per transfer, so a check sees the last one, not a leftover.
  const auto fill = [&](std::size_t round) {
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<std::uint8_t>(i * 131 + round * 7 + static_cast<std::size_t>(ctx.rank()));
  };
  // One transfer with every PE started together; its time is the slowest PE's.
  const auto timed = [&](transfer_protocol p, std::size_t round) {
    fill(round);
    ctx.barrier();
    const auto start = detail::steady_clock::now();
    if (active) {
      a.put_regions(regions, values, p);
      a.fence();
    }
    const double mine = detail::seconds_since(start);
    return ctx.allreduce(mine, reduce_op::max);
  };
  vector_timing blank;
  if (active) blank.chosen = a.chosen_protocol(s, n, point.target);
  std::vector<vector_timing> out(k, blank);
  std::vector<std::vector<double>> times(k);
  std::size_t round = 0;
  double warm = 0;  // the warm-up transfers' times, the same on every PE (maxima over PEs)
  for (std::size_t q = 0; q < k && point.iterations > 0; ++q) warm += timed(protocols[q], round++);  // first touch, buffers
  // Cheap points take up to three times the iterations: there the protocols differ least, each
  // sample is mostly the scheduling noise of the shared cores, and the extra samples cost little.
  // Decided from the per-transfer mean, so the calibration (three protocols) and the sweep (four)
  // take the same number at a point.
  const int rounds = point.iterations * std::clamp(static_cast<int>(cheap_point_seconds * static_cast<double>(k) /
                                                                    std::max(warm, 1e-9)),
                                                   1, 3);
  for (int it = 0; it < rounds; ++it)
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t q = (static_cast<std::size_t>(it) + j) % k;
      times[q].push_back(timed(protocols[q], round++));
    }
  for (std::size_t q = 0; q < k; ++q) {
    vector_timing& t = out[q];
    t.verified = true;
    if (point.iterations > 0) {  // this protocol's put, then its get, reads back what it wrote
      fill(round++);
      if (active) {
        a.put_regions(regions, values, protocols[q]);
        a.fence();
      }
      a.sync();
      if (active) {
        std::vector<std::uint8_t> back(values.size());
        a.get_regions(regions, back, protocols[q]);
        t.verified = back == values;
      }
      a.sync();
    }
    std::sort(times[q].begin(), times[q].end());
    t.seconds = times[q].empty() ? 0 : times[q][times[q].size() / 2];
  }
  return out;
}

protocol_profile calibrate_protocols(context& ctx, const protocol_calibration_options& o) {
  const auto power_of_two = [](std::size_t x) { return x != 0 && (x & (x - 1)) == 0; };
  if (!power_of_two(o.min_region_bytes) || !power_of_two(o.max_region_bytes) || o.min_region_bytes > o.max_region_bytes)
    detail::throw_invalid("region bytes range", detail::concat(o.min_region_bytes, "..", o.max_region_bytes),
                          "powers of two, smallest first");
  if (!power_of_two(o.min_regions) || !power_of_two(o.max_regions) || o.min_regions > o.max_regions)
    detail::throw_invalid("regions range", detail::concat(o.min_regions, "..", o.max_regions),
                          "powers of two, smallest first");
  if (o.iterations < 1) detail::throw_invalid("iterations", o.iterations, "at least 1");

  protocol_profile p;
  p.backend = ctx.backend();
  p.pes_per_node = ctx.machine().max_pes_per_node();
  p.host = protocol_profile_host();
  p.pes = ctx.size();
  {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    p.created = text;
  }
  int slots = 1;
  for (const bool same_node : {true, false}) slots = std::max(slots, vector_slot(ctx, 0, same_node).slots);
  std::size_t largest = 0;
  for (std::size_t s = o.min_region_bytes; s <= o.max_region_bytes; s *= 2)
    for (std::size_t n = o.min_regions; n <= o.max_regions && s * n <= o.max_transfer_bytes; n *= 2)
      largest = std::max(largest, vector_block_bytes(s, n, slots));
  global_array<std::uint8_t> a(ctx, largest * static_cast<std::size_t>(ctx.size()));
  constexpr std::array<transfer_protocol, 3> fixed = {transfer_protocol::blocking, transfer_protocol::pipelined,
                                                      transfer_protocol::packed};
  for (const bool same_node : {true, false}) {
    protocol_table& table = same_node ? p.intra : p.inter;
    // A table is measured when PE 0 has such a partner (every PE then has one: uniform nodes).
    const int partner0 = vector_partner(ctx, 0, same_node);
    table.measured = partner0 >= 0;
    if (!table.measured) continue;
    const int target = o.loaded || ctx.rank() == 0 ? vector_partner(ctx, ctx.rank(), same_node) : -1;
    const int slot = o.loaded ? vector_slot(ctx, ctx.rank(), same_node).slot : 0;
    for (std::size_t s = o.min_region_bytes; s <= o.max_region_bytes; s *= 2) {
      for (std::size_t n = o.min_regions; n <= o.max_regions && s * n <= o.max_transfer_bytes; n *= 2) {
        const auto t = time_vector_protocols(
            ctx, a, vector_point{s, n, o.iterations, transfer_protocol::automatic, target, slot}, fixed);
        const protocol_point point{s, n, t[0].seconds, t[1].seconds, t[2].seconds};
        table.points.push_back(point);
        if (ctx.rank() == 0 && o.on_point) o.on_point(same_node, point);
      }
    }
  }
  return p;
}

}  // namespace transit
