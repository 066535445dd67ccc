#include "transit/runtime/options.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/simulation.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/topology/topology_manager.hpp"
#include "transport/launch.hpp"

namespace transit {

namespace {

int parse_positive(std::string_view name, std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1)
    detail::throw_invalid(name, text, "a positive integer");
  return value;
}

// A week: longer than any job that is waited on, and far inside what milliseconds in a long long
// hold, so the conversion below is always defined.
constexpr double max_watchdog_seconds = 7 * 24 * 3600;

std::chrono::milliseconds parse_seconds(std::string_view name, std::string_view text) {
  // std::from_chars for double is fine in GCC 12; accept "10", "0.5".
  double seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  // Below a millisecond would round to 0, which means off: refused rather than silently dropped.
  if (ec != std::errc() || end != text.data() + text.size() || !(seconds == 0 || seconds >= 0.001) ||
      !(seconds <= max_watchdog_seconds))
    detail::throw_invalid(name, text, "0 (off) or a number of seconds in [0.001, 604800] (one week)");
  return std::chrono::milliseconds(std::llround(seconds * 1000.0));
}

bool parse_switch(std::string_view name, std::string_view text) {
  if (text != "0" && text != "1") detail::throw_invalid(name, text, "1 (on) or 0 (off)");
  return text == "1";
}

// The trace is written when the job ends: a directory it cannot be written to is refused now,
// before any PE starts, rather than found out after the work is done. Created if missing (by every
// process of a launch: creating one that exists is no error); written to by a probe file.
void check_trace_directory(std::string_view value) {
  const auto refuse = [&](const std::string& why) {
    detail::throw_invalid("--transit-trace", value,
                          detail::concat("a directory transit can create and write the trace files in (", why, ")"));
  };
  if (value.empty()) refuse("an empty path");
  const std::filesystem::path dir{std::string(value)};
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) refuse(error.message());
  if (!std::filesystem::is_directory(dir, error)) refuse("not a directory");
  const std::string probe = (dir / detail::concat(".transit-trace-probe-", ::getpid())).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) refuse(std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

constexpr std::array<std::string_view, 11> option_names{
    "backend",     "pes",       "pes-force",        "pes-per-node", "physical",    "watchdog",
    "mpi-threads", "threads-per-rank", "comm-thread", "trace",        "trace-events"};

// A prefix's 8 bits carry the sending thread (src/transport/mpi/wire.hpp).
constexpr int max_threads_per_rank = 256;

[[noreturn]] void unknown_option(std::string_view name) {
  detail::throw_invalid("option", detail::concat("--transit-", name),
                        "one of --transit-backend, --transit-pes, --transit-pes-force, "
                        "--transit-pes-per-node, --transit-physical, --transit-watchdog, --transit-mpi-threads, "
                        "--transit-threads-per-rank, --transit-comm-thread, --transit-trace, "
                        "--transit-trace-events");
}

void apply(run_options& o, std::string_view name, std::string_view value) {
  if (name == "backend") {
    if (value != "local" && value != "mpi") detail::throw_invalid("--transit-backend", value, "'local' or 'mpi'");
    o.backend = value;
  } else if (name == "pes") {
    o.pes = parse_positive("--transit-pes", value);
  } else if (name == "pes-force") {
    o.pes_force = parse_switch("--transit-pes-force", value);  // kept for old scripts: no effect
  } else if (name == "pes-per-node") {
    o.pes_per_node = parse_positive("--transit-pes-per-node", value);
  } else if (name == "physical") {
    (void)physical_topology::parse(value);  // reject a malformed spec here, before any PE starts
    o.physical = value;
  } else if (name == "watchdog") {
    o.watchdog = parse_seconds("--transit-watchdog", value);
  } else if (name == "mpi-threads") {
    if (value != "funneled" && value != "multiple")
      detail::throw_invalid("--transit-mpi-threads", value, "'funneled' or 'multiple'");
    o.mpi_thread_multiple = value == "multiple";
  } else if (name == "threads-per-rank") {
    o.threads_per_rank = parse_positive("--transit-threads-per-rank", value);
    if (o.threads_per_rank > max_threads_per_rank)
      detail::throw_invalid("--transit-threads-per-rank", value,
                            detail::concat("a thread count from 1 to ", max_threads_per_rank));
  } else if (name == "comm-thread") {
    o.comm_thread = parse_switch("--transit-comm-thread", value);
  } else if (name == "trace") {
    check_trace_directory(value);
    o.trace = value;
  } else if (name == "trace-events") {
    o.trace_events = static_cast<std::size_t>(parse_positive("--transit-trace-events", value));
  } else {
    unknown_option(name);
  }
}

void apply_env(run_options& o, const char* variable, std::string_view name) {
  const char* value = std::getenv(variable);
  if (value == nullptr || *value == '\0') return;
  try {
    apply(o, name, value);
  } catch (const std::invalid_argument& e) {
    // Name the variable the user actually set, not the option.
    std::string what = e.what();
    const std::string option = detail::concat("--transit-", name);
    if (what.rfind(option, 0) == 0) what.replace(0, option.size(), variable);
    throw std::invalid_argument(what);
  }
}

bool local_backend(const run_options& o) {
  return o.backend == "local" || (o.backend.empty() && !started_by_mpi_launcher());
}

}  // namespace

