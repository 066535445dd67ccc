// transit bench exchange: the sparse all-to-all of the crystal router paper (docs/exchange.md).
// Each PE sends one parcel of B bytes to each of K partners, (r +- S*i) mod P for i = 1..K/2 (the
// paper's 26-neighbour pattern with stride S), or to K random PEs, or to all. Every method named by
// --method (all: every one this backend offers) is timed in the same job, its samples interleaved
// with the others' so that a noisy machine's drift hits all alike. A sample times enough exchanges
// back to back to last about 2 ms; a sample's time is its slowest PE's, per exchange;
// seconds_per_exchange is the median over --samples samples. Every byte of a method's first
// exchanges (automatic: of all its timing runs) and of one exchange after the samples is checked.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "bench.hpp"

#include "transit/detail/core/clock.hpp"

namespace transit::bench {

namespace {

// Set by the command line before any PE starts, read-only in the job.
std::string pattern = "nek26";
int neighbors = 26;
int stride = 1;
std::uint64_t parcel_bytes = 8;
std::string method_name = "all";
int samples = 7;
int exchanges_per_sample = 0;  // --exchanges: 0 sizes each method's samples to about 2 ms

constexpr double sample_seconds = 0.002;
using byte_parcels = std::vector<parcel<std::uint8_t>>;

/// The partners of PE `r`. With few PEs the nek26 pattern wraps around: partners repeat and may be
/// r itself; each still gets its parcel, so a PE always sends K parcels of B bytes.
std::vector<int> partners_of(int r, int size, std::uint64_t seed) {
  std::vector<int> out;
  if (pattern == "dense") {
    for (int p = 0; p < size; ++p) {
      if (p != r) out.push_back(p);
    }
  } else if (pattern == "random") {
    std::mt19937_64 rng(rng::mix(seed + 0x9e3779b97f4a7c15ull * (static_cast<std::uint64_t>(r) + 1)));
    std::vector<int> others;
    for (int p = 0; p < size; ++p) {
      if (p != r) others.push_back(p);
    }
    std::shuffle(others.begin(), others.end(), rng);
    others.resize(std::min(others.size(), static_cast<std::size_t>(neighbors)));
    out = std::move(others);
  } else {  // nek26
    const std::int64_t s = stride, p = size;
    for (int i = 1; i <= (neighbors + 1) / 2; ++i) out.push_back(static_cast<int>(((r + s * i) % p + p) % p));
    for (int i = 1; i <= neighbors / 2; ++i) out.push_back(static_cast<int>(((r - s * i) % p + p) % p));
  }
  return out;
}

std::uint8_t byte_at(int source, int dest, std::uint64_t position) {
  return static_cast<std::uint8_t>(source * 131 + dest * 31 + static_cast<int>(position % 251));
}

byte_parcels outgoing_of(int r, int size, std::uint64_t seed) {
  byte_parcels out;
  std::vector<std::uint64_t> written(static_cast<std::size_t>(size), 0);
  for (const int p : partners_of(r, size, seed)) {
    parcel<std::uint8_t> q{p, std::vector<std::uint8_t>(parcel_bytes)};
    for (auto& b : q.items) b = byte_at(r, p, written[static_cast<std::size_t>(p)]++);
    out.push_back(std::move(q));
  }
  return out;
}

/// What this PE must receive from one exchange: every source's bytes, in order, and nothing else.
byte_parcels expected_of(int me, int size, std::uint64_t seed) {
  std::vector<std::uint64_t> expected(static_cast<std::size_t>(size), 0);
  for (int s = 0; s < size; ++s) {
    for (const int p : partners_of(s, size, seed)) {
      if (p == me) expected[static_cast<std::size_t>(s)] += parcel_bytes;
    }
  }
  byte_parcels out;
  for (int s = 0; s < size; ++s) {
    if (expected[static_cast<std::size_t>(s)] == 0) continue;
    parcel<std::uint8_t> q{s, std::vector<std::uint8_t>(expected[static_cast<std::size_t>(s)])};
    for (std::uint64_t k = 0; k < q.items.size(); ++k) q.items[k] = byte_at(s, me, k);
    out.push_back(std::move(q));
  }
  return out;
}

/// This PE's verdict on one exchange's result. A comparison with the result computed once: the
/// check runs between automatic's timed runs, and a check that regenerates the bytes (100 us at
/// 26 x 4 KiB) made every candidate's time there 2-4x its steady time on 4 oversubscribed ranks,
/// squeezing the candidates together.
bool check(const byte_parcels& in, const byte_parcels& expected) {
  if (in.size() != expected.size()) return false;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i].peer != expected[i].peer || in[i].items != expected[i].items) return false;
  return true;
}

