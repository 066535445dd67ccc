// Calibration (docs/tuning.md). Two measurements per kind of link, each between one pair of PEs
// streaming to each other (the traffic of an all-to-all step, so buffers flow both ways and each
// PE pays a message's sending and receiving side) while the other PEs wait:
//  - the bandwidth curve: transport messages of each size, every byte written at the source and
//    read at the destination, through a mailbox channel of calibration's own;
//  - streamer steps of 8-byte items at several buffer sizes g, on a direct grid: the time per item
//    is per_item + (alpha + 16 beta) / g (thesis table 2.3), a line in 1/g whose slope gives alpha
//    and whose intercept gives per_item; beta comes from the curve's large messages.
// Every timing is the maximum over PEs of one allreduce, so every PE computes the same profile.
#include "transit/detail/core/clock.hpp"
#include "transit/tuning/calibrate_streamer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <optional>
#include <thread>

#include "transit/detail/core/error.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transit/streamer/streamer.hpp"
#include "passes.hpp"
#include "raw_messages.hpp"

namespace transit {

namespace {

using detail::context_access;
using clock_type = detail::steady_clock;
using detail::seconds_since;

// Every PE of a local job stores here at once: atomic, so the store is no data race.
std::atomic<std::uint64_t> calibration_sink{0};

struct pair_of_pes {
  int a = -1, b = -1;
};

std::optional<pair_of_pes> intra_pair(const machine& m) {
  for (int n = 0; n < m.num_nodes(); ++n) {
    const auto pes = m.node_pes(n);
    if (pes.size() >= 2) return pair_of_pes{pes[0], pes[1]};
  }
  return std::nullopt;
}

std::optional<pair_of_pes> inter_pair(const machine& m) {
  if (m.num_nodes() < 2) return std::nullopt;
  return pair_of_pes{m.node_pes(0)[0], m.node_pes(1)[0]};
}

/// Streams `count` messages of `bytes` each way between a and b on `channel`; returns the time,
/// agreed on every PE. The sender writes every byte, the receiver reads every byte.
double stream_messages(context& ctx, std::uint32_t channel, pair_of_pes pair, std::size_t bytes, std::uint64_t count,
                       const std::vector<std::byte>& pattern, std::uint64_t& checksum) {
  auto& net = context_access::net(ctx);
  auto& mail = context_access::mail(ctx);
  const int me = ctx.rank();
  const bool active = me == pair.a || me == pair.b;
  const int peer = me == pair.a ? pair.b : pair.a;
  ctx.barrier();
  const auto start = clock_type::now();
  double elapsed = 0;
  if (active) {
    std::uint64_t sent = 0, received = 0;
    std::vector<detail::message> arrived;
    context_access::wait_until(
        ctx,
        [&] {
          bool progressed = false;
          // Send a few, then receive what came: both directions advance together.
          for (int i = 0; i < 8 && sent < count; ++i, ++sent) {
            detail::message_buffer buffer = net.allocate(bytes);
            std::memcpy(buffer.payload(), pattern.data(), bytes);
            buffer.set_size(bytes);
            net.send(peer, channel, std::move(buffer));
            progressed = true;
          }
          arrived.clear();
          if (mail.take(channel, arrived)) {
            for (auto& m : arrived) {
              const std::byte* p = m.data.payload();
              std::uint64_t sum = 0;
              for (std::size_t off = 0; off + 8 <= m.data.size(); off += 8) {
                std::uint64_t word;
                std::memcpy(&word, p + off, 8);
                sum += word;
              }
              checksum += sum;
              net.recycle(std::move(m.data));
              ++received;
            }
            progressed = true;
          }
          if (sent == count && received == count && net.pending_sends() == 0) return detail::step_result::done;
          return progressed ? detail::step_result::progressed : detail::step_result::idle;
        },
        "calibration (streaming messages)");
    elapsed = seconds_since(start);
  }
  return ctx.allreduce(elapsed, reduce_op::max);
}

/// One streamer step of `items` 8-byte items each way between a and b, buffers of `g` items, on a
/// direct grid. Returns the time, agreed on every PE.
double stream_items(context& ctx, pair_of_pes pair, std::size_t g, std::uint64_t items, std::uint64_t& checksum) {
  streamer_options options;
  options.grid = virtual_grid::direct(ctx.size());
  options.buffer_items = g;
  std::uint64_t sum = 0;
  streamer<std::uint64_t> s(ctx, options, [&](const std::uint64_t& v) { sum += v; });
  const int me = ctx.rank();
  const bool active = me == pair.a || me == pair.b;
  const int peer = me == pair.a ? pair.b : pair.a;
  ctx.barrier();
  const auto start = clock_type::now();
  if (active) {
    for (std::uint64_t i = 0; i < items; ++i) {
      s.insert(i, peer);
      if ((i & 255) == 255) s.progress();  // as the bench kernels poll (bench.hpp, poll_due)
    }
  }
  s.finish();
  const double elapsed = active ? seconds_since(start) : 0;
  checksum += sum;
  return ctx.allreduce(elapsed, reduce_op::max);
}

constexpr int passes = 3;

/// The measurements of calibrate_streamer counted for calibration_options::on_step (PE 0).
struct step_counter {
  const calibration_options& o;
  bool first_pe;
  int done = 0, total = 0;
  void operator()(const char* link, const std::string& what) {
    if (first_pe && o.on_step) o.on_step(done, total, detail::concat(link, " ", what));
    ++done;
  }
};

std::string size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20)) return detail::concat(bytes >> 20, " MiB");
  if (bytes >= 1024) return detail::concat(bytes >> 10, " KiB");
  return detail::concat(bytes, " B");
}

