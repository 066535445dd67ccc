// The tuning layer's side of the streamer's hook (streamer/detail/tuning_hook.hpp): the seed a
// streamer takes from PE 0, buffer_items = 0, and the step tuner (thesis 6.1.2: buffer sizes
// within 50-90% of the peak streaming bandwidth, grids ranked by the cost model, a control system
// that tries configurations between iterations and settles, as PICS did within 25 iterations).
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "profile_json.hpp"
#include "transit/core/error.hpp"
#include "transit/runtime/context.hpp"
#include "transit/streamer/detail/tuning_hook.hpp"
#include "transit/tuning/model.hpp"
#include "tuning_defaults.hpp"

namespace transit::detail {

namespace {

// Seed layout (PE 0's, copied to every PE by the streamer).
enum seed_slot : int {
  has_profile = 0,
  intra_alpha, intra_beta, intra_item,
  inter_alpha, inter_beta, inter_item,
  bytes_50, bytes_75, bytes_90,
  sharing_per_core,
};

constexpr std::size_t header_bytes = 16;
constexpr std::uint32_t max_explore_steps = 24;  // settled by the 25th step at the latest
constexpr std::size_t max_buffer_candidates = 5;
constexpr std::size_t grid_candidates_tried = 3;

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
/// inserted, the step's mean wall time over PEs divided by the items each PE inserted):
///  1. buffer sizes within the 50-90% bandwidth range, on the starting grid;
///  2. the grids the cost model ranks best for the observed workload, with the best buffer;
///  3. on a new best grid, the neighbouring buffer sizes (half and double) within the range;
///  4. the two best configurations once more (a shared machine is noisy: the least of a
///     configuration's measurements counts);
/// then it keeps the best. Every step at most one configuration; settled within 25 steps.
class round_tuner final : public step_tuner {
 public:
  round_tuner(const context& ctx, const tuning_seed& seed, const step_configuration& initial, std::size_t item_bytes)
      : machine_(ctx.machine()),
        physical_(ctx.topology().physical()),
        costs_(seed_costs(seed)),
        item_bytes_(item_bytes),
        best_(initial),
        grid_of_buffers_(initial) {
    // Powers of two from the 50% to the 90% point of the bandwidth curve (each point rounded to
    // the nearest power of two), at most max_buffer_candidates spread evenly; one within 10% of
    // the starting size is the starting size.
    const auto nearest_power = [](std::size_t n) {
      std::size_t p = 1;
      while (p * 2 <= n) p *= 2;
      return n - p <= 2 * p - n ? p : 2 * p;
    };
    const std::size_t low = nearest_power(items_for(seed.values[bytes_50], item_bytes));
    const std::size_t high = std::max(low, nearest_power(items_for(seed.values[bytes_90], item_bytes)));
    std::vector<std::size_t> sizes;
    for (std::size_t b = low; b <= high; b *= 2) sizes.push_back(b);
    if (sizes.size() > max_buffer_candidates) {
      std::vector<std::size_t> spread;
      for (std::size_t i = 0; i < max_buffer_candidates; ++i)
        spread.push_back(sizes[i * (sizes.size() - 1) / (max_buffer_candidates - 1)]);
      sizes = spread;
    }
    buffer_range_ = {std::min(low, initial.buffer_items), std::max(high, initial.buffer_items)};
    const auto close = [](std::size_t a, std::size_t b) { return 10 * std::max(a, b) <= 11 * std::min(a, b); };
    for (const std::size_t b : sizes) {
      if (close(b, initial.buffer_items)) continue;
      step_configuration c = initial;
      c.buffer_items = b;
      queue_.push_back(c);
    }
    round_ = round::buffers;
  }

