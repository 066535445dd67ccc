// transit bench KERNEL: the command line of every kernel (the options every kernel takes, added
// here in one place, then the kernel's own option table) and the command that runs the chosen
// kernel (bench/, the library transit_bench) and prints its records. `transit model KERNEL` shares
// the command line (bench_options.hpp). Every check that does not need the PE count happens while
// parsing, before any PE starts, so a typo costs no job start-up.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "bench.hpp"
#include "bench_options.hpp"
#include "cli.hpp"
#include "progress.hpp"

namespace transit::cli {

using namespace transit::bench;  // the kernels' library, of which this command is a client

namespace {

std::string item_sizes_list(const kernel_entry& k) {
  std::vector<std::string> sizes;
  for (const auto size : k.item_sizes) sizes.push_back(std::to_string(size));
  return join(sizes);
}

std::string item_sizes_expected(const kernel_entry& k) {
  if (k.item_sizes.size() == 1)
    return std::to_string(k.item_sizes[0]) + " for " + k.name + " (its items have that size)";
  return "one of " + item_sizes_list(k) + " for " + k.name;
}

CLI::Validator item_size_of(const kernel_entry& k) {
  return CLI::Validator(
      [&k](std::string& text) -> std::string {
        std::size_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
            std::find(k.item_sizes.begin(), k.item_sizes.end(), value) == k.item_sizes.end())
          return "got '" + text + "', expected " + item_sizes_expected(k);
        text = std::to_string(value);
        return {};
      },
      "", "item_size");
}

/// `bench NAME` (or `model NAME`): the common options, then the kernel's own. `opt` outlives parsing.
void add_kernel_command(CLI::App& bench, const kernel_entry& k, options& opt,
                        const std::function<void(CLI::App&)>& extra) {
  CLI::App* sub = bench.add_subcommand(k.name, k.summary)->group("Kernels");
  std::vector<std::string> scheme_names;
  for (const auto& [name, value] : schemes()) scheme_names.push_back(name);
  sub->add_option_function<std::string>(
         "--scheme",
         [&opt](const std::string& name) {
           opt.route = std::find_if(schemes().begin(), schemes().end(), [&](const auto& s) { return s.first == name; })
                           ->second;
         },
         "none (one message per item, no aggregation), grid (default), node-aware, node-aware-advanced, "
         "mpi-raw (histogram and alltoall as a plain MPI program: one MPI_Isend per item; mpi backend)")
      ->check(one_of(scheme_names))
      ->type_name("NAME");
  sub->add_option("--grid", opt.grid, "virtual grid: direct, node (default), 4x4, 2x2x2, ...")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return text.empty() ? "got '', expected a grid such as direct, node, 4x4 or 2x2x2" : "";
          },
          ""))
      ->type_name("SPEC")
      ->each([&opt](const std::string&) { opt.grid_given = true; });
  const std::string default_size = std::to_string(k.item_sizes.front());
  sub->add_option("--item-bytes", opt.item_bytes,
                  k.item_sizes.size() == 1
                      ? "item size: " + default_size + " (fixed)"
                      : "item size: " + item_sizes_list(k) + " (default " + default_size + ")")
      ->transform(item_size_of(k))
      ->type_name("B");
  const std::string items_expected =
      "a positive integer up to " +
      (k.max_items_per_pe == std::uint64_t{1} << 40 ? std::string("2^40") : std::to_string(k.max_items_per_pe)) +
      (k.max_items_per_pe == std::uint64_t{1} << 40 ? "" : " for " + k.name);
  const std::uint64_t default_items = k.default_items ? k.default_items() : std::uint64_t{1} << 20;
  sub->add_option("--items-per-pe", opt.items_per_pe,
                  "items each PE sends (default " + std::to_string(default_items) + ")")
      ->transform(integer_in<std::uint64_t>(1, k.max_items_per_pe, items_expected))
      ->type_name("N");
  sub->add_option("--buffer-items", opt.buffer_items,
                  "items per peer buffer, G (default 1024; 0: automatic, from the calibrated profile)")
      ->transform(integer_in<std::size_t>(0, max_buffer_items, "an integer in [0, 16777216]"))
      ->type_name("G");
  sub->add_option("--flush-us", opt.flush_us, "flush partial buffers after U us without progress (default 0: never)")
      ->transform(integer_in<std::uint64_t>(0, 60'000'000, "microseconds in [0, 60000000]"))
      ->type_name("U");
  sub->add_option("--repeat", opt.repeat, "run R times (text output adds a median line)")
      ->transform(integer_in<int>(1, 1000, "an integer in [1, 1000]"))
      ->type_name("R");
  add_flag_once(*sub, "--json", opt.json, "one JSON object per run on stdout");
  sub->add_option("--seed", opt.seed, "random streams (default 1)")
      ->transform(integer_in<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max(),
                                            "an integer in [0, 18446744073709551615]"))
      ->type_name("S");
  sub->add_option("--steps", opt.steps, "steps per run, each of --items-per-pe items (default 1; 30 with --tune)")
      ->transform(integer_in<int>(1, 100000, "an integer in [1, 100000]"))
      ->type_name("S");
  // Open MPI's mpirun takes --tune FILE for itself anywhere on its command line, even after the
  // program: --online-tune and TRANSIT_TUNE=1 reach transit through mpirun.
  add_flag_once(*sub, "--tune,--online-tune", opt.tune,
                "tune buffer size and grid between steps (streamer_options::tune); under mpirun write "
                "--online-tune or set TRANSIT_TUNE=1 (Open MPI's mpirun takes --tune for itself)");
  add_flag_once(*sub, "--quiet", opt.quiet, "no progress line on stderr (there is none when stderr is not a terminal)");
  add_option_table(*sub, k.own_options);
  if (!k.footer.empty()) sub->footer(k.footer);
  if (extra) extra(*sub);

  // After parsing this command: TRANSIT_TUNE, then the kernel's defaults and the checks across options.
  sub->final_callback([&k, &opt] {
    std::string tune_name = "--tune";
    if (const char* env = std::getenv("TRANSIT_TUNE"); env != nullptr && *env != '\0' && !opt.tune) {
      const std::string_view v = env;
      if (v == "1" || v == "true" || v == "yes" || v == "on") {
        opt.tune = true;
        tune_name = "TRANSIT_TUNE";
      } else if (!(v == "0" || v == "false" || v == "no" || v == "off"))
        usage_error("TRANSIT_TUNE", v, "1, true, yes or on (tune, as --tune), or 0, false, no or off");
    }
    try {
      finish_options(k, opt, tune_name);
    } catch (const option_error& e) {
      usage_error(e.option, e.value, e.expected);
    }
  });
}