/// The curve's message sizes: powers of two from the smallest to the largest.
std::vector<std::size_t> curve_sizes(const calibration_options& o) {
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = o.min_message_bytes; bytes <= o.max_message_bytes; bytes *= 2) {
    sizes.push_back(bytes);
    if (bytes > o.max_message_bytes / 2) break;  // no overflow past the largest size
  }
  return sizes;
}

/// The raw curve's message sizes: 0 and 8 bytes, then the curve's.
std::vector<std::size_t> raw_message_sizes(const calibration_options& o) {
  std::vector<std::size_t> sizes{0, 8};
  for (const std::size_t bytes : curve_sizes(o)) sizes.push_back(bytes);
  return sizes;
}

/// Weighted least squares of y = intercept + slope * x (weights w, all ones for plain least squares).
std::pair<double, double> fit_line(const std::vector<double>& x, const std::vector<double>& y,
                                   const std::vector<double>& w) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sw += w[i];
    sx += w[i] * x[i];
    sy += w[i] * y[i];
    sxx += w[i] * x[i] * x[i];
    sxy += w[i] * x[i] * y[i];
  }
  const double d = sw * sxx - sx * sx;
  if (x.size() < 2 || !(d > 0)) return {x.empty() || !(sw > 0) ? 0 : sy / sw, 0};
  const double slope = (sw * sxy - sx * sy) / d;
  return {(sy - slope * sx) / sw, slope};
}

/// A streaming curve: `stream(bytes, count)` streams `count` messages of `bytes` each way and
/// returns the time. A probe sizes each point; then `passes` sweeps over all sizes, each taking a
/// third of seconds_per_point, and each point the median of its passes, so that a burst of load on
/// a shared machine moves one pass of a point, not the curve's peak.
template <class Stream>
std::vector<bandwidth_point> measure_curve(const calibration_options& o, const std::vector<std::size_t>& sizes,
                                           step_counter& step, const char* name, const char* what, Stream&& stream) {
  const double share = o.seconds_per_point / passes;
  std::vector<std::uint64_t> counts;
  for (const std::size_t bytes : sizes) {
    step(name, detail::concat(what, " probe, ", size_text(bytes)));
    const std::uint64_t probe =
        std::clamp<std::uint64_t>((std::uint64_t{256} << 10) / std::max<std::size_t>(bytes, 8), 8, 256);
    const double per = std::max(stream(bytes, probe) / static_cast<double>(probe), 1e-9);
    counts.push_back(static_cast<std::uint64_t>(std::clamp(share / per, 8.0, static_cast<double>(1 << 18))));
  }
  const std::vector<double> per_message = detail::interleaved_medians(sizes.size(), passes, [&](std::size_t i) {
    step(name, detail::concat(what, ", ", size_text(sizes[i])));
    return stream(sizes[i], counts[i]) / static_cast<double>(counts[i]);
  });
  std::vector<bandwidth_point> curve;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double t = per_message[i];
    curve.push_back({sizes[i], t, t > 0 ? static_cast<double>(sizes[i]) / t : 0});
  }
  return curve;
}

