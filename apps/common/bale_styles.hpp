#pragma once
// The loop of bale's application mains over the styles -M selects (AGP, exstack, exstack2,
// conveyor, alternate, in bale's order), with each style's time reported as bale reports it.
#include <cstdint>
#include <cstdio>

#include "common/bale_report.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// Local: bale's name of a style ("AGP", "Exstack", "Conveyor") for the styles transit has, or
/// nullptr for exstack2, alternate and anything else.
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
  for (std::int64_t bit = 1; bit < 32; bit *= 2) {
    if ((bit & options.models_mask) == 0) continue;
    if (bit == exstack2_style) {
      report.note("There is no exstack2 style in transit: -M 4 is skipped.");
      continue;
    }
    if (bit == alternate_style) {
      report.note("There is no alternate model here!");
      continue;
    }
    const double seconds = kernel(bit);
    ++styles_run;
    ctx.barrier();
    const double mean = mean_over_pes(ctx, seconds);
    const char* name = bale_style_name(bit);
    if (!options.json_output.empty() || volume_per_node < 0) {
      report.write_time(name, mean);
    } else if (ctx.rank() == 0) {
      std::fprintf(stderr, "%10s: %8.3lf seconds  %8.3lf GB/s injection bandwidth\n", name, mean, volume_per_node / mean);
    }
    after(bit);
  }
  return styles_run;
}

}  // namespace transit::apps