// direct_fixed, mpi_alltoallv_fixed, mpi_neighbor_fixed: the method with
// exchange_options::fixed_pattern (the bench's pattern is fixed): consensus or counts in the first
// exchange only, as a program that knows its pattern in advance runs it.
constexpr std::string_view fixed_suffix = "_fixed";

struct method_choice {
  exchange_method method;
  bool fixed_pattern = false;
  std::string name() const { return std::string(to_string(method)) + (fixed_pattern ? std::string(fixed_suffix) : ""); }
};

std::vector<method_choice> methods_of(const context& ctx) {
  if (method_name.ends_with(fixed_suffix))
    return {{parse_exchange_method(std::string_view(method_name).substr(0, method_name.size() - fixed_suffix.size())), true}};
  if (method_name != "all") return {{parse_exchange_method(method_name)}};
  std::vector<method_choice> m = {{exchange_method::automatic},      {exchange_method::direct},
                                  {exchange_method::direct, true}, {exchange_method::crystal_router},
                                  {exchange_method::grid}};
  if (ctx.backend() == "mpi" && ctx.options().threads_per_rank == 1) {  // MPI collectives: one PE per rank
    m.push_back({exchange_method::mpi_alltoallv});
    m.push_back({exchange_method::mpi_alltoallv, true});
    m.push_back({exchange_method::mpi_neighbor});
    m.push_back({exchange_method::mpi_neighbor, true});
  }
  return m;
}

struct contender {
  method_choice method{exchange_method::automatic};
  std::unique_ptr<sparse_exchange<std::uint8_t>> x;
  exchange_stats before;  // when timing started
  std::uint64_t timed_exchanges = 0;
  std::uint64_t per_sample = 0;
  std::vector<double> samples;
  bool verified = true;
};

json candidates_of(const exchange_stats& st) {
  json out = json::array();
  for (const auto& c : st.candidates)
    out.push_back(
        {{"method", to_string(c.method)}, {"seconds", c.seconds}, {"raced", c.raced}, {"confirmed", c.confirmed}});
  return out;
}

