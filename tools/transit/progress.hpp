#pragma once
// The progress line of the transit command's long work (bench, calibrate, model, map; a simulated
// run through scripts/simulate): on PE 0 only, on stderr, what is running and an estimate of what
// is left, e.g.
//   bench histogram: run 3/10, 8.1 s, ~4 s left
// redrawn in place with '\r' at most every quarter second and erased at the end, so that what the
// command prints is the same with and without it. Off when stderr is not a terminal (a pipe, a
// file, mpirun's forwarding) and with --quiet: piped output is byte for byte what it was.
//
// scripts/simulate asks for `lines` instead (TRANSIT_PROGRESS=lines): the simulated job's stderr
// is a pipe to the script, which shows these lines in place on its own terminal. A line then goes
// out every few real seconds, with the simulated time so far beside the real time.
#include <cstdio>
#include <string>
#include <string_view>

#include "transit/detail/core/clock.hpp"
#include "transit/transit.hpp"

namespace transit::cli {

class progress {
 public:
  enum class mode {
    off,
    line,   ///< one line on a terminal, redrawn in place
    lines,  ///< a plain line every few real seconds (for scripts/simulate, which reads them)
  };

  /// What a command's progress should be: off unless `first_pe`, off with `quiet`; `lines` when
  /// `environment` (TRANSIT_PROGRESS) is "lines"; else a line exactly when stderr is a terminal.
  static mode choose(bool first_pe, bool quiet, bool stderr_is_terminal, const char* environment);
  /// choose() for this process: its stderr, its TRANSIT_PROGRESS.
  static mode for_this_process(bool first_pe, bool quiet);

  /// "bench histogram: run 3/10, 8.1 s, ~4 s left": the unit running now (`done` + 1), `detail`
  /// in parentheses when not empty, the time so far, and no estimate before the first unit is
  /// done. `real` and `simulated` are seconds so far; simulated < 0: not a simulated run, else
  /// "simulated 0.52 s in 12 s real".
  static std::string format(std::string_view task, std::string_view unit, int done, int total,
                            std::string_view detail, double real, double simulated = -1);
  /// "~4 s left", "~2 min left", "~1.5 h left".
  static std::string left_text(double seconds);

  /// `task` ("bench histogram") counts `unit`s ("run", "step"). Draws nothing until update().
  progress(std::string task, std::string unit, mode m, std::FILE* out = stderr);
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;
  ~progress() { clear(); }

  /// `done` of `total` units are done; `detail` says what runs now. Draws at once the first time,
  /// then at most every quarter second (lines: every few seconds).
  void update(int done, int total, std::string_view detail = {});
  /// Redraws the last state if it is time (the elapsed time and the estimate move on): for a
  /// hook that runs while one long unit runs. Cheap when it is not time: one clock read.
  void tick();
  /// Erases the line (before the command prints, and at the end); the next update draws again.
  void clear();

  bool on() const noexcept { return mode_ != mode::off; }

 private:
  void draw(bool force);

  std::string task_, unit_, detail_;
  mode mode_;
  std::FILE* out_;
  int done_ = 0, total_ = 0;
  std::size_t shown_ = 0;  // characters of the line on the terminal now (line mode)
  bool drawn_once_ = false;
  detail::real_clock::time_point start_, last_draw_;
  detail::steady_clock::time_point simulated_start_;
};

/// Keeps a progress line ticking while the PE waits inside transit (a progress hook of the PE), so
/// that the time and the estimate move during one long run; nothing when the line is off.
class progress_ticker {
 public:
  progress_ticker(context& ctx, progress& p);
  progress_ticker(const progress_ticker&) = delete;
  progress_ticker& operator=(const progress_ticker&) = delete;
  ~progress_ticker();

 private:
  context& ctx_;
  int hook_ = -1;
};

}  // namespace transit::cli
