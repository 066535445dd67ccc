#pragma once
// Private to the library: what a streamer with buffer_items = 0 or tune = true asks the model
// module below it (defined in tuner.cpp, from the cost model and the profile file). The streamer
// core's installed header only names these types.
//
// Agreement. Every decision must be the same on every PE, yet profiles are read per host. So a
// streamer takes the model's inputs (a tuning_seed) from PE 0 alone, in the allreduce it
// runs at construction anyway, and the tuner is a deterministic function of that seed and of step
// outcomes summed over all PEs: every PE computes the same configurations.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "transit/grid/router.hpp"
#include "transit/grid/virtual_grid.hpp"

namespace transit {
class context;
class machine;
class physical_topology;
class topology_manager;
}

namespace transit::detail {

/// What the model needs to know to decide for a streamer, as plain numbers so that a
/// streamer can copy PE 0's to every PE with one reduction. Opaque to the streamer.
struct tuning_seed {
  static constexpr int size = 16;
  double values[size] = {};
};
static_assert(sizeof(double) == sizeof(std::uint64_t), "seeds travel as 64-bit words");

/// Local: this PE's seed for items of `item_bytes` (the calibrated profile of this job's backend,
/// PEs per node and host, or the built-in defaults). Throws profile_error when the profile file
/// is unreadable or corrupt (the message names the file and the problem).
tuning_seed local_tuning_seed(const context& ctx, std::size_t item_bytes);

/// Local: the buffer size buffer_items = 0 stands for, for items of `item_bytes`: the smallest
/// buffer whose per-message cost is at most 2% of its items' (the 75% bandwidth point only for a
/// profile without calibrated costs; see streamer_options::buffer_items).
std::size_t automatic_buffer_items(const tuning_seed& seed, std::size_t item_bytes);

/// A configuration a streamer runs a step with.
struct step_configuration {
  virtual_grid grid;
  routing route = routing::grid;
  std::size_t buffer_items = 0;
};

/// A step's outcome, identical on every PE (from allreduces over all PEs).
struct step_outcome {
  std::uint32_t step = 0;
  std::uint64_t nanoseconds = 0;     // the step's wall time: the longest of the PEs' times
  std::uint64_t items_inserted = 0;  // insert and broadcast calls, summed
  std::uint64_t messages_sent = 0;
  int pes = 1;
};

/// Decides the configuration of the next step from the outcome of the last (thesis 6.1.2: a
/// control system tries configurations between iterations and converges).
class step_tuner {
 public:
  virtual ~step_tuner() = default;
  /// Local and deterministic: the same outcomes give the same answers on every PE. Returns the
  /// configuration for the next step (`current` to keep it).
  virtual step_configuration next(const step_outcome& outcome, const step_configuration& current) = 0;
  /// True once exploring has stopped: the configuration stays, and no outcome is needed any more.
  virtual bool settled() const noexcept = 0;
  /// Whether the last next() call tried a new configuration (false: kept or returned to the best).
  virtual bool explored() const noexcept = 0;
};

/// Local: the tuner of a streamer with tune = true that starts from `initial`.
std::unique_ptr<step_tuner> make_step_tuner(const context& ctx, const tuning_seed& seed,
                                            const step_configuration& initial, std::size_t item_bytes);
/// Local: the same tuner for a machine given as values: its PEs and nodes, its physical topology,
/// and the network the model routes over (null: none named). The context's version passes the
/// job's; a test passes a machine larger than the job it runs in.
std::unique_ptr<step_tuner> make_step_tuner(const machine& m, const physical_topology& physical,
                                            const topology_manager* network, const tuning_seed& seed,
                                            const step_configuration& initial, std::size_t item_bytes);

}  // namespace transit::detail
