// Timing multi-region transfers and calibrating the protocol profiles (include/transit/protocols/calibrate.hpp).
#include "transit/protocols/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include "transit/core/error.hpp"
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

vector_timing time_vector_point(context& ctx, global_array<std::uint8_t>& a, const vector_point& point) {
  const std::size_t s = point.region_bytes, n = point.regions;
  const std::size_t per_pe = vector_block_bytes(s, n, point.slot + 1);
  std::vector<region> regions;
  std::vector<std::uint8_t> values(point.target >= 0 ? s * n : 0);
  if (point.target >= 0) {
    const detail::block_layout layout(a.size(), static_cast<std::size_t>(ctx.size()));
    TRANSIT_ASSERT(layout.base >= per_pe, "the array holds a point's regions in every block");
    const std::size_t begin = layout.begin_of(static_cast<std::size_t>(point.target));
    const std::size_t slot_begin = begin + static_cast<std::size_t>(point.slot) * 2 * s * n;
    for (std::size_t r = 0; r < n; ++r) regions.push_back(region{slot_begin + 2 * s * r, s});
  }
  vector_timing t;
  if (point.target >= 0) t.chosen = a.chosen_protocol(s, n, point.target);
  std::vector<double> times;
  for (int it = 0; it < point.iterations; ++it) {
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<std::uint8_t>(i * 131 + static_cast<std::size_t>(it) * 7 + static_cast<std::size_t>(ctx.rank()));
    ctx.barrier();
    const auto start = std::chrono::steady_clock::now();
    if (point.target >= 0) {
      a.put_regions(regions, values, point.protocol);
      a.fence();
    }
    const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    times.push_back(ctx.allreduce(mine, reduce_op::max));
  }
  a.sync();
  t.verified = true;
  if (point.target >= 0 && point.iterations > 0) {
    std::vector<std::uint8_t> back(values.size());
    a.get_regions(regions, back, point.protocol);
    t.verified = back == values;
  }
  a.sync();
  std::sort(times.begin(), times.end());
  t.seconds = times.empty() ? 0 : times[times.size() / 2];
  return t;
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
        protocol_point point{s, n, 0, 0, 0};
        for (const auto protocol : {transfer_protocol::blocking, transfer_protocol::pipelined, transfer_protocol::packed}) {
          const vector_timing t = time_vector_point(ctx, a, vector_point{s, n, o.iterations, protocol, target, slot});
          (protocol == transfer_protocol::blocking ? point.blocking
           : protocol == transfer_protocol::pipelined ? point.pipelined
                                                      : point.packed) = t.seconds;
        }
        table.points.push_back(point);
        if (ctx.rank() == 0 && o.on_point) o.on_point(same_node, point);
      }
    }
  }
  return p;
}

}  // namespace transit
