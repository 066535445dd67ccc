// transit model KERNEL [bench options] [--measure]: the cost model's prediction of a kernel's step
// (model/model.hpp, from the calibrated profile or built-in costs) for every candidate grid, and
// with --measure the kernel run on each beside it, with the rank correlation of the two orders.
// --calibration FILE takes the costs of a simulated machine (scripts/calibrations/NAME.json) and
// --grids LIST predicts only the grids listed, so the model can be set beside bench/sim/model.sh.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <vector>

#include "bench.hpp"
#include "bench_options.hpp"
#include "cli.hpp"
#include "progress.hpp"
#include "transit/detail/core/error.hpp"
#include "model/tuner.hpp"

namespace transit::cli {

using namespace transit::bench;  // the kernels' library, of which this command is a client

namespace {

options model_line;  // set by parsing `transit model`, read-only while the job runs
bool measure_flag = false;
std::string calibration_file;  // --calibration: costs of a simulated machine instead of the profile's
std::string grids_list;        // --grids: only these grids (comma-separated --grid specs)

/// The costs scripts/simulate's modelled mode charges on a calibration of scripts/calibrations/:
/// seconds_per_message at each end of a message (alpha, which the model splits between the ends,
/// is twice it), seconds_per_item per item hop (the model's per-item cost is what `transit
/// calibrate` measures per item sent and received: twice it), beta from the links (inter-node) and
/// the loopback (intra-node); one PE per core, as each simulated rank owns a core.
machine_costs costs_of_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) detail::throw_invalid("--calibration", path, "a readable calibration file (scripts/calibrations/NAME.json)");
  json data;
  try {
    data = json::parse(in);
  } catch (const json::exception& e) {
    detail::throw_invalid("--calibration", path, detail::concat("a calibration file: ", e.what()));
  }
  const auto value = [&](const char* name) {
    const auto& params = data.at("parameters");
    if (!params.contains(name) || !params.at(name).contains("value") || !params.at(name).at("value").is_number())
      detail::throw_invalid("--calibration", path, detail::concat("a calibration with parameters.", name, ".value"));
    return params.at(name).at("value").get<double>();
  };
  machine_costs c;
  const double alpha = 2 * value("seconds_per_message"), per_item = 2 * value("seconds_per_item");
  c.inter = {alpha, 1 / value("link_bytes_per_second"), per_item};
  c.intra = {alpha, 1 / value("loopback_bytes_per_second"), per_item};
  c.pes_per_core = 1;
  return c;
}

scheme scheme_of(routing r) {
  switch (r) {
    case routing::grid: return scheme::grid;
    case routing::node_aware: return scheme::node_aware;
    case routing::node_aware_advanced: return scheme::node_aware_advanced;
  }
  throw std::logic_error(detail::concat("transit model: no bench scheme for routing ", to_string(r)));
}

struct row {
  grid_candidate candidate;
  step_prediction predicted;
  double measured_seconds = std::nan("");
  double measured_rate = std::nan("");
  std::uint64_t measured_messages = 0;
  bool verified = true;
};

