// transit bench: resolving options for a job, running a kernel, reducing its record over the PEs
// and writing it as JSON or as a line for people.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <stdexcept>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.hpp"
#include "core/median.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace transit::bench {

setup resolve(const context& ctx, const options& opt) {
  const kernel_entry& kernel = *find_kernel(opt.kernel);
  if (ctx.size() < kernel.min_pes)
    detail::throw_invalid(opt.kernel, detail::concat(ctx.size(), " PE", ctx.size() == 1 ? "" : "s"),
                          detail::concat("at least ", kernel.min_pes, " PEs"));
  const std::uint64_t items =
      opt.items_per_pe != 0 ? opt.items_per_pe : kernel.default_items ? kernel.default_items() : std::uint64_t{1} << 20;
  setup s{opt, {}, {}, items, opt.item_bytes, opt.steps > 0 ? opt.steps : opt.tune ? 30 : 1};
  s.stream.buffer_items = opt.buffer_items;
  s.stream.flush_period = std::chrono::microseconds(opt.flush_us);
  s.stream.tune = opt.tune;
  if (opt.route == scheme::mpi_raw && ctx.backend() != "mpi")
    detail::throw_invalid("--scheme mpi-raw", detail::concat("the ", ctx.backend(), " backend"),
                          "the mpi backend (a plain MPI program: run under mpirun)");
  if (opt.route == scheme::mpi_raw && ctx.options().threads_per_rank > 1)
    detail::throw_invalid("--scheme mpi-raw", detail::concat(ctx.options().threads_per_rank, " PE threads per rank"),
                          "one PE per rank (a plain MPI program: --transit-threads-per-rank=1)");
  if (opt.route == scheme::none || opt.route == scheme::mpi_raw) {
    // No aggregation, same path: a message per item through the streamer and the same transport,
    // so the baseline pays exactly the per-message costs that aggregation amortises.
    s.stream.grid = virtual_grid::direct(ctx.size());
    s.stream.buffer_items = 1;
  } else {
    s.stream.grid = virtual_grid::parse(opt.grid, ctx.machine());
    s.stream.route = opt.route == scheme::grid         ? routing::grid
                     : opt.route == scheme::node_aware ? routing::node_aware
                                                       : routing::node_aware_advanced;
    make_router(s.stream.route, *s.stream.grid, ctx.machine());  // throws on a mismatch
  }
  if (kernel.max_buffer_items != 0) s.stream.buffer_items = std::min(s.stream.buffer_items, kernel.max_buffer_items);
  s.grid_name = s.stream.grid->ndims() == 1 ? "direct" : s.stream.grid->str();
  return s;
}

namespace {

/// A kernel's extra field for people: numbers as printf's %g would show them.
std::string text_of(const json& value) {
  if (value.is_number_float()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value.get<double>());
    return text;
  }
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

}  // namespace

std::string human(double value) {
  char text[32];
  if (value >= 1e9) std::snprintf(text, sizeof text, "%.2f G", value / 1e9);
  else if (value >= 1e6) std::snprintf(text, sizeof text, "%.2f M", value / 1e6);
  else if (value >= 1e3) std::snprintf(text, sizeof text, "%.2f k", value / 1e3);
  else std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

#ifndef TRANSIT_WITH_MPI
// Without MPI, resolve() refuses --scheme mpi-raw before a kernel runs.
measurement histogram_mpi_raw(context&, const setup&, std::uint64_t) {
  throw std::logic_error("--scheme mpi-raw needs MPI");
}
measurement alltoall_mpi_raw(context&, const setup&) { throw std::logic_error("--scheme mpi-raw needs MPI"); }
raw_fetch_adds hotspot_mpi_raw(context&, int, int, int, std::uint64_t, std::uint64_t, std::optional<std::uint64_t>) {
  throw std::logic_error("--scheme mpi-raw needs MPI");
}
raw_locks hotspot_mpi_raw_locks(context&, int, int, int) { throw std::logic_error("--scheme mpi-raw needs MPI"); }
#endif

record run_once(context& ctx, const options& opt, int run_index) {
  const setup s = resolve(ctx, opt);
  const std::uint64_t network_before = detail::context_access::net(ctx).network_messages();
  const measurement m = find_kernel(opt.kernel)->run(ctx, s);
  const std::uint64_t network = detail::context_access::net(ctx).network_messages() - network_before;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);  // the process's: its PE threads share it
  record r;
  r.kernel = opt.kernel;
  r.backend = std::string(ctx.backend());
  r.scheme_name = std::string(to_string(opt.route));
  r.grid = s.grid_name;
  r.pes = ctx.size();
  r.nodes = ctx.machine().num_nodes();
  r.item_bytes = s.item_bytes;
  r.buffer_items = m.buffer_items != 0 ? m.buffer_items : s.stream.buffer_items;
  r.flush_us = opt.flush_us;
  r.items_per_pe = m.items_per_pe;
  r.seconds = m.seconds;
  r.rate = m.seconds > 0 ? m.items_per_pe / m.seconds : 0;
  r.messages_sent = ctx.allreduce(m.stats.messages_sent, reduce_op::sum);
  r.inter_node_messages = ctx.allreduce(m.stats.inter_node_messages, reduce_op::sum);
  r.marker_messages = ctx.allreduce(m.stats.marker_messages, reduce_op::sum);
  r.acknowledgement_messages = ctx.allreduce(m.stats.acknowledgement_messages, reduce_op::sum);
  r.confirmed_messages = ctx.allreduce(m.stats.confirmed_messages, reduce_op::sum);
  r.direct_messages = ctx.allreduce(m.stats.direct_messages, reduce_op::sum);
  r.network_messages = ctx.allreduce(network, reduce_op::sum);
  r.peak_rss_kib = ctx.allreduce(static_cast<std::uint64_t>(usage.ru_maxrss), reduce_op::max);
  r.bytes_sent = ctx.allreduce(m.stats.bytes_sent, reduce_op::sum);
  r.items_forwarded = ctx.allreduce(m.stats.items_forwarded, reduce_op::sum);
  r.buffer_bytes_peak = ctx.allreduce(m.stats.buffer_bytes_peak, reduce_op::max);
  r.buffer_bytes_bound = ctx.allreduce(m.buffer_bytes_bound, reduce_op::max);
  r.verified = all_of(ctx, m.verified);
  r.run = run_index;
  r.extra = m.extra;
  r.variants = m.variants;
  r.table = m.table;
  return r;
}