measurement run_exchange(context& ctx, const setup& s) {
  const int me = ctx.rank(), size = ctx.size();
  const std::uint64_t seed = s.opt.seed;
  const byte_parcels base = outgoing_of(me, size, seed);
  const byte_parcels expected = expected_of(me, size, seed);
  std::vector<contender> contenders;
  for (const method_choice& m : methods_of(ctx)) {
    exchange_options o;
    o.method = m.method;
    o.fixed_pattern = m.fixed_pattern;
    if (s.opt.grid_given) o.grid = *s.stream.grid;  // else the exchange's default, balanced 2-D
    contender c;
    c.method = m;
    c.per_sample = static_cast<std::uint64_t>(exchanges_per_sample);  // 0: sized below
    c.x = std::make_unique<sparse_exchange<std::uint8_t>>(ctx, o);
    // Warm-up, every result checked; automatic times its candidates on these runs.
    const auto checked_run = [&] { c.verified = check(c.x->run(base), expected) && c.verified; };
    while (m.method == exchange_method::automatic && c.x->stats().choices == 0) checked_run();
    checked_run();
    checked_run();
    c.before = c.x->stats();
    contenders.push_back(std::move(c));
  }
  for (int sample = 0; sample < samples; ++sample) {
    // The order rotates by one per sample, so that no method always runs first (after the
    // previous sample's last method, or after a barrier of its own) in every sample.
    for (std::size_t k = 0; k < contenders.size(); ++k) {
      contender& c = contenders[(static_cast<std::size_t>(sample) + k) % contenders.size()];
      const auto timed = [&](std::uint64_t n) {
        ctx.barrier();
        const auto start = detail::steady_clock::now();
        for (std::uint64_t i = 0; i < n; ++i) c.x->run(base);
        const double mine = detail::seconds_since(start);
        c.timed_exchanges += n;
        return ctx.allreduce(mine, reduce_op::max);
      };
      if (c.per_sample == 0) {  // calibrated once, from reduced times: equal on every PE
        // The fastest of three single exchanges: on a loaded machine one of them can take 10x (a
        // rank descheduled), and a sample sized from it would be short, where the barrier's
        // wake-up weighs more per exchange. Seen: 3 exchanges per sample for automatic against 14
        // for its own method measured alone, and automatic "1.56x" slower than that method.
        const double one = std::min({timed(1), timed(1), timed(1)});
        c.per_sample = std::clamp<std::uint64_t>(
            static_cast<std::uint64_t>(std::ceil(sample_seconds / std::max(one, 1e-9))), 1, 100000);
      }
      c.samples.push_back(timed(c.per_sample) / static_cast<double>(c.per_sample));
    }
  }

  auto distinct = partners_of(me, size, seed);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const int peers = ctx.allreduce(
      static_cast<int>(distinct.size() - static_cast<std::size_t>(std::count(distinct.begin(), distinct.end(), me))),
      reduce_op::max);

  const virtual_grid grid = s.opt.grid_given ? *s.stream.grid : virtual_grid::balanced(size, 2);
  measurement result;
  result.items_per_pe = static_cast<double>(base.size());  // parcels per PE and exchange
  result.verified = true;
  result.extra = {{"grid", grid.str()},  // the grid method's, not the streamer's
                  {"pattern", pattern}, {"neighbors", neighbors}, {"stride", stride}, {"bytes", parcel_bytes},
                  {"peers", peers},     {"samples", samples}};
  double best_fixed = 0;
  for (auto& c : contenders) {
    const exchange_stats after = c.x->stats();
    c.verified = check(c.x->run(base), expected) && c.verified;  // once more, after timing
    const bool verified = all_of(ctx, c.verified);
    result.verified = result.verified && verified;
    const double n = static_cast<double>(std::max<std::uint64_t>(c.timed_exchanges, 1));
    // Summed over PEs, per exchange (whole numbers: the pattern is the same every exchange).
    const auto per_exchange = [&](std::uint64_t now, std::uint64_t then) {
      return static_cast<std::uint64_t>(
          std::llround(static_cast<double>(ctx.allreduce<std::uint64_t>(now - then, reduce_op::sum)) / n));
    };
    const double seconds = median(c.samples);
    if (c.method.method != exchange_method::automatic && (best_fixed == 0 || seconds < best_fixed)) best_fixed = seconds;
    json v = {{"method", c.method.name()},
              {"fixed_pattern", c.method.fixed_pattern},
              {"chosen", to_string(c.x->method())},
              {"seconds", seconds},
              {"items_per_second_per_pe", seconds > 0 ? result.items_per_pe / seconds : 0.0},
              {"item_bytes", parcel_bytes},
              {"items_per_pe", result.items_per_pe},
              {"messages_sent", per_exchange(after.messages_sent, c.before.messages_sent)},
              {"bytes_sent", per_exchange(after.bytes_sent, c.before.bytes_sent)},
              {"seconds_per_exchange", seconds},
              {"sample_seconds_per_exchange", c.samples},
              {"exchanges_per_sample", c.per_sample},
              {"bytes_forwarded", per_exchange(after.bytes_forwarded, c.before.bytes_forwarded)},
              {"verified", verified}};
    if (c.method.method == exchange_method::automatic) {
      v["candidates"] = candidates_of(after);
      v["trial_runs"] = after.trial_runs;  // exchanges automatic spent choosing
    }
    result.variants.push_back(std::move(v));
  }
  result.seconds = best_fixed;

  // The table for people (PE 0 prints it).
  std::string& t = result.table;
  char line[256];
  std::snprintf(line, sizeof line, "exchange %s K=%d S=%d B=%llu on %s, %d PEs (at most %d distinct peers per PE)\n",
                pattern.c_str(), neighbors, stride, static_cast<unsigned long long>(parcel_bytes),
                std::string(ctx.backend()).c_str(), size, peers);
  t += line;
  std::snprintf(line, sizeof line, "%-19s %-15s %12s %8s %10s %12s %14s  %s\n", "method", "chosen", "us/exchange",
                "vs best", "msgs/exch", "bytes/exch", "fwd bytes/exch", "verified");
  t += line;
  for (const json& v : result.variants) {
    const double seconds = v["seconds_per_exchange"].get<double>();
    std::snprintf(line, sizeof line, "%-19s %-15s %12.2f %8.2f %10llu %12llu %14llu  %s\n",
                  v["method"].get<std::string>().c_str(), v["chosen"].get<std::string>().c_str(), seconds * 1e6,
                  best_fixed > 0 ? seconds / best_fixed : 0.0, v["messages_sent"].get<unsigned long long>(),
                  v["bytes_sent"].get<unsigned long long>(), v["bytes_forwarded"].get<unsigned long long>(),
                  v["verified"].get<bool>() ? "yes" : "NO");
    t += line;
    if (v.contains("candidates")) {
      t += "  automatic's candidates (us per exchange, when it chose):";
      for (const json& c : v["candidates"]) {
        std::snprintf(line, sizeof line, " %s %.2f%s", c["method"].get<std::string>().c_str(),
                      c["seconds"].get<double>() * 1e6,
                      !c["raced"].get<bool>() ? " (dropped)" : c["confirmed"].get<bool>() ? " (finalist)" : "");
        t += line;
      }
      std::snprintf(line, sizeof line, "; %llu exchanges spent choosing\n", v["trial_runs"].get<unsigned long long>());
      t += line;
    }
  }
  std::snprintf(line, sizeof line, "median of %d samples per method, each the slowest PE's time\n", samples);
  t += line;
  return result;
}