int model_command(context& ctx) {
  const options& opt = model_line;
  const kernel_entry& k = *find_kernel(opt.kernel);
  if (!k.workload) {
    if (ctx.rank() == 0) {
      std::vector<std::string> names;
      for (const auto& other : kernels())
        if (other.workload) names.push_back(other.name);
      std::fprintf(stderr, "transit: error: model: got '%s', expected a kernel with a model: %s\n", opt.kernel.c_str(),
                   join(names).c_str());
    }
    return 2;
  }
  std::optional<setup> resolved;
  try {
    resolved.emplace(resolve(ctx, opt));
  } catch (const std::invalid_argument& e) {
    if (ctx.rank() == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
    return 2;
  }
  const setup& s = *resolved;
  if (opt.route == scheme::none || opt.route == scheme::mpi_raw) {
    if (ctx.rank() == 0)
      std::fprintf(stderr, "transit: error: --scheme: got '%s', expected an aggregating scheme for the model "
                           "(it compares grids)\n", std::string(to_string(opt.route)).c_str());
    return 2;
  }
  step_workload workload = k.workload(ctx, s);
  workload.walk_every_source = !grids_list.empty();  // a few grids: exact counts even beyond 2048 PEs
  // Without --measure the prediction is rank 0's alone: on a job of thousands of PEs (a
  // simulated machine's size, --transit-pes-force) every PE predicting would repeat it thousands
  // of times.
  if (!measure_flag && ctx.rank() != 0) return 0;
  const profile_status status = calibration_file.empty() ? profile_in_use(ctx) : profile_status{};
  const double sharing = pes_per_core(ctx);
  machine_costs costs;
  try {
    costs = !calibration_file.empty() ? costs_of_calibration(calibration_file)
            : status.streamer         ? costs_from(*status.streamer, sharing)
                                      : built_in_costs(ctx.backend(), sharing);
  } catch (const std::invalid_argument& e) {
    if (ctx.rank() == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
    return 2;
  }
  std::size_t buffer = opt.buffer_items;
  if (buffer == 0) {
    try {
      buffer = detail::automatic_buffer_items(detail::local_tuning_seed(ctx, workload.item_bytes), workload.item_bytes);
    } catch (const profile_error& e) {
      if (ctx.rank() == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
      return 1;
    }
  }

  std::vector<grid_candidate> candidates;
  if (grids_list.empty()) {
    candidates = candidate_grids(ctx.machine(), ctx.topology().physical());
  } else {
    const routing route = opt.route == scheme::node_aware            ? routing::node_aware
                          : opt.route == scheme::node_aware_advanced ? routing::node_aware_advanced
                                                                     : routing::grid;
    std::size_t from = 0;
    while (from <= grids_list.size()) {
      const std::size_t comma = std::min(grids_list.find(',', from), grids_list.size());
      const std::string spec = grids_list.substr(from, comma - from);
      from = comma + 1;
      if (spec.empty()) continue;
      try {
        candidates.push_back({virtual_grid::parse(spec, ctx.machine()), route});
        make_router(route, candidates.back().grid, ctx.machine());
      } catch (const std::invalid_argument& e) {
        if (ctx.rank() == 0) std::fprintf(stderr, "transit: error: --grids: %s\n", e.what());
        return 2;
      }
    }
  }
  std::vector<row> rows;
  for (const auto& c : candidates)
    rows.push_back({c, predict_step(ctx.machine(), c.grid, c.route, buffer, workload, costs, named_network(ctx))});
  if (measure_flag) {
    // Interleaved, not grid after grid: round i runs every grid once, starting at a different grid
    // each round, so a burst of load on a shared machine (or the machine warming up) lands on
    // one run of several grids rather than on every run of one grid; each grid's time is the
    // median of its runs. One unmeasured run first takes the first touch of memory (page faults,
    // the allocator growing) off the first grid's measurement.
    const auto options_for = [&](const row& r) {
      options o = opt;
      o.route = scheme_of(r.candidate.route);
      o.grid = r.candidate.spec();
      o.buffer_items = buffer;
      return o;
    };
    progress line("model " + opt.kernel + " --measure", "run", progress::for_this_process(ctx.rank() == 0, opt.quiet));
    const progress_ticker ticking(ctx, line);
    const int runs = 1 + opt.repeat * static_cast<int>(rows.size());
    if (!rows.empty()) {
      line.update(0, runs, "warm-up, grid " + rows.front().candidate.spec());
      run_once(ctx, options_for(rows.front()), 0);
    }
    std::vector<std::vector<double>> seconds(rows.size()), rates(rows.size());
    for (int i = 0; i < opt.repeat; ++i) {
      for (std::size_t j = 0; j < rows.size(); ++j) {
        const std::size_t at = (j + static_cast<std::size_t>(i)) % rows.size();
        row& r = rows[at];
        line.update(1 + i * static_cast<int>(rows.size()) + static_cast<int>(j), runs, "grid " + r.candidate.spec());
        const record rec = run_once(ctx, options_for(r), i);
        seconds[at].push_back(rec.seconds);
        rates[at].push_back(rec.rate);
        r.measured_messages = rec.messages_sent;
        r.verified &= rec.verified;
      }
    }
    for (std::size_t j = 0; j < rows.size(); ++j) {
      rows[j].measured_seconds = median(seconds[j], std::nan(""));
      rows[j].measured_rate = median(rates[j], std::nan(""));
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const row& a, const row& b) { return a.predicted.seconds < b.predicted.seconds; });
  std::vector<double> predicted, measured;
  for (const auto& r : rows) {
    predicted.push_back(r.predicted.seconds);
    measured.push_back(r.measured_seconds);
  }
  const double correlation = measure_flag ? rank_correlation(predicted, measured) : std::nan("");
  bool all_verified = true;
  for (const auto& r : rows) all_verified &= r.verified;
  if (ctx.rank() != 0) return all_verified ? 0 : 1;

  const std::string costs_from_text =
      !calibration_file.empty() ? detail::concat("calibration ", calibration_file, " (one PE per core)")
      : status.streamer ? detail::concat("profile ", status.path.string(), status.exact ? "" : " (closest entry)")
                      : "built-in costs (no calibrated profile for this job)";
  if (!status.error.empty()) std::fprintf(stderr, "transit model: %s; using built-in costs\n", status.error.c_str());
  if (opt.json) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const row& r = rows[i];
      json out = {{"kind", "model"},
                  {"kernel", opt.kernel},
                  {"backend", std::string(ctx.backend())},
                  {"pes", ctx.size()},
                  {"nodes", ctx.machine().num_nodes()},
                  {"grid", r.candidate.grid.ndims() == 1 ? std::string("direct") : r.candidate.grid.str()},
                  {"routing", std::string(to_string(r.candidate.route))},
                  {"buffer_items", buffer},
                  {"item_bytes", workload.item_bytes},
                  {"items_per_pe", workload.items_per_pe},
                  {"predicted_seconds", r.predicted.seconds},
                  {"predicted_message_seconds", r.predicted.message_seconds},
                  {"predicted_byte_seconds", r.predicted.byte_seconds},
                  {"predicted_item_seconds", r.predicted.item_seconds},
                  {"predicted_flush_seconds", r.predicted.flush_seconds},
                  {"predicted_link_seconds", r.predicted.link_seconds},
                  {"predicted_messages", r.predicted.messages},
                  {"predicted_inter_node_messages", r.predicted.inter_node_messages},
                  {"predicted_item_hops", r.predicted.item_hops},
                  {"predicted_bytes", r.predicted.bytes},
                  {"average_hops", r.predicted.average_hops},
                  {"links_per_pe", r.predicted.links_per_pe},
                  {"predicted_rank", i + 1},
                  {"costs", costs_from_text}};
      if (measure_flag) {
        out["measured_seconds"] = r.measured_seconds;
        out["measured_items_per_second_per_pe"] = r.measured_rate;
        out["measured_messages"] = r.measured_messages;
        out["verified"] = r.verified;
      }
      std::printf("%s\n", out.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    }
    if (measure_flag) {
      json summary = {{"kind", "model_summary"}, {"kernel", opt.kernel}, {"pes", ctx.size()},
                      {"candidates", rows.size()},  {"rank_correlation", correlation}};
      std::printf("%s\n", summary.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    }
  } else {
    std::printf("transit model %s: %s backend, %d PEs, %d nodes, %.0f items of %zu bytes per PE, buffer %zu items\n"
                "costs: %s\n",
                opt.kernel.c_str(), std::string(ctx.backend()).c_str(), ctx.size(), ctx.machine().num_nodes(),
                workload.items_per_pe, workload.item_bytes, buffer, costs_from_text.c_str());
    std::printf("%-30s %6s %6s %12s %12s %12s", "grid", "links", "hops", "messages", "predicted s", "items/s/PE");
    if (measure_flag) std::printf(" %12s %12s %12s", "measured s", "items/s/PE", "messages");
    std::printf("\n");
    for (const auto& r : rows) {
      const double rate = r.predicted.seconds > 0 ? workload.items_per_pe / r.predicted.seconds : 0;
      std::printf("%-30s %6zu %6.2f %12llu %12.6f %12.4g", r.candidate.name().c_str(), r.predicted.links_per_pe,
                  r.predicted.average_hops, static_cast<unsigned long long>(r.predicted.messages), r.predicted.seconds,
                  rate);
      if (measure_flag)
        std::printf(" %12.6f %12.4g %12llu%s", r.measured_seconds, r.measured_rate,
                    static_cast<unsigned long long>(r.measured_messages), r.verified ? "" : "  NOT VERIFIED");
      std::printf("\n");
    }
    if (measure_flag)
      std::printf("rank correlation of predicted and measured times (Spearman): %.3f over %zu grids\n", correlation,
                  rows.size());
  }
  std::fflush(stdout);
  return all_verified ? 0 : 1;
}

void add_model_options(CLI::App& model) {
  add_kernel_commands(model, model_line, [](CLI::App& sub) {
    add_flag_once(sub, "--measure", measure_flag, "run the kernel on every candidate grid beside the prediction");
    sub.add_option("--calibration", calibration_file,
                   "costs of a simulated machine, FILE = scripts/calibrations/NAME.json (as scripts/simulate's "
                   "modelled mode charges them, one PE per core) instead of the calibrated profile");
    sub.add_option("--grids", grids_list,
                   "predict only these grids, comma-separated --grid specs (direct,32x16,8x4x16), with --scheme's routing");
  });
}

const bool registered = register_command({
    .name = "model",
    .summary = "predict a kernel's time on every candidate grid (--measure: and run it): transit model KERNEL",
    .add_options = add_model_options,
    .run = model_command,
});

}  // namespace

}  // namespace transit::cli
