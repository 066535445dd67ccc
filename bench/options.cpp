// transit bench: the kernel table and option parsing. Every check that does not need the PE count
// happens here, before transit::run starts any PE, so a typo costs no job start-up.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "bench.hpp"

namespace transit::bench {

namespace {

constexpr std::array<kernel_entry, 6> kernel_table{{
    {"alltoall", 0, run_alltoall, "each PE streams items to every PE in rounds of random order (thesis 4.6)"},
    {"randomaccess", 8, run_randomaccess, "HPCC RandomAccess: XOR updates under the 1024 look-ahead limit"},
    {"histogram", 8, run_histogram, "increments of random slots of a distributed table"},
    {"index-gather", 16, run_index_gather, "random reads of a distributed array: request and reply"},
    {"phold", 16, run_phold, "PHOLD discrete-event simulation, events handled as they arrive"},
    {"route-step", 8, run_route_step, "ns per item of one routing and buffering step"},
}};

[[noreturn]] void bad(std::string_view option, std::string_view value, std::string_view expected) {
  throw std::invalid_argument(std::string(option) + ": got '" + std::string(value) + "', expected " +
                              std::string(expected));
}

template <class T>
T parse_integer(std::string_view option, std::string_view text, T min, T max, std::string_view expected) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max)
    bad(option, text, expected);
  return value;
}

double parse_fraction(std::string_view option, std::string_view text) {
  // std::from_chars for double is in libstdc++ 11+, which C++20 compilers here ship.
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !(value >= 0.0 && value <= 1.0))
    bad(option, text, "a number in [0, 1]");
  return value;
}

scheme parse_scheme(std::string_view text) {
  if (text == "none") return scheme::none;
  if (text == "grid") return scheme::grid;
  if (text == "node-aware") return scheme::node_aware;
  if (text == "node-aware-advanced") return scheme::node_aware_advanced;
  bad("--scheme", text, "one of none, grid, node-aware, node-aware-advanced");
}

std::string kernel_names() {
  std::string names;
  for (const auto& k : kernel_table) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

constexpr std::uint64_t max_count = std::uint64_t{1} << 40;

}  // namespace

const kernel_entry* find_kernel(std::string_view name) {
  for (const auto& k : kernel_table)
    if (k.name == name) return &k;
  return nullptr;
}

std::string_view to_string(scheme s) noexcept {
  switch (s) {
    case scheme::none: return "none";
    case scheme::grid: return "grid";
    case scheme::node_aware: return "node-aware";
    case scheme::node_aware_advanced: return "node-aware-advanced";
  }
  return "?";
}