/// Collective: `transit bench KERNEL` after option parsing: --repeat runs of the kernel, their
/// records on PE 0. Returns the exit status.
int bench_command(context& ctx, const options& opt) {
  try {
    resolve(ctx, opt);
  } catch (const std::invalid_argument& e) {
    // Every PE finds the same problem; one message, and a usage error's exit status.
    if (ctx.rank() == 0) std::fprintf(stderr, "transit: error: %s\n", e.what());
    return 2;
  }
  std::vector<double> seconds, rates;
  bool all_verified = true;
  progress line("bench " + opt.kernel, "run", progress::for_this_process(ctx.rank() == 0, opt.quiet));
  const progress_ticker ticking(ctx, line);
  for (int run = 0; run < opt.repeat; ++run) {
    line.update(run, opt.repeat);
    const record r = run_once(ctx, opt, run);
    seconds.push_back(r.seconds);
    rates.push_back(r.rate);
    all_verified &= r.verified;
    if (ctx.rank() != 0) continue;
    line.clear();
    if (!opt.json && !r.table.empty()) {
      std::printf("%s", r.table.c_str());
    } else if (r.variants.empty()) {
      std::printf("%s\n", (opt.json ? to_json(r) : to_text(r)).c_str());
    } else {
      for (const json& variant : r.variants) {
        record one = r;
        for (const auto& [key, value] : variant.items()) one.extra[key] = value;
        std::printf("%s\n", (opt.json ? to_json(one) : to_text(one)).c_str());
      }
    }
    std::fflush(stdout);
    if (!r.verified) std::fprintf(stderr, "transit bench: %s run %d FAILED verification\n", opt.kernel.c_str(), run);
  }
  if (ctx.rank() == 0 && !opt.json && opt.repeat > 1)
    std::printf("median of %d: %.6f s  %s items/s/PE\n", opt.repeat, median(seconds), human(median(rates)).c_str());
  return all_verified ? 0 : 1;
}

options command_line;  // set by parsing `transit bench`, read-only while the job runs

void add_bench_options(CLI::App& bench) {
  // Before the kernels' pages are made: each copies this footer.
  bench.footer("Tuning (histogram, alltoall, phold): --tune; under mpirun --online-tune or TRANSIT_TUNE=1, since\n"
               "Open MPI's mpirun takes --tune FILE for itself anywhere on its command line.\n\n" +
               bench.get_footer());
  add_kernel_commands(bench, command_line);
}

const bool registered = register_command({
    .name = "bench",
    .summary = "run a benchmark kernel: transit bench KERNEL [options] (transit bench KERNEL --help)",
    .add_options = add_bench_options,
    .run = [](context& ctx) { return bench_command(ctx, command_line); },
});

}  // namespace

void add_kernel_commands(CLI::App& command, options& opt, const std::function<void(CLI::App&)>& extra) {
  auto formatter = std::make_shared<CLI::Formatter>();  // the kernels' help pages share it
  formatter->label("SUBCOMMAND", "KERNEL");
  command.formatter(formatter);
  for (const auto& k : kernels()) add_kernel_command(command, k, opt, extra);
  command.require_subcommand(1);
}

}  // namespace transit::cli
