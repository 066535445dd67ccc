#pragma once
// automatic's schedule and verdict for one choice among exchange methods, apart from running the
// exchanges: the engine (src/exchange/engine.cpp) runs each phase's plan of batches, reduces the
// batch times over PEs, and hands them back here. Kept apart so that tests can feed it recorded
// timings (tests/exchange/selection_test.cpp). docs/exchange.md, "How automatic chooses".
#include <cstddef>
#include <span>
#include <vector>

namespace transit::detail {

/// A batch of consecutive runs of one candidate in automatic's schedule.
struct trial_batch {
  std::size_t candidate = 0;  // index into the candidates
  std::size_t runs = 0;
  bool timed = false;
  // Runs of the current leader for the program's own work, untimed, that keep the trials within
  // trial_budget of the time the runs take while the choice is made (not trial runs).
  bool exploit = false;
};

/// Local, deterministic: every PE holds one, feeds it the same reduced times and so plans and
/// chooses alike. Phases: scouting (one untimed run of each candidate, then a short timed batch
/// each; candidates more than 2x slower than the fastest are dropped), racing (the survivors in
/// interleaved rounds of ~4 ms batches, the order rotated each round), and, when more than one
/// candidate's best race round came within 10% of the leader's median, confirming (more rounds
/// among those finalists only). A candidate's time is the median per run over all its rounds; the
/// fastest finalist (or the race's leader, when it is alone) is chosen.
///
/// The trial budget: after scouting, every timed batch of a candidate slower than the leader is
/// followed by runs of the leader (exploit batches), as many as keep what the slower runs cost
/// beyond the leader's time within trial_budget of all those runs' time. A short kernel then runs
/// mostly the scouted leader while the race goes on, and pays at most that fraction for it; a
/// long one reaches the same choice a few runs later.
class exchange_selection {
 public:
  enum class phase { scouting, racing, confirming, decided };

  /// Starts scouting `candidates` (at least one).
  explicit exchange_selection(std::size_t candidates);

  phase current() const noexcept { return phase_; }
  bool decided() const noexcept { return phase_ == phase::decided; }
  /// The batches of the current phase, in the order to run them (empty once decided).
  const std::vector<trial_batch>& plan() const noexcept { return plan_; }
  /// Ends the current phase: `batch_seconds[i]` is plan()[i]'s time, all its runs (the slowest
  /// PE's). Untimed batches' entries are ignored. Plans the next phase, or decides. Throws
  /// std::invalid_argument when the count is not plan().size() or the selection is decided.
  void finish_phase(std::span<const double> batch_seconds);

  /// Once decided: the chosen candidate.
  std::size_t chosen() const noexcept { return chosen_; }
  /// Per candidate: seconds per run as compared (the median over the race and confirming rounds,
  /// or the scouting time for a candidate dropped there).
  const std::vector<double>& seconds() const noexcept { return seconds_; }
  /// Per candidate: whether it survived scouting.
  const std::vector<bool>& raced() const noexcept { return raced_; }
  /// Per candidate: whether it was a finalist of the confirming rounds.
  const std::vector<bool>& confirmed() const noexcept { return confirmed_; }
  /// Trial runs of every plan so far (the cost of the choice, in exchanges; exploit runs not counted).
  std::size_t runs() const noexcept { return runs_; }
  /// Exploit runs of every plan so far (the leader's, run to keep the trials within budget).
  std::size_t exploit_runs() const noexcept { return exploit_runs_; }

  // The schedule's constants (docs/exchange.md says why).
  static constexpr std::size_t scout_runs = 3;
  static constexpr double scout_margin = 2.0;
  static constexpr std::size_t race_rounds = 4;
  static constexpr double race_batch_seconds = 4e-3;
  static constexpr std::size_t race_batch_runs = 32;
  static constexpr double confirm_margin = 1.10;
  static constexpr std::size_t confirm_rounds = 4;
  static constexpr double trial_budget = 0.10;
  static constexpr double max_exploit_factor = 8.0;  // exploit runs per slower run, at most

 private:
  void set_plan(std::vector<trial_batch> plan);
  std::vector<trial_batch> rounds_of(const std::vector<trial_batch>& batches, std::size_t rounds) const;
  /// `plan` with an exploit batch of the leader after each batch of a slower candidate (above).
  std::vector<trial_batch> within_budget(std::vector<trial_batch> plan) const;
  void decide_among(const std::vector<std::size_t>& finalists);

  std::size_t n_;
  phase phase_ = phase::scouting;
  std::vector<trial_batch> plan_;
  std::vector<trial_batch> race_batches_;  // one per survivor, its race batch size
  std::vector<std::vector<double>> per_run_;  // per candidate: per-run time of each race/confirm round
  std::vector<double> seconds_;
  std::vector<bool> raced_, confirmed_;
  std::size_t chosen_ = 0;
  std::size_t runs_ = 0;
  std::size_t exploit_runs_ = 0;
};

}  // namespace transit::detail