link_calibration measure_link(context& ctx, pair_of_pes pair, const calibration_options& o,
                              const std::vector<std::byte>& pattern, std::uint64_t& checksum, step_counter& step,
                              detail::raw_message_stream& raw, const char* name) {
  link_calibration link;
  link.measured = true;
  link.from_pe = pair.a;
  link.to_pe = pair.b;
  auto& mail = context_access::mail(ctx);
  const std::uint32_t channel = mail.open_channel();  // collective: every PE opens it in turn

  // The curve through transit's transport, then the network library's own messages at 0 and 8
  // bytes and the curve's sizes (where the backend offers them: raw_messages.hpp).
  link.curve = measure_curve(o, curve_sizes(o), step, name, "curve", [&](std::size_t bytes, std::uint64_t count) {
    return stream_messages(ctx, channel, pair, bytes, count, pattern, checksum);
  });
  mail.close_channel(channel);
  if (raw.measurable()) {
    link.raw_curve = measure_curve(o, raw_message_sizes(o), step, name, "raw messages",
                                   [&](std::size_t bytes, std::uint64_t count) {
                                     return raw.stream(pair.a, pair.b, bytes, count, pattern, checksum);
                                   });
  }

  // alpha, beta and per_item: streamer steps at several buffer sizes, a probe each, then the
  // median of `passes` runs each, measured pass by pass as the curve is; fitted with the curve.
  const double share = o.seconds_per_point / passes;
  // Point by point, a burst of load over the three g = 4096 runs moves per_item, and the
  // automatic size with it by a third (tests/tuning/fit_test.cpp simulates it).
  std::vector<std::uint64_t> step_items;
  for (const std::size_t g : o.buffer_items) {
    step(name, detail::concat("streamer probe, g = ", g));
    const std::uint64_t probe = std::clamp<std::uint64_t>(g * 8, 256, 1 << 16);
    const double t0 = stream_items(ctx, pair, g, probe, checksum);
    const double per = std::max(t0 / static_cast<double>(probe), 1e-9);
    step_items.push_back(static_cast<std::uint64_t>(
        std::clamp(share / per, static_cast<double>(std::max<std::size_t>(g, 256)), 1e8)));
  }
  const std::vector<double> per_item = detail::interleaved_medians(o.buffer_items.size(), passes, [&](std::size_t i) {
    step(name, detail::concat("streamer, g = ", o.buffer_items[i]));
    return stream_items(ctx, pair, o.buffer_items[i], step_items[i], checksum) / static_cast<double>(step_items[i]);
  });
  std::vector<streamer_timing> steps;
  for (std::size_t i = 0; i < o.buffer_items.size(); ++i) steps.push_back({o.buffer_items[i], per_item[i]});
  link.costs = fit_link_costs(link.curve, steps);
  return link;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

link_costs fit_link_costs(const std::vector<bandwidth_point>& curve, const std::vector<streamer_timing>& steps) {
  link_costs costs;
  // beta: the slope of time per message against size over the larger half of the curve up to its
  // peak. Past the peak the transport changes protocol (Open MPI's rendezvous above its eager
  // limit ran 100x slower per byte in calibration here), which says nothing of buffer-sized messages.
  std::size_t end = 0;
  for (std::size_t i = 0; i < curve.size(); ++i)
    if (curve[i].bytes_per_second >= curve[end].bytes_per_second) end = i;
  std::vector<double> x, y, w;
  for (std::size_t i = curve.empty() ? 0 : (end + 1) / 2; i <= end && i < curve.size(); ++i) {
    x.push_back(static_cast<double>(curve[i].message_bytes));
    y.push_back(curve[i].seconds_per_message);
    w.push_back(1);
  }
  costs.beta = fit_line(x, y, w).second;
  // Over a short range (a curve that peaks early) noise can tilt the slope to 0 or below; then
  // the time per byte at the peak, which is beta plus alpha's share there: an upper bound.
  if (!(costs.beta > 0) && !curve.empty() && curve[end].bytes_per_second > 0)
    costs.beta = 1.0 / curve[end].bytes_per_second;
  costs.beta = std::max(0.0, costs.beta);

  // alpha and per_item: time per item is per_item + 8 beta + (alpha + 16 beta) / g, a line in 1/g.
  // Each point's noise is a share of its own time, so the fit weighs relative errors (weights
  // 1/y^2): a plain least-squares line is pinned by g = 1 (time per item ~ alpha, a microsecond),
  // whose few percent of noise alone outweighs a per-item cost of nanoseconds, and its intercept
  // came out negative on mpi. The intercept must be positive; should noise still make it not, the
  // largest buffer, where the per-message cost is amortised, gives it directly.
  x.clear();
  y.clear();
  w.clear();
  std::size_t largest = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!(steps[i].seconds_per_item > 0) || steps[i].buffer_items == 0) continue;
    x.push_back(1.0 / static_cast<double>(steps[i].buffer_items));
    y.push_back(steps[i].seconds_per_item);
    w.push_back(1.0 / (steps[i].seconds_per_item * steps[i].seconds_per_item));
    if (x.size() == 1 || steps[i].buffer_items > steps[largest].buffer_items) largest = i;
  }
  if (x.empty()) return costs;
  auto [intercept, slope] = fit_line(x, y, w);
  slope = std::max(0.0, slope);
  const double at_largest = steps[largest].seconds_per_item;
  if (!(intercept > 0)) intercept = at_largest - slope / static_cast<double>(steps[largest].buffer_items);
  if (!(intercept > 0)) intercept = at_largest;
  costs.alpha = std::max(0.0, slope - 16 * costs.beta);
  // The item's 8 bytes at beta come off; beta is fitted on large messages, and should it claim
  // more than half of an item's time, half stays the item's own (routing, copy and delivery
  // cost at least that on every machine measured), so per_item is never 0.
  costs.per_item = std::max(intercept - 8 * costs.beta, intercept / 2);
  return costs;
}

