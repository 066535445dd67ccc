#pragma once
// Calibration of the streamer (TRAM thesis 2.3): per-message, per-byte and per-item costs of
// intra- and inter-node links, and the streaming bandwidth curve over message sizes, measured on
// the running job's backend and PEs. `transit calibrate streamer` runs it and writes the profile.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "transit/model/model.hpp"  // automatic_buffer_items(profile), which calibration reports
#include "transit/profile/profile.hpp"

namespace transit {

class context;

/// What calibrate_streamer() measures, and for how long. It checks them: 8 <= min_message_bytes
/// <= max_message_bytes <= 1 GiB, seconds_per_point > 0, buffer sizes at least 1 (else
/// std::invalid_argument).
struct calibration_options {
  /// Message payloads of the bandwidth curve: powers of two from min to max (16 B .. 4 MiB).
  std::size_t min_message_bytes = 16;
  std::size_t max_message_bytes = std::size_t{4} << 20;  ///< the curve's largest payload (above)
  /// Time spent on each measured point after a short probe that sizes it; smaller is quicker and
  /// noisier (tests use a few milliseconds).
  double seconds_per_point = 0.05;
  /// Buffer sizes (8-byte items) of the streamer runs that separate per-message from per-item cost.
  std::vector<std::size_t> buffer_items{1, 8, 64, 512, 4096};
  /// Called on PE 0 before each measurement (for progress): `done` of `total` are done, `what`
  /// says which runs now ("intra-node curve, 4 KiB"). May be empty; must not call transit.
  std::function<void(int done, int total, const std::string& what)> on_step;
};

/// Collective: measures this job's links, one pair of PEs per kind (two PEs of one node; the first
/// PEs of two nodes, emulated nodes included), both streaming to each other while the other PEs
/// wait. Returns the profile entry for this job's backend, PEs per node and host, the same on
/// every PE. Throws std::invalid_argument on a job of one PE (there is no link to measure) and for
/// options out of range.
streamer_profile calibrate_streamer(context& ctx, const calibration_options& options = {});

/// One streamer measurement of calibration: 8-byte items in buffers of `buffer_items`, seconds per
/// item (per PE, each PE of the pair sending and receiving).
struct streamer_timing {
  std::size_t buffer_items = 0;  ///< the buffer capacity, in 8-byte items
  double seconds_per_item = 0;   ///< measured time per item, per PE
};

/// Local: the costs of a link from its measurements (docs/tuning.md, "Calibration"): beta from the
/// curve up to its peak (the time per byte at the peak when that slope is not positive), alpha and per_item from the streamer timings, per item
/// per_item + 8 beta + (alpha + 16 beta) / g, fitted with relative-error weights. per_item is
/// positive whenever any timing is; all three are finite and not negative.
link_costs fit_link_costs(const std::vector<bandwidth_point>& curve, const std::vector<streamer_timing>& steps);

/// Local: sets peak_bytes_per_second and buffer_bytes_50/75/90 of `profile` from its curve (the
/// inter-node one when measured, else the intra-node one): the smallest payloads reaching 50%,
/// 75% and 90% of the curve's peak (thesis 2.3.1 and 6.1.2).
void derive_buffer_sizes(streamer_profile& profile);

}  // namespace transit