const bool registered = register_kernel({
    .name = "exchange",
    .summary = "sparse all-to-all (crystal router paper): every exchange method, one parcel per partner",
    .item_sizes = {1},
    .run = run_exchange,
    .own_options =
        {
          {.names = "--pattern",
           .help = "nek26 (default: partners (r +- S*i) mod P), random or dense",
           .target = &pattern,
           .check = apps::one_of_names{{"nek26", "random", "dense"}},
           .type_name = "NAME"},
          integer_option("--neighbors", "partners per PE, K (default 26; dense: all)", &neighbors, 1, 1 << 20, "K"),
          integer_option("--stride", "nek26: distance between partners, S (default 1)", &stride, 1, 1 << 30, "S"),
          {.names = "--bytes",
           .help = "bytes per parcel, B (default 8)",
           .target = &parcel_bytes,
           .check = apps::integer_range{1, std::uint64_t{1} << 32, "an integer in [1, 2^32]"},
           .type_name = "B"},
          {.names = "--method",
           .help = "all (default: every method of the backend, in one job), automatic, direct, "
                   "direct_fixed (direct with exchange_options::fixed_pattern: consensus in the "
                   "first exchange only), crystal_router, grid, mpi_alltoallv, mpi_alltoallv_fixed "
                   "(counts exchanged once), mpi_neighbor or mpi_neighbor_fixed",
           .target = &method_name,
           .check = apps::one_of_names{{"all", "automatic", "direct", "direct_fixed", "crystal_router", "grid",
                                        "mpi_alltoallv", "mpi_alltoallv_fixed", "mpi_neighbor", "mpi_neighbor_fixed"}},
           .type_name = "M"},
          integer_option("--samples", "timed samples per method; the median is reported (default 7)",
                         &samples, 1, 1000, "N"),
          // A simulated clock needs no long samples, and each exchange there costs real seconds.
          integer_option("--exchanges", "exchanges per sample (default: as many as last about 2 ms, sized per method)",
                         &exchanges_per_sample, 1, 100000, "N"),
        },
});

}  // namespace

}  // namespace transit::bench