void derive_buffer_sizes(streamer_profile& profile) {
  const link_calibration& link = profile.inter.measured ? profile.inter : profile.intra;
  double peak = 0;
  for (const auto& p : link.curve) peak = std::max(peak, p.bytes_per_second);
  profile.peak_bytes_per_second = peak;
  const auto smallest_reaching = [&](double fraction) -> std::size_t {
    for (const auto& p : link.curve)
      if (p.bytes_per_second >= fraction * peak) return p.message_bytes;
    return link.curve.empty() ? 16384 : link.curve.back().message_bytes;
  };
  profile.buffer_bytes_50 = smallest_reaching(0.50);
  profile.buffer_bytes_75 = smallest_reaching(0.75);
  profile.buffer_bytes_90 = smallest_reaching(0.90);
}

streamer_profile calibrate_streamer(context& ctx, const calibration_options& o) {
  if (ctx.size() < 2)
    detail::throw_invalid("PEs for calibration", ctx.size(), "at least 2 (calibration measures links between PEs)");
  if (o.min_message_bytes < 8 || o.max_message_bytes < o.min_message_bytes || o.max_message_bytes > (std::size_t{1} << 30))
    detail::throw_invalid("calibration message sizes",
                          detail::concat(o.min_message_bytes, " .. ", o.max_message_bytes),
                          "8 <= smallest <= largest <= 1 GiB");
  if (!(o.seconds_per_point > 0) || o.buffer_items.empty() ||
      std::any_of(o.buffer_items.begin(), o.buffer_items.end(), [](std::size_t g) { return g == 0; }))
    detail::throw_invalid("calibration options", "seconds_per_point or buffer_items",
                          "a positive time per point and buffer sizes of at least 1");
  const machine& m = ctx.machine();
  streamer_profile profile;
  profile.backend = std::string(ctx.backend());
  profile.pes_per_node = m.max_pes_per_node();
  profile.host = this_host();
  profile.pes = ctx.size();
  profile.hardware_threads = static_cast<int>(std::thread::hardware_concurrency());
  profile.created = utc_now();
  std::vector<std::byte> pattern(o.max_message_bytes);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::byte>(i * 131 + 7);
  std::uint64_t checksum = 0;
  const auto intra = intra_pair(m), inter = inter_pair(m);
  step_counter step{o, ctx.rank() == 0};
  detail::raw_message_stream raw(ctx);  // collective
  const std::size_t raw_points = raw.measurable() ? raw_message_sizes(o).size() : 0;
  step.total = ((intra ? 1 : 0) + (inter ? 1 : 0)) *
               static_cast<int>((curve_sizes(o).size() + raw_points + o.buffer_items.size()) * (1 + passes));
  if (intra) profile.intra = measure_link(ctx, *intra, o, pattern, checksum, step, raw, "intra-node");
  if (inter) profile.inter = measure_link(ctx, *inter, o, pattern, checksum, step, raw, "inter-node");
  // What was read is used: no reading loop is optimised away.
  calibration_sink.fetch_add(checksum, std::memory_order_relaxed);
  derive_buffer_sizes(profile);
  return profile;
}

}  // namespace transit

#ifndef TRANSIT_WITH_MPI
namespace transit::detail {

// Without MPI no backend has a network library of its own to measure (mpi_raw_messages.cpp).
struct raw_message_stream::state {};
raw_message_stream::raw_message_stream(context& ctx) : ctx_(ctx) {}
raw_message_stream::~raw_message_stream() = default;
double raw_message_stream::stream(int, int, std::size_t, std::uint64_t, const std::vector<std::byte>&, std::uint64_t&) {
  return 0;
}

}  // namespace transit::detail
#endif
