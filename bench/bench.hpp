#pragma once
// The benchmark kernels (bench/*.cpp, the library transit_bench): their registry, the driver that
// resolves a run's options, times it and reduces its record over the PEs, the record's JSON and
// text forms, and helpers for kernels. A front end fills `options` and each kernel's option table
// (plain data, apps/common/option_table.hpp) and calls run_once: the transit command
// (tools/transit/bench.cpp) is one; nothing here parses a command line.
//
// A kernel is a collective function that builds its streamers, runs its measured region between
// two barriers (measure()), verifies its result and returns this PE's share of the record; the
// driver reduces that over PEs. Each kernel file registers itself (register_kernel,
// bench/README.md): no central table to edit.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/option_table.hpp"
#include "transit/detail/core/clock.hpp"
#include "core/median.hpp"
#include "transit/transit.hpp"

namespace transit::bench {

using detail::median;

/// JSON objects keep their fields in insertion order (kernel first), for people reading them.
using json = nlohmann::ordered_json;

enum class scheme { none, grid, node_aware, node_aware_advanced, mpi_raw };
std::string_view to_string(scheme s) noexcept;
/// Every scheme with its --scheme name, in the order the help lists them.
const std::vector<std::pair<std::string, scheme>>& schemes();

/// The options every kernel takes (the transit command adds them to each `bench KERNEL` command).
/// Kernel-specific options belong to their kernel's file. 0 in a count = the kernel's default.
struct options {
  std::string kernel;
  scheme route = scheme::grid;
  std::string grid = "node";        // --grid: virtual_grid::parse spec; ignored by --scheme none
  std::size_t item_bytes = 0;       // --item-bytes: one of the kernel's item_sizes
  std::uint64_t items_per_pe = 0;   // --items-per-pe
  std::size_t buffer_items = 1024;  // --buffer-items (G); 0 = automatic (calibrated profile)
  std::uint64_t flush_us = 0;       // --flush-us
  int repeat = 1;                   // --repeat
  bool json = false;                // --json
  std::uint64_t seed = 1;           // --seed: random streams (not randomaccess: HPCC fixes it)
  int steps = 0;                    // --steps: steps per run, each of items_per_pe (0: 1, or 30 with --tune)
  bool tune = false;                // --tune: streamer_options::tune
  bool quiet = false;               // --quiet: no progress line on the terminal
  bool grid_given = false;          // whether --grid was given (exchange: the grid method's grid)
};

/// Options that do not go together (found by finish_options or a kernel's check), before any PE
/// starts. A front end reports it as a usage error: "<option>: got '<value>', expected <what>".
struct option_error : std::invalid_argument {
  option_error(std::string option_name, std::string value_text, std::string what_expected);
  std::string option, value, expected;
};

struct setup;
struct measurement;

/// A kernel of `transit bench`, registered from its own file at start-up:
///   const bool registered = register_kernel({.name = "histogram", ...});
/// Its parameters (the option table) live in that file: set by the command line before any PE
/// starts, read-only while the job runs.
struct kernel_entry {
  std::string name;
  std::string summary{};  // one line for `transit bench --help`
  /// The item sizes --item-bytes accepts; the first is the default. Most kernels have one size.
  std::vector<std::size_t> item_sizes{};
  /// Collective: runs the kernel once (see measurement).
  std::function<measurement(context&, const setup&)> run{};
  /// The kernel's own options, after the common ones on its `bench NAME` command.
  apps::option_table own_options{};
  /// Optional: text after the options in `bench NAME --help`.
  std::string footer{};
  /// Optional: items per PE without --items-per-pe (default 2^20). Called after parsing.
  std::function<std::uint64_t()> default_items{};
  /// Optional: checks across options after parsing, before any PE starts (throws option_error).
  std::function<void(const options&)> check{};
  std::uint64_t max_items_per_pe = std::uint64_t{1} << 40;  // what --items-per-pe accepts
  /// A larger --buffer-items is reduced to this (randomaccess: its look-ahead limit); 0 = none.
  std::size_t max_buffer_items = 0;
  int min_pes = 1;  // checked once the job's size is known
  /// Whether the kernel has a `--scheme mpi-raw` version (a plain MPI program, bench/mpi_raw.cpp).
  bool mpi_raw = false;
  /// Whether the kernel runs --steps steps (with a workload too, it takes --tune).
  bool steps = false;
  /// Optional: the kernel's traffic for the cost model (`transit model`), per step.
  std::function<step_workload(const context&, const setup&)> workload{};
};

/// Adds a kernel; call from a namespace-scope initialiser. Returns true (so the call can
/// initialise a constant). A second kernel of the same name is an internal error.
bool register_kernel(kernel_entry kernel);
/// Every registered kernel, sorted by name.
const std::vector<kernel_entry>& kernels();
/// The kernel called `name`, or nullptr.
const kernel_entry* find_kernel(std::string_view name);

/// Local: what a front end does once it has parsed `opt` for kernel `k`, before any PE starts:
/// the kernel's item size when none was given, then the checks across options (--buffer-items
/// times --item-bytes within 1 GiB, --tune and --steps only for kernels that take them, mpi-raw only
/// for kernels that have it) and the kernel's own. `tune_name` names what asked for tuning
/// (--tune, TRANSIT_TUNE) in messages. Throws option_error.
void finish_options(const kernel_entry& k, options& opt, std::string_view tune_name = "--tune");

/// The largest --buffer-items a front end accepts, and the bytes a peer buffer may hold.
inline constexpr std::size_t max_buffer_items = std::size_t{1} << 24;
inline constexpr std::uint64_t max_buffer_bytes = std::uint64_t{1} << 30;

/// Local: an option taking an integer from `min` to `max`, bound to `target`; a bad value reads
/// "expected <what> in [min, max]". The row most kernel options are.
apps::option_spec integer_option(std::string names, std::string help, apps::option_target target, std::int64_t min,
                                 std::int64_t max, std::string type_name, const std::string& what = "an integer");

/// Local: an option taking a count from 1 to 2^32 ("a positive integer up to 2^32"), bound to
/// `target`: persons, logical processes, table slots.
apps::option_spec positive_count_option(std::string names, std::string help, apps::option_target target,
                                        std::string type_name);

/// Options two kernels share: --table-slots S, entries per PE of a kernel's distributed table
/// (histogram, index-gather).
apps::option_spec table_slots_option(std::uint64_t& slots);

/// --api streamer|active: the kernel written with streamers (default) or with active_messages
/// (histogram, phold); with `c`, also --api c: through the C API (transit.h; histogram). The
/// record's "api" says which ran.
apps::option_spec api_option(std::string& api, bool c = false);

/// One PE's view of a run, as the kernel sees it.
struct setup {
  const options& opt;
  streamer_options stream;      // from --scheme, --grid, --buffer-items, --flush-us, --tune
  std::string grid_name;        // "direct", "2x4", ...
  std::uint64_t items_per_pe;   // --items-per-pe or the kernel's default (per step)
  std::size_t item_bytes;       // --item-bytes or the kernel's natural size
  int steps = 1;                // --steps (30 with --tune unless given)
};

/// What a kernel returns; `seconds`, `items_per_pe` and `extra` must already agree on every PE.
struct measurement {
  double seconds = 0;          // max over PEs of the measured region
  double items_per_pe = 0;     // items each PE handled in that region (the rate's numerator)
  bool verified = false;       // this PE's verdict
  streamer_stats stats;        // this PE's, summed over the kernel's streamers
  std::uint64_t buffer_bytes_bound = 0;  // this PE's thesis bound: G x item bytes x out-links
  std::size_t buffer_items = 0; // what the streamer started with when --buffer-items 0 (automatic)
  json extra = json::object(); // kernel-specific fields, appended to the record
  /// A kernel that measures several variants in one run (exchange --method all): one record per
  /// entry, whose fields are appended after `extra`'s and replace common ones of the same name.
  std::vector<json> variants{};
  /// Text output for people instead of the records' lines (e.g. a table of the variants).
  std::string table{};
};

/// One run reduced over all PEs (identical on every PE).
struct record {
  std::string kernel, backend, scheme_name, grid;
  int pes = 0, nodes = 0;
  std::size_t item_bytes = 0, buffer_items = 0;
  std::uint64_t flush_us = 0;
  double items_per_pe = 0, seconds = 0, rate = 0;
  std::uint64_t messages_sent = 0, bytes_sent = 0, items_forwarded = 0;
  std::uint64_t inter_node_messages = 0;  // sent between PEs on different nodes, over all PEs
  std::uint64_t marker_messages = 0;      // of messages_sent, those that carry no item (final markers)
  std::uint64_t acknowledgement_messages = 0;  // not in messages_sent: steps ending by acknowledgement
  std::uint64_t confirmed_messages = 0;        // of messages_sent, confirmed by the transport instead
  std::uint64_t direct_messages = 0;           // of those, sent around the grid to the items' destination
  // Messages the PEs' transports sent through MPI during the run (not those handed to a PE thread
  // of the same rank), over all PEs; and the largest peak resident set of a PE's process, KiB.
  std::uint64_t network_messages = 0, peak_rss_kib = 0;
  std::uint64_t buffer_bytes_peak = 0, buffer_bytes_bound = 0;
  bool verified = false;
  int run = 0;
  json extra = json::object();
  std::vector<json> variants{};  // see measurement::variants
  std::string table{};
};

/// Collective: resolves the options for this job (throws std::invalid_argument for a grid that
/// does not fit), runs the kernel once and reduces the result.
record run_once(context& ctx, const options& opt, int run_index);
/// Streamer options, grid and sizes for this job. Throws std::invalid_argument for a grid spec
/// that does not parse or does not fit the PEs, for a node-aware scheme on a grid that is not
/// nodes x PEs, for --scheme mpi-raw off the mpi backend, and for too few PEs for the kernel.
setup resolve(const context& ctx, const options& opt);

/// The record fields of a kernel run in --steps: every step's time (max over PEs) and, for a
/// tuned streamer, the tuning history (API.md: `tuning`, `final_buffer_items`, `final_grid`) and
/// the rate once settled. `step_seconds` holds this PE's times; `stream` the kernel's streamer.
/// Collective.
template <class Stream>
void add_step_fields(context& ctx, const setup& s, const Stream& stream, const std::vector<double>& step_seconds,
                     measurement& m);
/// The step fields every kernel that runs steps reports, transit's or a plain MPI baseline's:
/// steps, step_seconds (each step's slowest PE), median_step_seconds (a step's latency, when the
/// steps are small) and second_half_items_per_second_per_pe. Collective. Returns step_seconds.
std::vector<double> add_step_times(context& ctx, const setup& s, const std::vector<double>& step_seconds,
                                   measurement& m);
/// The non-template part of add_step_fields.
void add_step_fields(context& ctx, const setup& s, const streamer_stats& stats, const streamer_options& current,
                     const std::vector<double>& step_seconds, measurement& m);

/// The record as one line of JSON (API.md's fields, then the kernel's). Non-finite numbers,
/// which JSON cannot hold, are written as null.
std::string to_json(const record& r);
/// The record as one line for people.
std::string to_text(const record& r);
/// A number for people, two decimals and k, M or G: "1.23 M".
std::string human(double value);

// ---- helpers for kernels ----

/// Runs `work` between two barriers; returns the max over PEs of its elapsed seconds.
template <class Work>
double measure(context& ctx, Work&& work) {
  ctx.barrier();
  const auto start = detail::steady_clock::now();
  work();
  const double mine = detail::seconds_since(start);
  ctx.barrier();
  return ctx.allreduce(mine, reduce_op::max);
}

/// measure() of `steps` calls of step(step), each call's elapsed seconds appended to
/// `step_seconds` (this PE's times, for add_step_fields).
template <class Step>
double measure_steps(context& ctx, std::uint64_t steps, std::vector<double>& step_seconds, Step&& step) {
  return measure(ctx, [&] {
    for (std::uint64_t i = 0; i < steps; ++i) {
      const auto start = detail::steady_clock::now();
      step(i);
      step_seconds.push_back(detail::seconds_since(start));
    }
  });
}

/// A progress bar on stderr, PE 0 only, and only when stderr is a terminal (logs and test output
/// stay clean). Appears once a run has taken a second; update() is cheap enough for every item.
class progress_bar {
 public:
  progress_bar(const context& ctx, std::string label, std::uint64_t total);
  ~progress_bar();
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;
  /// Called with a count that only grows, per item or per chunk of items.
  void update(std::uint64_t done) {
    if (enabled_ && done >= next_draw_) [[unlikely]] {
      next_draw_ = done + 0x10000;
      draw(done);
    }
  }