options parse_options(int argc, char** argv, int first) {
  if (first >= argc) throw std::invalid_argument("no kernel given: expected one of " + kernel_names());
  options opt;
  opt.kernel = argv[first];
  const kernel_entry* kernel = find_kernel(opt.kernel);
  if (kernel == nullptr) bad("kernel", opt.kernel, "one of " + kernel_names());
  for (int i = first + 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--json") {
      opt.json = true;
      continue;
    }
    if (arg.substr(0, 2) != "--") bad("argument", arg, "an option --NAME VALUE or --NAME=VALUE");
    std::string_view name = arg, value;
    if (const auto eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      bad(name, "", "a value after it");
    }
    if (name == "--scheme") {
      opt.route = parse_scheme(value);
    } else if (name == "--grid") {
      if (value.empty()) bad(name, value, "a grid such as direct, node, 4x4 or 2x2x2");
      opt.grid = value;
    } else if (name == "--item-bytes") {
      opt.item_bytes = parse_integer<std::size_t>(name, value, 1, 1 << 20, "a positive number of bytes");
    } else if (name == "--items-per-pe") {
      opt.items_per_pe = parse_integer<std::uint64_t>(name, value, 1, max_count, "a positive integer up to 2^40");
    } else if (name == "--buffer-items") {
      opt.buffer_items = parse_integer<std::size_t>(name, value, 1, 1 << 24, "an integer in [1, 16777216]");
    } else if (name == "--flush-us") {
      opt.flush_us = parse_integer<std::uint64_t>(name, value, 0, 60'000'000, "microseconds in [0, 60000000]");
    } else if (name == "--repeat") {
      opt.repeat = parse_integer<int>(name, value, 1, 1000, "an integer in [1, 1000]");
    } else if (name == "--table-log2") {
      opt.table_log2 = parse_integer<int>(name, value, 1, 32, "an integer in [1, 32]");
    } else if (name == "--table-slots") {
      opt.table_slots = parse_integer<std::uint64_t>(name, value, 1, std::uint64_t{1} << 32,
                                                     "a positive integer up to 2^32");
    } else if (name == "--remote-fraction") {
      opt.remote_fraction = parse_fraction(name, value);
    } else if (name == "--lps-per-pe") {
      opt.lps_per_pe = parse_integer<std::uint64_t>(name, value, 1, std::uint64_t{1} << 32,
                                                    "a positive integer up to 2^32");
    } else if (name == "--events-per-lp") {
      opt.events_per_lp = parse_integer<std::uint64_t>(name, value, 1, 1 << 20, "an integer in [1, 1048576]");
    } else if (name == "--seed") {
      opt.seed = parse_integer<std::uint64_t>(name, value, 0, std::numeric_limits<std::uint64_t>::max(),
                                              "a non-negative integer");
    } else {
      bad("option", name,
          "one of --scheme, --grid, --item-bytes, --items-per-pe, --buffer-items, --flush-us, --repeat, "
          "--json, --table-log2, --table-slots, --remote-fraction, --lps-per-pe, --events-per-lp, --seed");
    }
  }
  // Item sizes: alltoall instantiates its item type for powers of two; the others are fixed.
  if (kernel->item_bytes == 0) {
    if (opt.item_bytes == 0) opt.item_bytes = 8;
    if (opt.item_bytes < 8 || opt.item_bytes > 1024 || (opt.item_bytes & (opt.item_bytes - 1)) != 0)
      bad("--item-bytes", std::to_string(opt.item_bytes), "a power of two from 8 to 1024 for alltoall");
  } else if (opt.item_bytes != 0 && opt.item_bytes != kernel->item_bytes) {
    bad("--item-bytes", std::to_string(opt.item_bytes),
        std::to_string(kernel->item_bytes) + " for " + opt.kernel + " (its items have that size)");
  } else {
    opt.item_bytes = kernel->item_bytes;
  }
  if (opt.kernel == "index-gather" && opt.items_per_pe > std::numeric_limits<std::uint32_t>::max())
    bad("--items-per-pe", std::to_string(opt.items_per_pe), "at most 2^32-1 requests per PE for index-gather");
  return opt;
}

const char* options_help() {
  return "bench KERNEL [options]   kernels: alltoall randomaccess histogram index-gather phold route-step\n"
         "  --scheme none|grid|node-aware|node-aware-advanced   (none: one message per item)\n"
         "  --grid SPEC          direct, node (default), 4x4, 2x2x2, ...\n"
         "  --item-bytes B       alltoall item size: 8, 16, ..., 1024\n"
         "  --items-per-pe N     items each PE sends (randomaccess: updates, default 4 x table)\n"
         "  --buffer-items G     items per peer buffer (default 1024)\n"
         "  --flush-us U         flush partial buffers after U us without progress (default 0: never)\n"
         "  --repeat R           run R times (text mode adds a median line)\n"
         "  --json               one JSON object per run on stdout\n"
         "  --table-log2 n       randomaccess: 2^n table words per PE (default 16)\n"
         "  --table-slots S      histogram, index-gather: entries per PE (default 1000)\n"
         "  --remote-fraction f  phold: share of events sent to another PE (default 0.5)\n"
         "  --lps-per-pe L  --events-per-lp E   phold population (default 1000 x 16)\n"
         "  --seed S             random streams (default 1)\n"
         "demo                     the thesis all-to-all comparison (local: 8 PEs, 4 per node)\n";
}

}  // namespace transit::bench
