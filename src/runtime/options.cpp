#include "transit/runtime/options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "transit/core/error.hpp"
#include "transit/topology/topology_manager.hpp"

namespace transit {

namespace {

int parse_positive(std::string_view name, std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1)
    detail::throw_invalid(name, text, "a positive integer");
  return value;
}

std::chrono::milliseconds parse_seconds(std::string_view name, std::string_view text) {
  // std::from_chars for double is fine in GCC 12; accept "10", "0.5".
  double seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || !(seconds >= 0) || !std::isfinite(seconds))
    detail::throw_invalid(name, text, "a number of seconds >= 0");
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

void apply(run_options& o, std::string_view name, std::string_view value) {
  if (name == "backend") {
    if (value != "local" && value != "mpi") detail::throw_invalid("--transit-backend", value, "'local' or 'mpi'");
    o.backend = value;
  } else if (name == "pes") {
    o.pes = parse_positive("--transit-pes", value);
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
  } else {
    detail::throw_invalid("option", detail::concat("--transit-", name),
                          "one of --transit-backend, --transit-pes, --transit-pes-per-node, "
                          "--transit-physical, --transit-watchdog, --transit-mpi-threads");
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

}  // namespace

run_options parse_run_options(int& argc, char**& argv) {
  run_options o;
  apply_env(o, "TRANSIT_BACKEND", "backend");
  apply_env(o, "TRANSIT_PES", "pes");
  apply_env(o, "TRANSIT_PES_PER_NODE", "pes-per-node");
  apply_env(o, "TRANSIT_PHYSICAL", "physical");
  apply_env(o, "TRANSIT_WATCHDOG", "watchdog");
  apply_env(o, "TRANSIT_MPI_THREADS", "mpi-threads");

  constexpr std::string_view prefix = "--transit-";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, prefix.size()) != prefix) {
      argv[kept++] = argv[i];
      continue;
    }
    std::string_view rest = arg.substr(prefix.size());
    const auto eq = rest.find('=');
    if (eq != std::string_view::npos) {
      apply(o, rest.substr(0, eq), rest.substr(eq + 1));
    } else {
      if (i + 1 >= argc) detail::throw_invalid("option", arg, "a value after it (--transit-x=value or --transit-x value)");
      apply(o, rest, argv[++i]);
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return o;
}

bool started_by_mpi_launcher() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                               "MPI_LOCALNRANKS", "HYDRA_CONTROL_FD"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

}  // namespace transit
