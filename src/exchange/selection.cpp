// automatic's schedule and verdict (include/transit/detail/exchange/selection.hpp).
#include "transit/detail/exchange/selection.hpp"

#include <algorithm>
#include <cmath>

#include "transit/detail/core/error.hpp"
#include "core/median.hpp"

namespace transit::detail {

exchange_selection::exchange_selection(std::size_t candidates)
    : n_(candidates), per_run_(candidates), seconds_(candidates, 0.0), raced_(candidates, false),
      confirmed_(candidates, false) {
  TRANSIT_ASSERT(candidates > 0, "automatic needs a candidate");
  // One untimed run each first: one-off set-up (a neighbourhood graph, buffers) is not the method's.
  std::vector<trial_batch> plan;
  for (std::size_t c = 0; c < n_; ++c) plan.push_back({c, 1, false});
  for (std::size_t c = 0; c < n_; ++c) plan.push_back({c, scout_runs, true});
  set_plan(std::move(plan));
}

void exchange_selection::set_plan(std::vector<trial_batch> plan) {
  plan_ = std::move(plan);
  for (const trial_batch& b : plan_) (b.exploit ? exploit_runs_ : runs_) += b.runs;
}

// A batch of r runs of a candidate taking t per run where the leader takes t_lead costs
// r (t - t_lead) beyond the leader; followed by e runs of the leader, that is within the budget
// b of the time of both when r (t - t_lead) <= b (r t + e t_lead).
std::vector<trial_batch> exchange_selection::within_budget(std::vector<trial_batch> plan) const {
  std::size_t leader = plan.front().candidate;
  for (const trial_batch& b : plan)
    if (seconds_[b.candidate] < seconds_[leader]) leader = b.candidate;
  const double lead = std::max(seconds_[leader], 1e-12);
  std::vector<trial_batch> budgeted;
  for (const trial_batch& b : plan) {
    budgeted.push_back(b);
    const double r = static_cast<double>(b.runs), t = seconds_[b.candidate];
    const double over = r * (t - lead) - trial_budget * r * t;
    if (over <= 0) continue;
    // Capped: a racer is within scout_margin of the leader, so 8 r suffice there; a confirming
    // finalist's median may be inflated by bursts, and must not stall the choice.
    const double runs = std::min(std::ceil(over / (trial_budget * lead)), max_exploit_factor * r);
    budgeted.push_back({leader, static_cast<std::size_t>(runs), false, true});
  }
  return budgeted;
}

// `rounds` rounds of `batches`, the order rotated by one each round, so that drift of a shared
// machine falls on every candidate alike rather than on whichever always runs first.
std::vector<trial_batch> exchange_selection::rounds_of(const std::vector<trial_batch>& batches,
                                                       std::size_t rounds) const {
  std::vector<trial_batch> plan;
  for (std::size_t round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < batches.size(); ++i) plan.push_back(batches[(round + i) % batches.size()]);
  return plan;
}

void exchange_selection::finish_phase(std::span<const double> batch_seconds) {
  if (phase_ == phase::decided)
    throw_invalid("exchange_selection::finish_phase", "a decided selection", "a selection still planning");
  if (batch_seconds.size() != plan_.size())
    throw_invalid("batch times", concat(batch_seconds.size(), " times"), concat(plan_.size(), ", one per batch of the plan"));
  if (phase_ == phase::scouting) {
    for (std::size_t i = 0; i < plan_.size(); ++i)
      if (plan_[i].timed) seconds_[plan_[i].candidate] = batch_seconds[i] / static_cast<double>(plan_[i].runs);
    const double fastest = *std::min_element(seconds_.begin(), seconds_.end());
    race_batches_.clear();
    for (std::size_t c = 0; c < n_; ++c) {
      // Short batches right after a barrier overstate every time and squeeze the candidates
      // together, so scouting only drops the clearly slow.
      if (seconds_[c] > scout_margin * fastest) continue;
      raced_[c] = true;
      const double runs = std::ceil(race_batch_seconds / std::max(seconds_[c], 1e-9));
      race_batches_.push_back({c, std::clamp(static_cast<std::size_t>(runs), scout_runs, race_batch_runs), true});
    }
    if (race_batches_.size() == 1) {
      decide_among({race_batches_.front().candidate});
      return;
    }
    phase_ = phase::racing;
    set_plan(within_budget(rounds_of(race_batches_, race_rounds)));
    return;
  }
  for (std::size_t i = 0; i < plan_.size(); ++i)
    if (plan_[i].timed) per_run_[plan_[i].candidate].push_back(batch_seconds[i] / static_cast<double>(plan_[i].runs));
  for (std::size_t c = 0; c < n_; ++c)
    if (raced_[c]) seconds_[c] = median(per_run_[c]);
  std::vector<std::size_t> finalists;
  for (const trial_batch& b : race_batches_) finalists.push_back(b.candidate);
  if (phase_ == phase::racing) {
    // On a shared machine noise only adds time, and a busy stretch can inflate two of a
    // candidate's four rounds, which moves a median of four. So a candidate stays in the running
    // when its best round came within confirm_margin of the leader's median (it may be the
    // fastest once the bursts are discounted); if more than one does, the finalists run more
    // rounds among themselves, and the median over all their rounds decides.
    double best = seconds_[finalists.front()];
    for (const std::size_t c : finalists) best = std::min(best, seconds_[c]);
    std::erase_if(finalists, [&](std::size_t c) {
      return *std::min_element(per_run_[c].begin(), per_run_[c].end()) > confirm_margin * best;
    });
    if (finalists.size() > 1) {
      std::vector<trial_batch> batches;
      for (const trial_batch& b : race_batches_)
        if (std::find(finalists.begin(), finalists.end(), b.candidate) != finalists.end()) {
          batches.push_back(b);
          confirmed_[b.candidate] = true;
        }
      phase_ = phase::confirming;
      set_plan(within_budget(rounds_of(batches, confirm_rounds)));
      return;
    }
  } else {
    std::erase_if(finalists, [&](std::size_t c) { return !confirmed_[c]; });
  }
  decide_among(finalists);
}

void exchange_selection::decide_among(const std::vector<std::size_t>& finalists) {
  chosen_ = finalists.front();
  for (const std::size_t c : finalists)
    if (seconds_[c] < seconds_[chosen_]) chosen_ = c;
  phase_ = phase::decided;
  plan_.clear();
}

}  // namespace transit::detail