 private:
  void draw(std::uint64_t done);
  bool enabled_;
  bool shown_ = false;
  std::uint64_t next_draw_ = 0;
  std::string label_;
  std::uint64_t total_;
  detail::steady_clock::time_point start_;
};

/// A pointer to this PE's state, for captureless active-message handlers (they find it through
/// their context). A thread_local is one per PE on the local backend and one per rank under
/// mpirun; a simulated job runs all its ranks in one thread and without per-rank copies of globals
/// (scripts/simulate, docs/simulation.md), so there the PE's rank picks a slot.
template <class T>
class pe_pointer {
 public:
  void set(const context& ctx, T* state) {
#ifdef TRANSIT_SIMGRID
    if (slots_.size() < static_cast<std::size_t>(ctx.size())) slots_.resize(static_cast<std::size_t>(ctx.size()));
    slots_[static_cast<std::size_t>(ctx.rank())] = state;
#else
    static_cast<void>(ctx);
    mine_ = state;
#endif
  }
  T& get(const context& ctx) const noexcept {
#ifdef TRANSIT_SIMGRID
    return *slots_[static_cast<std::size_t>(ctx.rank())];
#else
    static_cast<void>(ctx);
    return *mine_;
#endif
  }

 private:
#ifdef TRANSIT_SIMGRID
  std::vector<T*> slots_;
#else
  static inline thread_local T* mine_ = nullptr;
#endif
};

/// SplitMix64: small state, fast, good enough for benchmark traffic; one stream per PE.
class rng {
 public:
  explicit rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() noexcept { return mix(state_ += 0x9e3779b97f4a7c15ULL); }
  /// Uniform in [0, n) from 32 random bits (Lemire's multiply-shift, no division).
  static std::uint32_t below(std::uint32_t bits, std::uint64_t n) noexcept {
    return static_cast<std::uint32_t>((std::uint64_t{bits} * n) >> 32);
  }
  static std::uint64_t mix(std::uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

/// A uniformly random entry of a table with `slots` entries on each of `pes` PEs, from one draw.
struct table_entry {
  std::uint32_t pe;
  std::uint32_t slot;
};
inline table_entry random_entry(rng& random, std::uint64_t pes, std::uint64_t slots) {
  const std::uint64_t r = random.next();
  return {rng::below(static_cast<std::uint32_t>(r >> 32), pes), rng::below(static_cast<std::uint32_t>(r), slots)};
}

/// Whether a kernel's insert loop should poll its streamers after insert number `i`. Polling now
/// and then delivers the items a PE sends itself (they wait in the streamer's local queue until it
/// polls) and moves MPI's rendezvous protocol for messages above its eager limit, which advances
/// only inside MPI calls (measured on 2 ranks: +20% for histogram, 2x for randomaccess).
inline constexpr std::uint64_t poll_interval = 256;
inline bool poll_due(std::uint64_t i) { return i % poll_interval == poll_interval - 1; }

/// This PE's seed for a kernel's random stream.
inline std::uint64_t pe_seed(const options& opt, int rank, std::uint64_t salt) {
  return rng::mix(opt.seed * 0x100000001b3ULL + salt) ^ rng::mix(static_cast<std::uint64_t>(rank) + 1);
}

/// --scheme mpi-raw (bench/mpi_raw.cpp): the kernel as a plain MPI program, one MPI_Isend per
/// item and none of transit's layers; mpi backend only (resolve() refuses it elsewhere).
measurement histogram_mpi_raw(context& ctx, const setup& s, std::uint64_t table_slots);
measurement alltoall_mpi_raw(context& ctx, const setup& s);
/// hotspot --scheme mpi-raw: `iterations` rounds of `ops` blocking fetch-adds of `delta` on
/// `target`'s word (which starts at `initial` on every PE), each one MPI message to the owner and
/// one back with the old value (the owner serves whenever it waits), a barrier between rounds: the
/// cheapest routed design, no forwarding and no aggregation. A get is a fetch-add of 0: the same
/// two messages; with `expected_reply` set, every old value that came back must equal it.
struct raw_fetch_adds {
  double seconds = 0;       // measure()'s time of the whole run
  double busy_seconds = 0;  // this PE's time inside its rounds' operations
  std::uint64_t word = 0;   // this PE's word at the end
  std::uint64_t messages = 0;  // requests and replies this PE sent
  std::uint64_t wrong_replies = 0;  // old values other than expected_reply
};
raw_fetch_adds hotspot_mpi_raw(context& ctx, int ops, int iterations, int target, std::uint64_t delta,
                               std::uint64_t initial, std::optional<std::uint64_t> expected_reply);
/// hotspot --scheme mpi-raw --op lock: a flat lock server. Each PE's lock guards its counter; a
/// locker sends a request to the home, which grants in arrival order (FIFO) with the counter's
/// value in the grant, and the holder sends the value plus one back with its release: three
/// plain MPI messages per lock, no forwarding, no aggregation, barriers between rounds as above.
struct raw_locks {
  double seconds = 0;          // measure()'s time of the whole run
  double busy_seconds = 0;     // this PE's time inside its rounds' operations
  std::uint64_t counter = 0;   // this PE's counter at the end: one per lock taken here
  std::uint64_t messages = 0;  // requests, grants and releases this PE sent
};
raw_locks hotspot_mpi_raw_locks(context& ctx, int ops, int iterations, int target);

template <class Stream>
void add_step_fields(context& ctx, const setup& s, const Stream& stream, const std::vector<double>& step_seconds,
                     measurement& m) {
  add_step_fields(ctx, s, stream.stats(), stream.current_options(), step_seconds, m);
}

/// Adds counters of a second streamer (index-gather runs two).
void accumulate(streamer_stats& into, const streamer_stats& s);
/// The thesis bound on this PE's aggregation buffers: G x item bytes x out-links of its router.
std::uint64_t buffer_bound(const context& ctx, const streamer_options& so, std::size_t item_bytes);
/// The same for a streamer that may have been tuned: the largest over every configuration in
/// `stats.tuning` and the current one.
std::uint64_t buffer_bound(const context& ctx, const streamer_options& so, const streamer_stats& stats,
                           std::size_t item_bytes);
/// True on every PE when it is true on all of them (collective).
bool all_of(context& ctx, bool mine);

}  // namespace transit::bench