  step_configuration next(const step_outcome& outcome, const step_configuration& current) override {
    explored_ = false;
    if (settled_) return best_;
    ++steps_;
    if (outcome.items_inserted > 0) {
      const double seconds = static_cast<double>(outcome.nanoseconds) / outcome.pes * 1e-9;
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
  enum class round { buffers, grids, refine, confirm, done };
  struct trial {
    step_configuration config;
    double best = std::numeric_limits<double>::infinity();
    int measured = 0;
  };

  void record(const step_configuration& c, double per_item) {
    for (auto& t : trials_) {
      if (same(t.config, c)) {
        t.best = std::min(t.best, per_item);
        ++t.measured;
        return;
      }
    }
    trials_.push_back({c, per_item, 1});
  }

  const trial* cheapest() const {
    const trial* best = nullptr;
    for (const auto& t : trials_)
      if (best == nullptr || t.best < best->best) best = &t;
    return best;
  }

  bool measured(const step_configuration& c) const {
    return std::any_of(trials_.begin(), trials_.end(), [&](const trial& t) { return same(t.config, c); });
  }

  // Fills the queue with the next round's configurations; false when there is none left.
  bool advance() {
    const trial* best = cheapest();
    if (best == nullptr) return false;  // nothing measured yet (steps without items): keep waiting
    switch (round_) {
      case round::buffers: {
        round_ = round::grids;
        grid_of_buffers_ = best->config;
        step_workload w;
        w.item_bytes = item_bytes_;
        w.items_per_pe = items_per_pe_;
        w.pattern = destinations::uniform;
        std::vector<std::pair<double, step_configuration>> ranked;
        for (const auto& candidate : candidate_grids(machine_, physical_)) {
          step_configuration c{candidate.grid, candidate.route, best->config.buffer_items};
          if (candidate.grid == best->config.grid && candidate.route == best->config.route) continue;
          try {
            ranked.emplace_back(predict_step(machine_, c.grid, c.route, c.buffer_items, w, costs_).seconds, c);
          } catch (const std::invalid_argument&) {
          }
        }
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 0; i < ranked.size() && i < grid_candidates_tried; ++i)
          queue_.push_back(ranked[i].second);
        return true;
      }
      case round::grids: {
        round_ = round::refine;
        if (best->config.grid == grid_of_buffers_.grid && best->config.route == grid_of_buffers_.route) return true;
        for (const std::size_t b : {best->config.buffer_items / 2, best->config.buffer_items * 2}) {
          if (b < buffer_range_.first || b > buffer_range_.second) continue;
          step_configuration c = best->config;
          c.buffer_items = b;
          if (!measured(c)) queue_.push_back(c);
        }
        return true;
      }
      case round::refine: {
        round_ = round::confirm;
        std::vector<const trial*> order;
        for (const auto& t : trials_) order.push_back(&t);
        std::stable_sort(order.begin(), order.end(), [](const trial* a, const trial* b) { return a->best < b->best; });
        for (std::size_t i = 0; i < order.size() && i < 2; ++i) queue_.push_back(order[i]->config);
        return true;
      }
      case round::confirm:
      case round::done:
        round_ = round::done;
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
  machine_costs costs_;
  std::size_t item_bytes_;
  step_configuration best_;
  step_configuration grid_of_buffers_;
  std::pair<std::size_t, std::size_t> buffer_range_{1, 1};
  std::deque<step_configuration> queue_;
  std::vector<trial> trials_;
  round round_ = round::buffers;
  double items_per_pe_ = 0;
  std::uint32_t steps_ = 0;
  bool settled_ = false;
  bool explored_ = false;
};

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
  v[bytes_50] = static_cast<double>(entry ? entry->buffer_bytes_50 : tuning_defaults::buffer_bytes_50);
  v[bytes_75] = static_cast<double>(entry ? entry->buffer_bytes_75 : tuning_defaults::buffer_bytes_75);
  v[bytes_90] = static_cast<double>(entry ? entry->buffer_bytes_90 : tuning_defaults::buffer_bytes_90);
  v[sharing_per_core] = sharing;
  return seed;
}

std::size_t automatic_buffer_items(const tuning_seed& seed, std::size_t item_bytes) {
  const double bytes = seed.values[bytes_75] > 0 ? seed.values[bytes_75] : tuning_defaults::buffer_bytes_75;
  return items_for(bytes, std::max<std::size_t>(1, item_bytes));
}

std::unique_ptr<step_tuner> make_step_tuner(const context& ctx, const tuning_seed& seed,
                                            const step_configuration& initial, std::size_t item_bytes) {
  return std::make_unique<round_tuner>(ctx, seed, initial, std::max<std::size_t>(1, item_bytes));
}

}  // namespace transit::detail
