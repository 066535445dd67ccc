#pragma once
// bale's loop over the styles -M selects (each app's `for(use_model=1; use_model < 32; ...)`), for
// any application: the styles transit has, in bale's order, by bale's names.
#include <cstdint>

#include "common/bale_report.hpp"

namespace transit::apps {

/// Local (what `run` does may be Collective; every PE passes the same mask): calls
/// run(style_bit, name) for AGP ("AGP"), exstack ("Exstack") and conveyor ("Conveyor") when
/// `mask` selects them, in that order; for exstack2 (4) writes bale's note that transit has no
/// such style; skips the alternate bit (16) silently.
template <class Run>
void for_each_style(bale_report& report, std::int64_t mask, Run&& run) {
  for (std::int64_t bit = 1; bit < 32; bit *= 2) {
    switch (bit & mask) {
      case agp_style:
        run(agp_style, "AGP");
        break;
      case exstack_style:
        run(exstack_style, "Exstack");
        break;
      case conveyor_style:
        run(conveyor_style, "Conveyor");
        break;
      case exstack2_style:
        report.note("There is no exstack2 style in transit: -M 4 is skipped.");
        break;
      default:
        break;
    }
  }
}

}  // namespace transit::apps
