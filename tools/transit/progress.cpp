// The progress line (progress.hpp).
#include "progress.hpp"

#include "transit/detail/runtime/context_access.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace transit::cli {

namespace {

// A terminal line redrawn more often than this flickers and costs writes for nothing; a simulated
// run's lines are read by a person between minutes of waiting, every few seconds is enough.
constexpr auto line_interval = std::chrono::milliseconds(250);
constexpr auto lines_interval = std::chrono::seconds(3);

std::string fixed(double value, int decimals, const char* unit) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f%s", decimals, value, unit);
  return text;
}

std::string seconds_text(double seconds) {
  return seconds < 10 ? fixed(seconds, 1, " s") : seconds < 120 ? fixed(seconds, 0, " s") : fixed(seconds / 60, 1, " min");
}

}  // namespace

progress::mode progress::choose(bool first_pe, bool quiet, bool stderr_is_terminal, const char* environment) {
  if (!first_pe || quiet) return mode::off;
  if (environment != nullptr && std::strcmp(environment, "lines") == 0) return mode::lines;
  return stderr_is_terminal ? mode::line : mode::off;
}

progress::mode progress::for_this_process(bool first_pe, bool quiet) {
  return choose(first_pe, quiet, ::isatty(STDERR_FILENO) == 1, std::getenv("TRANSIT_PROGRESS"));
}

std::string progress::left_text(double seconds) {
  seconds = std::max(seconds, 0.0);
  if (seconds < 90) return fixed(std::max(seconds, 1.0), 0, " s left").insert(0, 1, '~');
  if (seconds < 90 * 60) return fixed(seconds / 60, 0, " min left").insert(0, 1, '~');
  return fixed(seconds / 3600, 1, " h left").insert(0, 1, '~');
}

std::string progress::format(std::string_view task, std::string_view unit, int done, int total,
                             std::string_view detail, double real, double simulated) {
  // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict) on chains of string operator+.
  std::string text(task);
  text.append(": ").append(unit);
  // The unit running now is the next one; all done shows total/total.
  char count[32];
  std::snprintf(count, sizeof count, " %d/%d", std::min(done + 1, total), total);
  text.append(count);
  if (!detail.empty()) text.append(" (").append(detail).append(")");
  if (simulated >= 0)
    text.append(", simulated ").append(seconds_text(simulated)).append(" in ").append(seconds_text(real)).append(" real");
  else
    text.append(", ").append(seconds_text(real));
  // The mean unit so far times the units left: units of one run are alike (runs, grids, points
  // of a sweep), and a person reads an order of magnitude, not a promise.
  if (done > 0 && done < total) text.append(", ").append(left_text(real / done * (total - done)));
  return text;
}

progress::progress(std::string task, std::string unit, mode m, std::FILE* out)
    : task_(std::move(task)), unit_(std::move(unit)), mode_(m), out_(out) {
  if (mode_ == mode::off) return;
  start_ = last_draw_ = detail::real_clock::now();
#ifdef TRANSIT_SIMGRID
  simulated_start_ = detail::steady_clock::now();
#endif
}

void progress::update(int done, int total, std::string_view detail) {
  if (mode_ == mode::off) return;
  done_ = done;
  total_ = total;
  detail_ = detail;
  draw(!drawn_once_);
}

void progress::tick() {
  if (mode_ == mode::off || !drawn_once_) return;
  draw(false);
}

void progress::draw(bool force) {
  const auto now = detail::real_clock::now();
  if (!force && now - last_draw_ < (mode_ == mode::line ? line_interval : lines_interval)) return;
  last_draw_ = now;
  drawn_once_ = true;
  double simulated = -1;
#ifdef TRANSIT_SIMGRID
  simulated = detail::seconds_since(simulated_start_);
#endif
  const std::string text = format(task_, unit_, done_, total_, detail_,
                                  std::chrono::duration<double>(now - start_).count(), simulated);
  if (mode_ == mode::lines) {
    std::fprintf(out_, "transit progress: %s\n", text.c_str());
  } else {
    // Spaces over what is left of a longer line before; the cursor stays at the line's end.
    std::fprintf(out_, "\r%s%*s", text.c_str(), static_cast<int>(shown_ > text.size() ? shown_ - text.size() : 0), "");
    shown_ = std::max(shown_, text.size());
  }
  std::fflush(out_);
}

void progress::clear() {
  if (mode_ == mode::lines) return;  // lines stay: the next one comes when it is time
  if (mode_ == mode::off || shown_ == 0) {
    drawn_once_ = false;
    return;
  }
  std::fprintf(out_, "\r%*s\r", static_cast<int>(shown_), "");
  std::fflush(out_);
  shown_ = 0;
  drawn_once_ = false;
}

progress_ticker::progress_ticker(context& ctx, progress& p) : ctx_(ctx) {
  // Did nothing, as far as the waiting loop is concerned: it must not count as the job's progress.
  if (p.on()) hook_ = detail::context_access::add_progress_hook(ctx, [&p] { return p.tick(), false; });
}

progress_ticker::~progress_ticker() {
  if (hook_ >= 0) detail::context_access::remove_progress_hook(ctx_, hook_);
}

}  // namespace transit::cli
