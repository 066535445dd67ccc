// What the streamer asks the model (tuner.hpp): the seed a streamer takes from PE 0,
// buffer_items = 0, and the step tuner (thesis 6.1.2: buffer sizes
// within 50-90% of the peak streaming bandwidth, grids ranked by the cost model, a control system
// that tries configurations between iterations and settles, as PICS did within 25 iterations).
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>

#include "core/floor_log2.hpp"
#include "model/tuner.hpp"
#include "model/tuning_defaults.hpp"
#include "profile/profile_json.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/model/model.hpp"
#include "transit/runtime/context.hpp"

namespace transit::detail {

namespace {

// Seed layout (PE 0's, copied to every PE by the streamer).
enum seed_slot : int {
  has_profile = 0,
  intra_alpha, intra_beta, intra_item,
  inter_alpha, inter_beta, inter_item,
  bytes_75,
  sharing_per_core,
};

constexpr std::size_t header_bytes = 16;
constexpr double per_message_share = 0.02;              // buffer_items = 0: alpha / g <= 2% of an item
constexpr std::size_t max_automatic_bytes = 1u << 20;  // buffer_items = 0: at most 1 MiB messages
constexpr std::uint32_t max_explore_steps = 24;  // settled by the 25th step at the latest
constexpr std::size_t grid_candidates_tried = 3;
constexpr std::size_t finalists = 3;       // configurations the confirm round measures again
constexpr int confirm_passes = 2;          // times it measures each, interleaved

std::size_t items_for(double message_bytes, std::size_t item_bytes) {
  const double items = (message_bytes - static_cast<double>(header_bytes)) / static_cast<double>(item_bytes);
  return static_cast<std::size_t>(std::clamp(std::floor(items), 1.0, 4294967295.0));
}

machine_costs seed_costs(const tuning_seed& seed) {
  machine_costs c;
  c.intra = {seed.values[intra_alpha], seed.values[intra_beta], seed.values[intra_item]};
  c.inter = {seed.values[inter_alpha], seed.values[inter_beta], seed.values[inter_item]};
  c.pes_per_core = std::max(1.0, seed.values[sharing_per_core]);
  return c;
}

bool same(const step_configuration& a, const step_configuration& b) {
  return a.buffer_items == b.buffer_items && a.route == b.route && a.grid == b.grid;
}

/// Tries configurations one step each, in rounds, and settles on the cheapest (seconds per item
/// inserted: the step's wall time, the longest PE's, divided by the items each PE inserted):
///  1. the grids the cost model ranks best for the observed workload, with the starting buffer
///     (the grid matters most: a poor starting grid ran 3x slower than the best on 8 local PEs,
///     and buffer sizes measured on it said little about the best grid's);
///  2. on the best grid so far, buffer sizes around the automatic one (buffer_items = 0): powers
///     of two from a quarter of it to four times it;
///  3. the three best so far, measured again twice each, interleaved (A B C A B C), and the
///     choice among them by these measurements alone (the least of each one's): every finalist
///     measured as often, in neighbouring steps. Screening measurements are one step each, and
///     a run's steps speed up over its first dozen (8 local PEs ran their settled configuration
///     at 1.3 ms a step at step 10 and 0.8 ms at step 29), so the least over all measurements
///     favoured what was measured late or often;
/// then it keeps the best. Every step at most one configuration; settled within 25 steps.
class round_tuner final : public step_tuner {
 public:
  round_tuner(const machine& m, const physical_topology& physical, const topology_manager* network,
              const tuning_seed& seed, const step_configuration& initial, std::size_t item_bytes)
      : machine_(m), physical_(physical), costs_(seed_costs(seed)), item_bytes_(item_bytes), best_(initial) {
    if (network != nullptr) network_.emplace(*network);
    const auto nearest_power = [](std::size_t n) {
      std::size_t p = 1;
      while (p * 2 <= n) p *= 2;
      return n - p <= 2 * p - n ? p : 2 * p;
    };
    // Powers of two around the automatic buffer, a quarter of it to four times it (on 2 mpi
    // ranks alltoall ran fastest at 16384 items, 4x the automatic 4096).
    const std::size_t around = nearest_power(automatic_buffer_items(seed, item_bytes));
    for (const std::size_t b : {around / 4, around / 2, around, around * 2, around * 4})
      if (b >= 1) buffer_sizes_.push_back(b);
  }

  step_configuration next(const step_outcome& outcome, const step_configuration& current) override {
    explored_ = false;
    if (settled_) return best_;
    ++steps_;
    if (outcome.items_inserted > 0) {
      const double seconds = static_cast<double>(outcome.nanoseconds) * 1e-9;
      const double per_item = seconds / (static_cast<double>(outcome.items_inserted) / outcome.pes);
      record(current, per_item);
      items_per_pe_ = static_cast<double>(outcome.items_inserted) / outcome.pes;
    }
    if (steps_ >= max_explore_steps) return settle();
    while (queue_.empty()) {
      if (!advance()) return settle();
    }
    step_configuration c = queue_.front();
    queue_.pop_front();
    explored_ = true;
    return c;
  }