std::string to_json(const record& r) {
  json out = {{"kernel", r.kernel},
              {"backend", r.backend},
              {"pes", r.pes},
              {"nodes", r.nodes},
              {"scheme", r.scheme_name},
              {"grid", r.grid},
              {"item_bytes", r.item_bytes},
              {"items_per_pe", r.items_per_pe},
              {"buffer_items", r.buffer_items},
              {"flush_us", r.flush_us},
              {"run", r.run},
              {"seconds", r.seconds},
              {"items_per_second_per_pe", r.rate},
              {"messages_sent", r.messages_sent},
              {"inter_node_messages", r.inter_node_messages},
              {"marker_messages", r.marker_messages},
              {"acknowledgement_messages", r.acknowledgement_messages},
              {"confirmed_messages", r.confirmed_messages},
              {"direct_messages", r.direct_messages},
              {"network_messages", r.network_messages},
              {"peak_rss_kib", r.peak_rss_kib},
              {"bytes_sent", r.bytes_sent},
              {"items_forwarded", r.items_forwarded},
              {"buffer_bytes_peak", r.buffer_bytes_peak},
              {"buffer_bytes_bound", r.buffer_bytes_bound},
              {"verified", r.verified}};
  for (const auto& [key, value] : r.extra.items()) out[key] = value;
  // nlohmann writes NaN and infinities as null; text that is not UTF-8 is replaced, not thrown on.
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string to_text(const record& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s  %s %d PEs  %s %s  G=%zu  %zu B  %.0f items/PE  %.6f s  %s items/s/PE  %" PRIu64
                " msgs  peak %" PRIu64 " B  %s",
                r.kernel.c_str(), r.backend.c_str(), r.pes, r.scheme_name.c_str(), r.grid.c_str(), r.buffer_items,
                r.item_bytes, r.items_per_pe, r.seconds, human(r.rate).c_str(), r.messages_sent,
                r.buffer_bytes_peak, r.verified ? "verified" : "NOT VERIFIED");
  std::string out = line;
  if (r.nodes > 1) out += "  " + std::to_string(r.inter_node_messages) + " msgs between " + std::to_string(r.nodes) + " nodes";
  for (const auto& [key, value] : r.extra.items()) out += "  " + key + " " + text_of(value);
  return out;
}

progress_bar::progress_bar(const context& ctx, std::string label, std::uint64_t total)
    : enabled_(ctx.rank() == 0 && isatty(STDERR_FILENO) != 0 && total > 0),
      label_(std::move(label)),
      total_(total),
      start_(detail::steady_clock::now()) {}

progress_bar::~progress_bar() {
  if (shown_) std::fprintf(stderr, "\r%*s\r", static_cast<int>(label_.size()) + 48, "");
}

void progress_bar::draw(std::uint64_t done) {
  const double elapsed = detail::seconds_since(start_);
  if (elapsed < 1.0) return;
  constexpr int width = 30;
  const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
  const int filled = static_cast<int>(fraction * width);
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% %6.1f s", label_.c_str(), filled, "##############################",
               width - filled, "", static_cast<int>(fraction * 100), elapsed);
  shown_ = true;
}

