#include "common/bale_options.hpp"

namespace transit::apps {

integer_range bale_count(const std::string& what, std::int64_t min) {
  constexpr std::int64_t max_count = std::int64_t{1} << 46;
  return {min, max_count, what + " from " + std::to_string(min) + " to 2^46"};
}

option_spec bale_count_option(std::string names, std::string help, std::int64_t& target, const std::string& what,
                              std::int64_t min, std::string type_name) {
  return {.names = std::move(names),
          .help = std::move(help),
          .target = &target,
          .check = bale_count(what, min),
          .type_name = std::move(type_name)};
}

option_spec bale_alg_option(const std::string& name, std::string help, int& target, integer_range check) {
  return {.names = "-a,--" + name, .help = std::move(help), .target = &target, .check = std::move(check), .type_name = "ALG"};
}

option_table bale_count_options(const bale_counts& c) {
  return {bale_count_option("-n,--" + c.per_pe_name, c.per_pe_help + " (default " + std::to_string(*c.per_pe) + ")",
                            *c.per_pe, c.what, c.min),
          bale_count_option("-N,--" + c.total_name, c.total_help + " (takes precedence over -n)", *c.total, c.what,
                            c.min)};
}

option_table bale_std_option_table(bale_std_options& o) {
  return {
      {.names = "-b,--buf_cnt",
       .help = "items per destination in an exstack round (default 1024)",
       .target = &o.buf_cnt,
       .check = integer_range{1, std::int64_t{1} << 30, "a positive integer up to 2^30"},
       .type_name = "BUF"},
      {.names = "-c,--cores_per_node",
       .help = "cores per node, for the injection bandwidth figure",
       .target = &o.cores_per_node,
       .check = integer_range{0, 1 << 20, "an integer from 0 to 2^20"},
       .type_name = "CPN"},
      {.names = "-D,--dump_files",
       .help = "dump files for debugging (bale's option)",
       .target = &o.dump_files,
       .kind = option_kind::flag},
      {.names = "-j,--json_output",
       .help = "write the results to FILE as JSON, not to stderr",
       .target = &o.json_output,
       .type_name = "FILE"},
      {.names = "-M,--models_mask",
       .help = "styles to run, added up: 1 AGP (global_array), 2 exstack (sparse_exchange), 8 conveyor "
               "(streamer); 4 and 16 are bale's exstack2 and alternate, skipped (default 15)",
       .target = &o.models_mask,
       .check = integer_range{0, 31, "a mask from 0 to 31 (1 AGP, 2 exstack, 8 conveyor)"},
       .type_name = "MASK"},
      {.names = "-s,--seed",
       .help = "seed of the random streams (default 122222)",
       .target = &o.seed,
       .check = integer_range{-(std::int64_t{1} << 62), std::int64_t{1} << 62, "an integer of magnitude at most 2^62"},
       .type_name = "SEED"},
  };
}

std::string bale_std_line(const bale_std_options& o) {
  std::string line = "-b " + std::to_string(o.buf_cnt) + " -M " + std::to_string(o.models_mask) + " -s " +
                     std::to_string(o.seed);
  if (o.dump_files) line += " -D";
  if (!o.json_output.empty()) line += " -j " + o.json_output;
  return line;
}

}  // namespace transit::apps
