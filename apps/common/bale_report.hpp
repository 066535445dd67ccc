#pragma once
// bale's standard options (std_options: -b -c -D -j -M -s) and its output: the banner and the
// "key: value" lines on stderr, or with -j the JSON file bale writes (every value a string, the
// keys bale's own), written by PE 0.
#include <cstdint>
#include <cstdio>
#include <string>

#include "transit/transit.hpp"

namespace transit::apps {

/// bale's style bits for -M (std_options.h): the same numbers select transit's styles.
enum style_bit : std::int64_t {
  agp_style = 1,        ///< bale's AGP; transit: global_array
  exstack_style = 2,    ///< bale's exstack; transit: sparse_exchange
  exstack2_style = 4,   ///< bale's exstack2 (asynchronous exstack): no transit style of its own
  conveyor_style = 8,   ///< bale's conveyor; transit: streamer
  alternate_style = 16  ///< bale's "alternate" (user-supplied): none in transit
};

/// bale's std_args_t, with its defaults.
struct bale_std_options {
  std::int64_t buf_cnt = 1024;      ///< -b: items per destination in an exstack round
  int cores_per_node = 0;           ///< -c: for bale's injection-bandwidth figure only
  bool dump_files = false;          ///< -D
  std::string json_output{};        ///< -j FILE: results as JSON in FILE, not on stderr
  std::int64_t models_mask = 15;    ///< -M: the styles to run (style_bit), bale's ALL_Models
  std::int64_t seed = 122222;       ///< -s
};

/// What one application run writes, as bale writes it. Collective construction; the writes are
/// Local and do something on PE 0 only.
class bale_report {
 public:
  /// Collective. Starts the output: the banner (stderr) or a fresh JSON file with bale's first
  /// keys (bale_version, date, app, pes) and transit's "backend". `command_line` is what the
  /// banner echoes. When PE 0 cannot create the -j file, it says so on stderr and opened() is
  /// false on every PE.
  bale_report(context& ctx, const bale_std_options& options, const std::string& app, const std::string& command_line);
  /// Local: false when the -j file could not be created (the run should end with status 2).
  bool opened() const noexcept { return opened_; }
  /// `key: value` (%14s: %ld on stderr) or "key": "value" in the JSON file.
  void write_int(const std::string& key, std::int64_t value);
  /// `key: value` (%14s: %s on stderr) or "key": "value" in the JSON file.
  void write_string(const std::string& key, const std::string& value);
  /// A style's kernel time (seconds), under bale's name for the style ("Conveyor").
  void write_time(const std::string& style, double seconds);
  /// bale's write_std_options: the standard options block (stderr) or "buf_cnt" (JSON).
  void write_std_options();
  /// Local: true when the results go to the -j file rather than stderr.
  bool json() const noexcept { return !options_.json_output.empty(); }
  /// A line on stderr, PE 0 only, when not writing JSON (bale's T0_fprintf(stderr, ...)).
  void note(const std::string& line);
  /// Closes the JSON object (bale_app_finish). Call once, after the last write.
  void finish();

 private:
  void start(context& ctx, const std::string& app, const std::string& command_line);
  void append_json(const std::string& key, const std::string& value);
  const bale_std_options& options_;
  bool writer_;  // PE 0
  bool opened_ = true;
};

/// Local: the mean over PEs of `seconds` (bale's lgp_min_avg_max_d ... avg). Collective.
double mean_over_pes(context& ctx, double seconds);

}  // namespace transit::apps