  bool settled() const noexcept override { return settled_; }
  bool explored() const noexcept override { return explored_; }

 private:
  enum class round { grids, buffers, confirm, done };
  struct trial {
    step_configuration config;
    double best = std::numeric_limits<double>::infinity();
    double confirmed = std::numeric_limits<double>::infinity();  // least in the confirm round
    int measured = 0;
  };

  void record(const step_configuration& c, double per_item) {
    const bool confirming = round_ == round::done;  // the confirm round's steps run after advance() set done
    for (auto& t : trials_) {
      if (same(t.config, c)) {
        t.best = std::min(t.best, per_item);
        if (confirming) t.confirmed = std::min(t.confirmed, per_item);
        ++t.measured;
        return;
      }
    }
    trials_.push_back({c, per_item, confirming ? per_item : std::numeric_limits<double>::infinity(), 1});
  }

  /// The cheapest trial: among those the confirm round measured when it did, else among all.
  const trial* cheapest() const {
    const trial* best = nullptr;
    for (const auto& t : trials_)
      if (t.confirmed < std::numeric_limits<double>::infinity() && (best == nullptr || t.confirmed < best->confirmed))
        best = &t;
    if (best != nullptr) return best;
    for (const auto& t : trials_)
      if (best == nullptr || t.best < best->best) best = &t;
    return best;
  }

  // The grid of the most dimensions, 2 or 3 PEs wide each (balanced over floor(log2 P)
  // dimensions), with plain grid routing; none below 4 PEs (one dimension).
  std::optional<step_configuration> fewest_links(std::size_t buffer_items) const {
    const int pes = machine_.num_pes();
    const int dims = floor_log2(static_cast<std::size_t>(pes));
    if (dims < 2) return std::nullopt;
    return step_configuration{virtual_grid::balanced(pes, dims), routing::grid, buffer_items};
  }

  bool measured(const step_configuration& c) const {
    return std::any_of(trials_.begin(), trials_.end(), [&](const trial& t) { return same(t.config, c); });
  }

  // Fills the queue with the next round's configurations; false when there is none left.
  bool advance() {
    const trial* best = cheapest();
    if (best == nullptr) return false;  // nothing measured yet (steps without items): keep waiting
    switch (round_) {
      case round::grids: {
        round_ = round::buffers;
        step_workload w;
        w.item_bytes = item_bytes_;
        w.items_per_pe = items_per_pe_;
        w.pattern = destinations::uniform;
        std::vector<std::pair<double, step_configuration>> ranked;
        for (const auto& candidate : candidate_grids(machine_, physical_)) {
          step_configuration c{candidate.grid, candidate.route, best->config.buffer_items};
          if (measured(c)) continue;
          try {
            ranked.emplace_back(
                predict_step(machine_, c.grid, c.route, c.buffer_items, w, costs_, network_ ? &*network_ : nullptr).seconds,
                c);
          } catch (const std::invalid_argument&) {
          }
        }
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 0; i < ranked.size() && i < grid_candidates_tried; ++i)
          queue_.push_back(ranked[i].second);
        // A step with few items costs what its end costs: by final markers, a marker on every
        // link of the grid, sum(d_i - 1) per PE. The grid with the fewest links (the most
        // dimensions) is measured too, so that short steps can settle on it: at 256 simulated
        // BG/Q ranks a 1-update step by markers took 277 us on 16x16 and 122 us on 2^8
        // (BENCHMARKS.md, issue 53). Where the transports confirm delivery such a step goes
        // around the grid and costs the same on every grid (53.0 us on both), but with 16
        // updates per PE the 2^8 grid, which aggregates over its hops, still took 132.8 us
        // against 195.6.
        if (std::optional<step_configuration> few = fewest_links(best->config.buffer_items);
            few && !measured(*few) &&
            std::none_of(queue_.begin(), queue_.end(), [&](const step_configuration& q) { return same(q, *few); }))
          queue_.push_back(*few);
        return true;
      }
      case round::buffers: {
        round_ = round::confirm;
        const auto close = [](std::size_t a, std::size_t b) { return 10 * std::max(a, b) <= 11 * std::min(a, b); };
        for (const std::size_t b : buffer_sizes_) {
          if (close(b, best->config.buffer_items)) continue;
          step_configuration c = best->config;
          c.buffer_items = b;
          if (!measured(c)) queue_.push_back(c);
        }
        return true;
      }
      case round::confirm: {
        round_ = round::done;
        std::vector<const trial*> order;
        for (const auto& t : trials_) order.push_back(&t);
        std::stable_sort(order.begin(), order.end(), [](const trial* a, const trial* b) { return a->best < b->best; });
        for (int pass = 0; pass < confirm_passes; ++pass)
          for (std::size_t i = 0; i < order.size() && i < finalists; ++i) queue_.push_back(order[i]->config);
        return true;
      }
      case round::done:
        return false;
    }
    return false;
  }

