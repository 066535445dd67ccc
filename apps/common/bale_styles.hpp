#pragma once
// The loop of bale's application mains over the styles -M selects (styles.hpp's for_each_style),
// with each style's kernel timed and its time reported as bale reports it.
#include <cstdint>
#include <cstdio>

#include "common/bale_report.hpp"
#include "common/styles.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// Local: bale's name of a style ("AGP", "Exstack", "Conveyor") for the styles transit has, or
/// nullptr for exstack2, alternate and anything else (sssp names its implementations with it).
inline const char* bale_style_name(std::int64_t bit) {
  switch (bit) {
    case agp_style: return "AGP";
    case exstack_style: return "Exstack";
    case conveyor_style: return "Conveyor";
    default: return nullptr;
  }
}

/// Collective: for each style -M selects, in bale's order, `kernel(bit)` (returning this PE's
/// seconds), the mean over PEs reported, then `after(bit)` (a self-check between styles, say).
/// With `volume_per_node` >= 0 the time goes on stderr as histo and ig print it ("%10s: %8.3lf
/// seconds  %8.3lf GB/s injection bandwidth"), otherwise as the other applications do
/// (bale_app_write_time); with -j into the JSON file either way. Exstack2 (4) and alternate (16),
/// which transit has not, get a note and are skipped. Returns the number of styles run. Rethrows
/// what `kernel` or `after` throw.
template <class Kernel, class After>
std::int64_t bale_run_styles(context& ctx, bale_report& report, const bale_std_options& options,
                             double volume_per_node, Kernel&& kernel, After&& after) {
  std::int64_t styles_run = 0;
  for_each_style(report, options.models_mask, [&](std::int64_t bit, const char* name) {
    const double seconds = kernel(bit);
    ++styles_run;
    ctx.barrier();
    const double mean = mean_over_pes(ctx, seconds);
    if (!options.json_output.empty() || volume_per_node < 0) {
      report.write_time(name, mean);
    } else if (ctx.rank() == 0) {
      std::fprintf(stderr, "%10s: %8.3lf seconds  %8.3lf GB/s injection bandwidth\n", name, mean, volume_per_node / mean);
    }
    after(bit);
  });
  // for_each_style passes over the last bit, alternate, in silence; bale's histo and ig say so.
  if ((options.models_mask & alternate_style) != 0) report.note("There is no alternate model here!");
  return styles_run;
}

}  // namespace transit::apps
