// transit calibrate [streamer|protocols|all]: measures this job's links (tuning/calibrate.hpp) and
// writes the profile file that buffer_items = 0, tune = true and `transit model` read. The
// profile has a section per kind of calibration: `streamer` (message costs, bandwidth curve) and
// `protocols` (issue 12: the protocol profiles of multi-region transfers and their winner maps).
//
// On the mpi backend calibration also chooses Open MPI's shared-memory single-copy mechanism: a
// run measures the mechanism in effect and records its bandwidth for 8 to 64 KiB messages; the
// mechanism cannot change once MPI has started, so a run on a host where one of "default" and
// "none" is not yet measured measures that one (TRANSIT_SINGLE_COPY, set here before the job
// starts), and once both are, the faster is the profile's choice, which the mpi backend applies.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "progress.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/protocols/calibrate.hpp"

namespace transit::cli {

namespace {

using json = nlohmann::ordered_json;  // fields in insertion order, as the bench records

const std::vector<std::string> mechanisms{"default", "none"};

struct calibrate_settings {
  std::string what = "all";
  std::string profile;  // --profile
  bool json = false;
  std::size_t max_bytes = std::size_t{4} << 20;
  double seconds_per_point = 0.05;
  std::string single_copy;  // the mechanism this run measures (mpi)
  bool quiet = false;       // --quiet: no progress line
} settings;

/// Before the job: --profile for every layer, and the single-copy mechanism to measure.
void before_launch() {
  if (!settings.profile.empty()) setenv("TRANSIT_PROFILE", settings.profile.c_str(), 1);
  if (const char* user = std::getenv("OMPI_MCA_btl_vader_single_copy_mechanism"); user != nullptr && *user != '\0') {
    settings.single_copy = user;
    return;
  }
  if (const char* forced = std::getenv("TRANSIT_SINGLE_COPY"); forced != nullptr && *forced != '\0') {
    settings.single_copy = forced;
    return;
  }
  std::string next = "default";
  try {
    const auto file = profile_file::load(default_profile_path());
    if (const auto entry = file.find_transport("mpi", this_host())) {
      next = entry->single_copy_choice.empty() ? next : entry->single_copy_choice;
      for (const auto& m : mechanisms) {
        if (!entry->single_copy_bandwidth.contains(m)) {
          next = m;
          break;
        }
      }
    }
  } catch (const profile_error&) {
    // measured with the default; the damaged file is replaced (and named) when written
  }
  settings.single_copy = next;
  setenv("TRANSIT_SINGLE_COPY", next.c_str(), 1);
}

std::string si(double value, const char* unit) {
  char text[48];
  if (value >= 1e9) std::snprintf(text, sizeof text, "%.2f G%s", value / 1e9, unit);
  else if (value >= 1e6) std::snprintf(text, sizeof text, "%.2f M%s", value / 1e6, unit);
  else if (value >= 1e3) std::snprintf(text, sizeof text, "%.2f k%s", value / 1e3, unit);
  else std::snprintf(text, sizeof text, "%.2f %s", value, unit);
  return text;
}

std::string bytes_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

/// Mean bandwidth of the curve's points from 8 to 64 KiB (the aggregated messages' sizes).
double mid_bandwidth(const link_calibration& link) {
  double sum = 0;
  int n = 0;
  for (const auto& p : link.curve) {
    if (p.message_bytes < 8192 || p.message_bytes > 65536) continue;
    sum += p.bytes_per_second;
    ++n;
  }
  return n > 0 ? sum / n : 0;
}

void print_table(const streamer_profile& p, const std::string& path, const std::string& transport_note,
                 double seconds) {
  std::printf("transit calibrate streamer: %s backend, %d PEs, %d per node, host %s (%.1f s)\n", p.backend.c_str(),
              p.pes, p.pes_per_node, p.host.c_str(), seconds);
  std::printf("%-12s %-7s %14s %14s %14s %14s\n", "link", "PEs", "alpha/message", "beta/byte", "per item",
              "peak");
  for (const auto* link : {&p.intra, &p.inter}) {
    const char* name = link == &p.intra ? "intra-node" : "inter-node";
    if (!link->measured) {
      std::printf("%-12s %-7s %s\n", name, "-", "not measured (the job has no such link)");
      continue;
    }
    double peak = 0;
    for (const auto& pt : link->curve) peak = std::max(peak, pt.bytes_per_second);
    const std::string pes = std::to_string(link->from_pe) + "-" + std::to_string(link->to_pe);
    char alpha[32], beta[32], item[32];
    std::snprintf(alpha, sizeof alpha, "%.3g us", link->costs.alpha * 1e6);
    std::snprintf(beta, sizeof beta, "%.3g ns", link->costs.beta * 1e9);
    std::snprintf(item, sizeof item, "%.3g ns", link->costs.per_item * 1e9);
    std::printf("%-12s %-7s %14s %14s %14s %14s\n", name, pes.c_str(), alpha, beta, item, si(peak, "B/s").c_str());
  }
  std::printf("\nstreaming bandwidth (thesis fig. 2.5b), both PEs of a pair sending:\n%-14s %14s %14s\n",
              "message bytes", "intra-node", "inter-node");
  const std::size_t points = std::max(p.intra.curve.size(), p.inter.curve.size());
  for (std::size_t i = 0; i < points; ++i) {
    const auto cell = [&](const link_calibration& l) {
      return i < l.curve.size() ? si(l.curve[i].bytes_per_second, "B/s") : std::string("-");
    };
    const std::size_t bytes = i < p.intra.curve.size() ? p.intra.curve[i].message_bytes : p.inter.curve[i].message_bytes;
    std::printf("%-14s %14s %14s\n", bytes_text(bytes).c_str(), cell(p.intra).c_str(), cell(p.inter).c_str());
  }
  std::printf("\nbuffer sizes (%s curve, peak %s): 50%% at %s, 75%% at %s, 90%% at %s\n",
              p.inter.measured ? "inter-node" : "intra-node", si(p.peak_bytes_per_second, "B/s").c_str(),
              bytes_text(p.buffer_bytes_50).c_str(), bytes_text(p.buffer_bytes_75).c_str(),
              bytes_text(p.buffer_bytes_90).c_str());
  std::printf("buffer_items = 0 now means %zu items of 8 bytes (%zu of 16, %zu of 64): per-message cost at most "
              "2%% of an item's\n",
              automatic_buffer_items(p, 8), automatic_buffer_items(p, 16), automatic_buffer_items(p, 64));
  if (!transport_note.empty()) std::printf("%s\n", transport_note.c_str());
  std::printf("profile: %s (streamer entry %s / %d PEs per node / %s)\n", path.c_str(), p.backend.c_str(),
              p.pes_per_node, p.host.c_str());
  std::printf("plot: transit calibrate streamer --json ... | tools/plot.py --out plots\n");
}

/// Rank 0: records the entry (and the mpi transport measurement) and prints. Returns the status.
int record(context& ctx, const streamer_profile& p, double seconds) {
  const std::filesystem::path path = default_profile_path();
  profile_file file = profile_file::empty(path);
  try {
    file = profile_file::load(path);
  } catch (const profile_error& e) {
    std::fprintf(stderr, "transit calibrate: replacing the damaged profile: %s\n", e.what());
  }
  std::string transport_note;
  json transport = nullptr;
  if (ctx.backend() == "mpi") {
    transport_profile t;
    if (auto known = file.find_transport("mpi", p.host)) t = *known;
    t.backend = "mpi";
    t.host = p.host;
    t.pes_per_node = p.pes_per_node;
    t.single_copy_bandwidth[p.single_copy] = mid_bandwidth(p.intra.measured ? p.intra : p.inter);
    std::string missing;
    for (const auto& m : mechanisms)
      if (!t.single_copy_bandwidth.contains(m)) missing = m;
    if (missing.empty()) {
      t.single_copy_choice = t.single_copy_bandwidth["none"] > t.single_copy_bandwidth["default"] ? "none" : "default";
      transport_note = detail::concat("single-copy mechanism: '", t.single_copy_choice, "' (8-64 KiB messages: none ",
                                      si(t.single_copy_bandwidth["none"], "B/s"), ", default ",
                                      si(t.single_copy_bandwidth["default"], "B/s"),
                                      "); the mpi backend applies it before MPI_Init unless you set "
                                      "OMPI_MCA_btl_vader_single_copy_mechanism");
    } else {
      transport_note = detail::concat("single-copy mechanism: measured '", p.single_copy, "' (8-64 KiB messages: ",
                                      si(t.single_copy_bandwidth[p.single_copy], "B/s"), "); run 'transit calibrate' "
                                      "again to measure '", missing, "', and the faster becomes the mpi backend's choice");
    }
    file.put(t);
    transport = {{"single_copy", {{"bytes_per_second", t.single_copy_bandwidth}, {"choice", t.single_copy_choice}}}};
  }
  file.put(p);
  try {
    file.save();
  } catch (const profile_error& e) {
    std::fprintf(stderr, "transit: error: %s\n", e.what());
    return 1;
  }
  if (settings.json) {
    // The profile entry itself, and what this run adds to it.
    json out = {{"kind", "calibration"}, {"section", "streamer"}};
    const json entry = json::parse(to_json_text(p));
    for (const auto& [key, value] : entry.items()) out[key] = value;
    out["seconds"] = seconds;
    out["buffer_items_8B"] = automatic_buffer_items(p, 8);
    out["transport"] = transport;
    out["profile"] = path.string();
    std::printf("%s\n", out.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    print_table(p, path.string(), transport_note, seconds);
  }
  std::fflush(stdout);
  return 0;
}

// ---- transit calibrate protocols: the protocol profiles (issue 12) and their winner maps ----

struct calibrate_params {
  std::size_t max_region_bytes = 64 * 1024;
  std::size_t max_regions = 1024;
  std::size_t max_transfer_bytes = std::size_t{1} << 20;
  int iterations = 5;
  bool one_pair = false;
  bool dry_run = false;
} cparams;

char letter(transfer_protocol p) {
  return p == transfer_protocol::blocking ? 'B' : p == transfer_protocol::pipelined ? 'P' : 'K';
}

/// The map of automatic's choices: rows N, columns S, B/P/K (blocking, pipelined, packed) for the
/// protocol it takes, with a * where that is not the point's own fastest (smoothing overruled it).
void print_map(const char* title, const protocol_table& t) {
  std::printf("%s:", title);
  if (!t.measured) {
    std::printf(" not measured (no such pair in this job)\n");
    return;
  }
  std::vector<std::size_t> sizes, counts;
  for (const auto& p : t.points) {
    if (std::find(sizes.begin(), sizes.end(), p.region_bytes) == sizes.end()) sizes.push_back(p.region_bytes);
    if (std::find(counts.begin(), counts.end(), p.regions) == counts.end()) counts.push_back(p.regions);
  }
  std::sort(sizes.begin(), sizes.end());
  std::sort(counts.begin(), counts.end());
  std::printf(" fastest protocol as automatic takes it (smoothed; B blocking, P pipelined, K packed; * the point's own "
              "fastest differs; . not measured)\n%8s",
              "N \\ S");
  for (const auto s : sizes) std::printf(" %6zu", s);
  std::printf("\n");
  for (const auto n : counts) {
    std::printf("%8zu", n);
    for (const auto s : sizes) {
      const auto it = std::find_if(t.points.begin(), t.points.end(),
                                   [&](const protocol_point& p) { return p.region_bytes == s && p.regions == n; });
      if (it == t.points.end()) {
        std::printf(" %6c", '.');
      } else {
        const transfer_protocol chosen = t.smoothed_fastest(*it);
        std::printf(" %5c%c", letter(chosen), chosen == it->fastest() ? ' ' : '*');
      }
    }
    std::printf("\n");
  }
}

/// Collective: calibrates the protocol profiles (calibrate_protocols), writes the entry into the
/// "protocols" section of `path` (unless --dry-run) and prints the winner maps, or the entry as
/// JSON. Returns the exit status (2: bad options, 1: the file could not be written).
int run_protocol_calibration(context& ctx, const std::filesystem::path& path, bool json_output) {
  protocol_calibration_options o;
  o.max_region_bytes = cparams.max_region_bytes;
  o.max_regions = cparams.max_regions;
  o.max_transfer_bytes = cparams.max_transfer_bytes;
  o.iterations = cparams.iterations;
  o.loaded = !cparams.one_pair;
  // The points of each table, as calibrate_protocols walks them; a table is measured when the job
  // has such a pair (two PEs of a node, two nodes).
  int points = 0;
  for (std::size_t s = o.min_region_bytes; s <= o.max_region_bytes; s *= 2)
    for (std::size_t n = o.min_regions; n <= o.max_regions && s * n <= o.max_transfer_bytes; n *= 2) ++points;
  const machine& m = ctx.machine();
  const int total = points * ((m.pes_on_node(m.node_of(0)) >= 2 ? 1 : 0) + (m.num_nodes() >= 2 ? 1 : 0));
  progress line("calibrate protocols", "point", progress::for_this_process(ctx.rank() == 0, settings.quiet));
  const progress_ticker ticking(ctx, line);
  int done = 0;
  o.on_point = [&](bool same_node, const protocol_point& point) {
    line.update(++done, total, detail::concat(same_node ? "intra-node" : "inter-node", ", last S = ", point.region_bytes,
                                              " B, N = ", point.regions));
  };
  line.update(0, total);
  protocol_profile p;
  try {
    p = calibrate_protocols(ctx, o);
  } catch (const std::invalid_argument& e) {
    line.clear();
    if (ctx.rank() == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
    return 2;
  }
  line.clear();
  if (ctx.rank() != 0) return 0;
  if (!cparams.dry_run) {
    try {
      save_protocol_profile(path, p);
    } catch (const protocol_profile_error& e) {
      std::fprintf(stderr, "transit: error: %s\n", e.what());
      return 1;
    }
  }
  if (json_output) {
    std::printf("%s\n", to_json_text(p).c_str());
  } else {
    std::printf("protocol profile: %s, %d PEs, %d per node, host %s, %s%s\n", p.backend.c_str(), p.pes, p.pes_per_node,
                p.host.c_str(), cparams.one_pair ? "one pair" : "every PE active",
                cparams.dry_run ? " (not saved)" : (", saved to " + path.string()).c_str());
    print_map("intra-node", p.intra);
    print_map("inter-node", p.inter);
  }
  std::fflush(stdout);
  return 0;
}

/// Adds --max-region-bytes, --max-regions, --max-transfer-bytes, --iterations, --one-pair and
/// --dry-run (bound to cparams).
void add_protocol_calibration_options(CLI::App& app) {
  app.add_option("--max-region-bytes", cparams.max_region_bytes, "protocols: largest region size S, a power of two (default 65536)")
      ->transform(integer_in<std::size_t>(8, std::size_t{1} << 24, "an integer in [8, 16777216]"))
      ->type_name("S");
  app.add_option("--max-regions", cparams.max_regions, "protocols: largest region count N, a power of two (default 1024)")
      ->transform(integer_in<std::size_t>(1, std::size_t{1} << 16, "an integer in [1, 65536]"))
      ->type_name("N");
  app.add_option("--max-transfer-bytes", cparams.max_transfer_bytes, "protocols: leave out points with S x N above (default 1048576)")
      ->transform(integer_in<std::size_t>(8, std::size_t{1} << 30, "an integer in [8, 1073741824]"))
      ->type_name("B");
  app.add_option("--iterations", cparams.iterations, "protocols: timed transfers per point, median taken (default 5)")
      ->transform(integer_in<int>(1, 10'000, "an integer in [1, 10000]"))
      ->type_name("N");
  app.add_flag("--one-pair", cparams.one_pair, "protocols: only PE 0 and its partner transfer (default: every PE)");
  app.add_flag("--dry-run", cparams.dry_run, "protocols: measure and print, do not write the profile");
}

// ---- the command ----

int calibrate(context& ctx) {
  const bool protocols = settings.what == "protocols" || settings.what == "all";
  const bool streamer = settings.what == "streamer" || settings.what == "all";
  int status = 0;
  if (streamer) {
    calibration_options o;
    o.max_message_bytes = settings.max_bytes;
    o.seconds_per_point = settings.seconds_per_point;
    progress line("calibrate streamer", "step", progress::for_this_process(ctx.rank() == 0, settings.quiet));
    const progress_ticker ticking(ctx, line);
    o.on_step = [&line](int done, int total, const std::string& what) { line.update(done, total, what); };
    const auto start = detail::steady_clock::now();
    streamer_profile p;
    try {
      p = calibrate_streamer(ctx, o);
    } catch (const std::invalid_argument& e) {
      line.clear();
      if (ctx.rank() == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
      return 2;
    }
    line.clear();
    p.single_copy = ctx.backend() == "mpi" ? settings.single_copy : "";
    const double seconds = detail::seconds_since(start);
    if (ctx.rank() == 0) status = record(ctx, p, seconds);
  }
  if (protocols) status = std::max(status, run_protocol_calibration(ctx, default_profile_path(), settings.json));
  return ctx.allreduce(status, reduce_op::max);
}

void add_options(CLI::App& app) {
  auto formatter = std::make_shared<CLI::Formatter>();  // its own: the label is not the top level's
  formatter->label("SUBCOMMAND", "WHAT");
  app.formatter(formatter);
  for (const char* what : {"streamer", "protocols", "all"}) {
    CLI::App* sub = app.add_subcommand(what, std::string(what) == "streamer"
                                                 ? "per-message, per-byte and per-item costs, bandwidth curve"
                                             : std::string(what) == "protocols"
                                                 ? "protocol profiles for multi-region transfers (S = 8 B..64 KiB, N = 1..1024), winner maps"
                                                 : "everything (the default)");
    sub->fallthrough();
    sub->final_callback([what] { settings.what = what; });
  }
  app.require_subcommand(0, 1);
  app.add_option("--profile", settings.profile,
                 "profile file (default: TRANSIT_PROFILE, else $XDG_CACHE_HOME/transit/profile.json)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string { return text.empty() ? "got '', expected a file name" : ""; }, ""))
      ->type_name("FILE");
  add_flag_once(app, "--quiet", settings.quiet, "no progress line on stderr (there is none when stderr is not a terminal)");
  add_flag_once(app, "--json", settings.json, "one JSON object on stdout (tools/plot.py draws its bandwidth curve)");
  app.add_option("--max-bytes", settings.max_bytes, "largest message of the bandwidth curve (default 4194304)")
      ->transform(integer_in<std::size_t>(16, std::size_t{1} << 30, "an integer in [16, 1073741824]"))
      ->type_name("B");
  app.add_option("--seconds-per-point", settings.seconds_per_point, "time per measured point (default 0.05)")
      ->transform(real_in(1e-4, 10, "a number of seconds in [0.0001, 10]"))
      ->type_name("S");
  add_protocol_calibration_options(app);
  app.final_callback(before_launch);
}

const bool registered = register_command({
    .name = "calibrate",
    .summary = "measure message costs and streaming bandwidth; write the profile (calibrate --help)",
    .add_options = add_options,
    .run = calibrate,
    .local_pes = 8,
    .local_pes_per_node = 4,
});

}  // namespace

}  // namespace transit::cli