int max_local_pes() {
  // One thread per PE, and the kernel numbers every thread with a pid: no process can hold more
  // threads than kernel.pid_max or kernel.threads-max allow (32768 and 192729 on this machine).
  long limit = 1L << 22;  // Linux's largest pid_max, where /proc cannot be read
  for (const char* file : {"/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max"}) {
    if (std::FILE* f = std::fopen(file, "r")) {
      long value = 0;
      if (std::fscanf(f, "%ld", &value) == 1 && value > 0) limit = std::min(limit, value);
      std::fclose(f);
    }
  }
  return static_cast<int>(limit);
}

run_options parse_run_options(int& argc, char**& argv) {
  run_options o;
  apply_env(o, "TRANSIT_BACKEND", "backend");
  apply_env(o, "TRANSIT_PES", "pes");
  apply_env(o, "TRANSIT_PES_FORCE", "pes-force");
  apply_env(o, "TRANSIT_PES_PER_NODE", "pes-per-node");
  apply_env(o, "TRANSIT_PHYSICAL", "physical");
  apply_env(o, "TRANSIT_WATCHDOG", "watchdog");
  apply_env(o, "TRANSIT_MPI_THREADS", "mpi-threads");
  apply_env(o, "TRANSIT_THREADS_PER_RANK", "threads-per-rank");
  apply_env(o, "TRANSIT_COMM_THREAD", "comm-thread");
  apply_env(o, "TRANSIT_TRACE", "trace");
  apply_env(o, "TRANSIT_TRACE_EVENTS", "trace-events");

  constexpr std::string_view prefix = "--transit-";
  bool pes_from_command_line = false, threads_from_command_line = false, comm_thread_from_command_line = false;
  std::vector<std::string_view> seen;
  int kept = 1, i = 1;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.substr(0, prefix.size()) != prefix) {
      argv[kept++] = argv[i];
      continue;
    }
    const std::string_view rest = arg.substr(prefix.size());
    const auto eq = rest.find('=');
    const std::string_view name = rest.substr(0, eq);
    if (std::find(option_names.begin(), option_names.end(), name) == option_names.end()) unknown_option(name);
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      throw std::invalid_argument(detail::concat("--transit-", name, ": given more than once, expected once"));
    seen.push_back(name);
    pes_from_command_line |= name == "pes";
    threads_from_command_line |= name == "threads-per-rank";
    comm_thread_from_command_line |= name == "comm-thread";
    if (eq != std::string_view::npos) {
      apply(o, name, rest.substr(eq + 1));
    } else if (name == "pes-force") {
      o.pes_force = true;  // a flag: the next argument is not its value
    } else {
      if (i + 1 >= argc) detail::throw_invalid("option", arg, "a value after it (--transit-x=value or --transit-x value)");
      apply(o, name, argv[++i]);
    }
  }
  for (; i < argc; ++i) argv[kept++] = argv[i];  // "--" and what follows
  argc = kept;
  argv[argc] = nullptr;

  // Any count that can run runs (above the hardware threads it warns, when the job starts); only a
  // count no process can have threads for is refused here. --transit-pes-force is a no-op.
  if (local_backend(o) && o.pes > max_local_pes())
    detail::throw_invalid(pes_from_command_line ? "--transit-pes" : "TRANSIT_PES", o.pes,
                          detail::concat("at most ", max_local_pes(),
                                         " on the local backend (one thread per PE; the kernel's limit on threads, "
                                         "kernel.pid_max or kernel.threads-max)"));
  if (o.threads_per_rank > 1) {
    const char* option = threads_from_command_line ? "--transit-threads-per-rank" : "TRANSIT_THREADS_PER_RANK";
    if (local_backend(o))
      detail::throw_invalid(option, o.threads_per_rank,
                            "1 with the local backend (its PEs are threads already: use --transit-pes)");
    if (const char* expected = detail::simulation::threads_per_rank_refusal(o.threads_per_rank))
      detail::throw_invalid(option, o.threads_per_rank, expected);
    if (!o.mpi_thread_multiple && o.comm_thread == false)
      detail::throw_invalid(option, o.threads_per_rank,
                            "1 with --transit-mpi-threads=funneled and no communication thread (every PE thread "
                            "calls MPI: MPI_THREAD_MULTIPLE; --transit-comm-thread=1 needs only FUNNELED)");
  } else if (o.comm_thread == true) {
    detail::throw_invalid(comm_thread_from_command_line ? "--transit-comm-thread" : "TRANSIT_COMM_THREAD", 1,
                          "0 with one thread per rank (a communication thread serves the PE threads of "
                          "--transit-threads-per-rank above 1)");
  }
  return o;
}

run_options run_options_from_environment() {
  char name[] = "transit";
  char* arguments[] = {name, nullptr};
  int argc = 1;
  char** argv = arguments;
  return parse_run_options(argc, argv);
}

bool runs_comm_thread(const run_options& o) noexcept {
  return o.threads_per_rank > 1 && o.comm_thread.value_or(true);
}

bool started_by_mpi_launcher() { return detail::launched_by_mpi(); }

}  // namespace transit
