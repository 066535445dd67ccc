// The options of a run once parsed: their checks across options (finish_options), the usage
// error a front end reports for them (option_error), and the options two kernels share.
#include <algorithm>

#include "bench.hpp"

namespace transit::bench {

option_error::option_error(std::string option_name, std::string value_text, std::string what_expected)
    : std::invalid_argument(option_name + ": got '" + value_text + "', expected " + what_expected),
      option(std::move(option_name)),
      value(std::move(value_text)),
      expected(std::move(what_expected)) {}

void finish_options(const kernel_entry& k, options& opt, std::string_view tune_name) {
  const std::string tuning(tune_name);
  opt.kernel = k.name;
  if (opt.item_bytes == 0) opt.item_bytes = k.item_sizes.front();
  const std::size_t buffer_items =
      k.max_buffer_items != 0 ? std::min(opt.buffer_items, k.max_buffer_items) : opt.buffer_items;
  if (std::uint64_t{buffer_items} * opt.item_bytes > max_buffer_bytes)
    throw option_error("--buffer-items", std::to_string(opt.buffer_items),
                       "at most " + std::to_string(max_buffer_bytes / opt.item_bytes) + " items of " +
                           std::to_string(opt.item_bytes) + " bytes (1 GiB per peer buffer)");
  // Tuning needs a streamer run step by step and the kernel's workload for the model.
  if (opt.tune && !(k.steps && k.workload))
    throw option_error(tuning, "", "no --tune for " + k.name + " (kernels that tune: histogram, alltoall, phold)");
  if (opt.steps > 1 && !k.steps)
    throw option_error("--steps", std::to_string(opt.steps),
                       "1 for " + k.name + " (kernels that run steps: histogram, alltoall, phold, halo, bipartite)");
  if (opt.tune && (opt.route == scheme::none || opt.route == scheme::mpi_raw))
    throw option_error(tuning, "", "a scheme that aggregates (grid, node-aware, node-aware-advanced), not " +
                                       std::string(to_string(opt.route)));
  if (opt.route == scheme::mpi_raw && !k.mpi_raw)
    throw option_error("--scheme", "mpi-raw", "none, grid, node-aware or node-aware-advanced for " + k.name +
                                                  " (mpi-raw exists for histogram and alltoall)");
  if (k.check) k.check(opt);
}

apps::option_spec integer_option(std::string names, std::string help, apps::option_target target, std::int64_t min,
                                 std::int64_t max, std::string type_name, const std::string& what) {
  return {.names = std::move(names),
          .help = std::move(help),
          .target = target,
          .check = apps::integer_range{min, max, what + " in [" + std::to_string(min) + ", " + std::to_string(max) + "]"},
          .type_name = std::move(type_name)};
}

apps::option_spec positive_count_option(std::string names, std::string help, apps::option_target target,
                                        std::string type_name) {
  return {.names = std::move(names),
          .help = std::move(help),
          .target = target,
          .check = apps::integer_range{1, std::int64_t{1} << 32, "a positive integer up to 2^32"},
          .type_name = std::move(type_name)};
}

apps::option_spec table_slots_option(std::uint64_t& slots) {
  return positive_count_option("--table-slots", "table entries per PE (default 1000)", &slots, "S");
}

apps::option_spec api_option(std::string& api, bool c) {
  std::string help = "streamer (default), or active: the same kernel written with active_messages";
  std::vector<std::string> names{"streamer", "active"};
  if (c) {
    help += ", or c: through the C API (transit.h)";
    names.push_back("c");
  }
  return {.names = "--api", .help = help, .target = &api, .check = apps::one_of_names{names}, .type_name = "API"};
}

}  // namespace transit::bench
