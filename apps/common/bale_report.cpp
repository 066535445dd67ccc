#include "common/bale_report.hpp"

#include <cinttypes>
#include <ctime>
#include <stdexcept>

namespace transit::apps {

namespace {

constexpr double bale_version = 3.0;  // libgetput.h's BALE_VERSION, the version the output copies

/// Opens `path` or says which file could not be opened (PE 0 only reaches here).
std::FILE* open_json(const std::string& path, const char* mode) {
  std::FILE* file = std::fopen(path.c_str(), mode);
  if (file == nullptr) throw std::runtime_error("--json_output (-j): got '" + path + "', expected a file that can be written");
  return file;
}

}  // namespace

bale_report::bale_report(context& ctx, const bale_std_options& options, const std::string& app,
                         const std::string& command_line)
    : options_(options), writer_(ctx.rank() == 0) {
  int failed = 0;
  if (writer_) {
    try {
      start(ctx, app, command_line);
    } catch (const std::runtime_error& e) {
      std::fprintf(stderr, "transit: error: %s\n", e.what());
      failed = 1;
    }
  }
  opened_ = ctx.allreduce(failed, reduce_op::max) == 0;
}

void bale_report::start(context& ctx, const std::string& app, const std::string& command_line) {
  const std::time_t now = std::time(nullptr);
  std::tm date{};
  localtime_r(&now, &date);
  char stamp[64];  // room for any int the compiler can imagine in each field
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02d.%02d:%02d", date.tm_year + 1900, date.tm_mon + 1, date.tm_mday,
                date.tm_hour, date.tm_min);
  if (!options_.json_output.empty()) {
    std::FILE* file = open_json(options_.json_output, "w");
    // bale's keys in bale's order (its date has a year and month bug, not copied: real date here).
    std::fprintf(file, "{\n\"bale_version\": \"%4.2f\",\n\"date\": \"%s\",\n\"app\": \"%s\",\n\"pes\": \"%d\",\n",
                 bale_version, stamp, app.c_str(), ctx.size());
    std::fprintf(file, "\"backend\": \"%.*s\",\n", static_cast<int>(ctx.backend().size()), ctx.backend().data());
    std::fclose(file);
    return;
  }
  std::fprintf(stderr,
               "\n***************************************************************\n"
               "Bale Version %4.2f (transit %s, %.*s backend): %s\n"
               "Running command on %d PEs: %s\n"
               "***************************************************************\n\n",
               bale_version, version(), static_cast<int>(ctx.backend().size()), ctx.backend().data(), stamp,
               ctx.size(), command_line.c_str());
}

void bale_report::append_json(const std::string& key, const std::string& value) {
  std::FILE* file = open_json(options_.json_output, "a");
  std::fprintf(file, "\"%s\": \"%s\",\n", key.c_str(), value.c_str());
  std::fclose(file);
}

void bale_report::write_int(const std::string& key, std::int64_t value) {
  if (!writer_) return;
  if (!options_.json_output.empty()) append_json(key, std::to_string(value));
  else std::fprintf(stderr, "%14s: %" PRId64 "\n", key.c_str(), value);
}

void bale_report::write_string(const std::string& key, const std::string& value) {
  if (!writer_) return;
  if (!options_.json_output.empty()) append_json(key, value);
  else std::fprintf(stderr, "%14s: %s\n", key.c_str(), value.c_str());
}

void bale_report::write_time(const std::string& style, double seconds) {
  if (!writer_) return;
  char text[64];
  std::snprintf(text, sizeof text, "%lf", seconds);  // bale's "%lf"
  if (!options_.json_output.empty()) append_json(style, text);
  else std::fprintf(stderr, "%14s: %8.3lf\n", style.c_str(), seconds);
}

void bale_report::write_std_options() {
  if (!writer_) return;
  if (!options_.json_output.empty()) {
    append_json("buf_cnt", std::to_string(options_.buf_cnt));
    return;
  }
  std::fprintf(stderr,
               "Standard options:\n----------------------------------------------------\n"
               "buf_cnt (buffer size)    (-b): %" PRId64 "\nseed                     (-s): %" PRId64
               "\ncores_per_node           (-c): %d\nModels Mask              (-M): %" PRId64 "\n\n",
               options_.buf_cnt, options_.seed, options_.cores_per_node, options_.models_mask);
}

void bale_report::note(const std::string& line) {
  if (writer_ && options_.json_output.empty()) std::fprintf(stderr, "%s\n", line.c_str());
}

void bale_report::finish() {
  if (!writer_ || options_.json_output.empty()) return;
  // bale replaces the last ",\n" by "\n}".
  std::FILE* file = open_json(options_.json_output, "r+");
  std::fseek(file, -2, SEEK_END);
  std::fprintf(file, "\n}");
  std::fclose(file);
}

double mean_over_pes(context& ctx, double seconds) {
  return ctx.allreduce(seconds, reduce_op::sum) / ctx.size();
}

}  // namespace transit::apps