std::vector<double> add_step_times(context& ctx, const setup& s, const std::vector<double>& step_seconds,
                                   measurement& m) {
  std::vector<double> seconds;
  for (const double t : step_seconds) seconds.push_back(ctx.allreduce(t, reduce_op::max));
  m.extra["steps"] = s.steps;
  m.extra["step_seconds"] = seconds;
  if (seconds.empty()) return seconds;
  m.extra["median_step_seconds"] = detail::median(seconds);
  // The rate over the second half of the steps, fixed and tuned runs alike: local jobs speed up
  // over their first ~100 ms (steps of 6-8 ms become 3 ms), so a short fixed run and a tuned run's
  // late steps would compare a cold state with a warm one (bench/tuning.sh compares these).
  TRANSIT_ASSERT(m.items_per_pe > 0, "the kernel sets items_per_pe before add_step_fields (the step rates need it)");
  const double items_per_step = m.items_per_pe / static_cast<double>(seconds.size());
  const std::size_t second_half = seconds.size() / 2;
  double late_time = 0;
  for (std::size_t i = second_half; i < seconds.size(); ++i) late_time += seconds[i];
  m.extra["second_half_items_per_second_per_pe"] =
      late_time > 0 ? json(static_cast<double>(seconds.size() - second_half) * items_per_step / late_time)
                    : json(nullptr);
  return seconds;
}

void add_step_fields(context& ctx, const setup& s, const streamer_stats& stats, const streamer_options& current,
                     const std::vector<double>& step_seconds, measurement& m) {
  const bool tuned = s.stream.tune;
  m.buffer_items = tuned && !stats.tuning.empty() ? stats.tuning.front().buffer_items : current.buffer_items;
  if (s.opt.buffer_items == 0) m.extra["automatic_buffer"] = true;
  if (s.steps <= 1 && !tuned) return;
  const std::vector<double> seconds = add_step_times(ctx, s, step_seconds, m);
  if (!tuned) return;
  const double items_per_step = m.items_per_pe / static_cast<double>(seconds.size());
  json history = json::array();
  for (const auto& t : stats.tuning)
    history.push_back({{"step", t.step},
                       {"grid", t.grid},
                       {"routing", std::string(to_string(t.route))},
                       {"buffer_items", t.buffer_items},
                       {"seconds", t.seconds},
                       {"items", t.items},
                       {"explored", t.explored}});
  m.extra["tuning"] = history;
  m.extra["final_buffer_items"] = current.buffer_items;
  m.extra["final_grid"] = current.grid->ndims() == 1 ? std::string("direct") : current.grid->str();
  m.extra["final_routing"] = std::string(to_string(current.route));
  // The tuner measures every step until it settles, then stops: the steps after its history ran
  // the settled configuration (timed by the kernel here).
  const std::size_t first_settled = stats.tuning.size();
  m.extra["settled_step"] = first_settled < seconds.size() ? json(first_settled) : json(nullptr);
  double settled_time = 0;
  for (std::size_t i = first_settled; i < seconds.size(); ++i) settled_time += seconds[i];
  const double settled_steps = static_cast<double>(seconds.size()) - static_cast<double>(first_settled);
  m.extra["settled_items_per_second_per_pe"] =
      settled_time > 0 ? json(settled_steps * items_per_step / settled_time) : json(nullptr);
}

void accumulate(streamer_stats& into, const streamer_stats& s) { into += s; }

std::uint64_t buffer_bound(const context& ctx, const streamer_options& so, std::size_t item_bytes) {
  // Thesis bound: one buffer of G items per peer link; transit adds one for the PE's own items
  // (aggregated too, so that insert has no branch on the destination), of at least
  // own_buffer_min_items.
  const auto peers = make_router(so.route, *so.grid, ctx.machine())->out_links(ctx.rank()).size();
  const auto own = detail::streamer_core::own_capacity(static_cast<std::uint32_t>(so.buffer_items), item_bytes);
  return (std::uint64_t{peers} * so.buffer_items + own) * item_bytes;
}

std::uint64_t buffer_bound(const context& ctx, const streamer_options& so, const streamer_stats& stats,
                           std::size_t item_bytes) {
  // A tuned streamer held buffers of every configuration it tried: the bound is their largest.
  std::uint64_t bound = buffer_bound(ctx, so, item_bytes);
  for (const tuning_step& t : stats.tuning) {
    streamer_options tried = so;
    tried.grid = virtual_grid::parse(t.grid, ctx.machine());
    tried.route = t.route;
    tried.buffer_items = t.buffer_items;
    bound = std::max(bound, buffer_bound(ctx, tried, item_bytes));
  }
  return bound;
}

bool all_of(context& ctx, bool mine) { return ctx.allreduce(mine ? 1 : 0, reduce_op::min) == 1; }

}  // namespace transit::bench