  step_configuration settle() {
    settled_ = true;
    queue_.clear();
    if (const trial* best = cheapest()) best_ = best->config;
    return best_;
  }

  machine machine_;
  physical_topology physical_;
  std::optional<topology_manager> network_;  // the links predict_step routes over, when the job named them
  machine_costs costs_;
  std::size_t item_bytes_;
  step_configuration best_;
  std::vector<std::size_t> buffer_sizes_;  // the buffer round's candidates
  std::deque<step_configuration> queue_;
  std::vector<trial> trials_;
  round round_ = round::grids;
  double items_per_pe_ = 0;
  std::uint32_t steps_ = 0;
  bool settled_ = false;
  bool explored_ = false;
};

std::size_t buffer_from_costs(const link_costs& costs, double bytes_75, std::size_t item_bytes) {
  item_bytes = std::max<std::size_t>(1, item_bytes);
  const std::size_t from_curve = items_for(bytes_75, item_bytes);
  // The smallest buffer at which the per-message cost, spread over the buffer's items, is at most
  // a fiftieth of an item's own cost (the model's item rate within 2% of its peak):
  // g = (alpha + e beta) / (0.02 (c + m beta)). It counts the per-item cost, which the 75%
  // bandwidth point (thesis 2.3.1) does not: where transit's per-message path costs hundreds of
  // items (mpi here), the 75% point left a tenth of the item rate on the table. At most 1 MiB
  // messages; without calibrated costs, the 75% point. No lower bound from the curve: its 50%
  // point moved to 64 KiB on the local backend under load, where 2-32 KiB buffers ran fastest.
  const double per_item = costs.per_item + static_cast<double>(item_bytes) * costs.beta;
  if (!(costs.alpha > 0) || !(per_item > 0)) return from_curve;
  const double g =
      std::ceil((costs.alpha + static_cast<double>(header_bytes) * costs.beta) / (per_message_share * per_item));
  const std::size_t high = items_for(static_cast<double>(max_automatic_bytes), item_bytes);
  return std::clamp(static_cast<std::size_t>(std::min(g, 4294967295.0)), std::size_t{1}, high);
}

}  // namespace

tuning_seed local_tuning_seed(const context& ctx, std::size_t item_bytes) {
  (void)item_bytes;
  tuning_seed seed;
  auto& v = seed.values;
  const auto file = cached_profile(default_profile_path());  // throws profile_error for a bad file
  bool exact = false;
  const auto entry = file->closest_streamer(ctx.backend(), ctx.machine().max_pes_per_node(), this_host(), exact);
  const double sharing = pes_per_core(ctx);
  const machine_costs costs = entry ? costs_from(*entry, sharing) : built_in_costs(ctx.backend(), sharing);
  v[has_profile] = entry ? 1 : 0;
  v[intra_alpha] = costs.intra.alpha;
  v[intra_beta] = costs.intra.beta;
  v[intra_item] = costs.intra.per_item;
  v[inter_alpha] = costs.inter.alpha;
  v[inter_beta] = costs.inter.beta;
  v[inter_item] = costs.inter.per_item;
  v[bytes_75] = static_cast<double>(entry ? entry->buffer_bytes_75 : tuning_defaults::buffer_bytes_75);
  v[sharing_per_core] = sharing;
  return seed;
}

std::size_t automatic_buffer_items(const tuning_seed& seed, std::size_t item_bytes) {
  const double curve_bytes = seed.values[bytes_75] > 0 ? seed.values[bytes_75] : tuning_defaults::buffer_bytes_75;
  if (seed.values[has_profile] == 0) return items_for(curve_bytes, std::max<std::size_t>(1, item_bytes));
  return buffer_from_costs({seed.values[inter_alpha], seed.values[inter_beta], seed.values[inter_item]},
                           curve_bytes, item_bytes);
}

std::unique_ptr<step_tuner> make_step_tuner(const context& ctx, const tuning_seed& seed,
                                            const step_configuration& initial, std::size_t item_bytes) {
  return make_step_tuner(ctx.machine(), ctx.topology().physical(), named_network(ctx), seed, initial, item_bytes);
}

std::unique_ptr<step_tuner> make_step_tuner(const machine& m, const physical_topology& physical,
                                            const topology_manager* network, const tuning_seed& seed,
                                            const step_configuration& initial, std::size_t item_bytes) {
  return std::make_unique<round_tuner>(m, physical, network, seed, initial, std::max<std::size_t>(1, item_bytes));
}

}  // namespace transit::detail

namespace transit {

std::size_t automatic_buffer_items(const streamer_profile& profile, std::size_t item_bytes) {
  const link_costs& costs = profile.inter.measured ? profile.inter.costs : profile.intra.costs;
  return detail::buffer_from_costs(costs, static_cast<double>(profile.buffer_bytes_75), item_bytes);
}

}  // namespace transit
