#include "simulated_costs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <system_error>

#include "core/simulation.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"

#include <cstdlib>
#include <unordered_map>

namespace transit::detail {

namespace {

bool given(const char* text) { return text != nullptr && *text != '\0'; }

// The whole of `text` as a finite number >= 0.
bool parse_non_negative(std::string_view text, double& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(value) && value >= 0;
}

// A cost of a second or more per item, byte or message is no machine's: most likely a unit
// mistake (nanoseconds written as seconds).
bool parse_cost(std::string_view text, double& value) { return parse_non_negative(text, value) && value < 1; }

double parse_seconds(const char* variable, const char* text) {
  double value = 0;
  if (!parse_cost(text, value)) throw_invalid(variable, text, "a number of seconds in [0, 1), such as 2.96e-07");
  return value;
}

}  // namespace

message_overhead message_overhead::parse(std::string_view variable, std::string_view text) {
  message_overhead out;
  const auto fail = [&] {
    throw_invalid(variable, text,
                  "sections BYTES:SECONDS:SECONDS_PER_BYTE joined by ';' (SimGrid's smpi/os), such as "
                  "0:3.6e-06:0;65536:5e-06:1e-10, with whole bytes and seconds in [0, 1)");
  };
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(';', at), text.size());
    const std::string_view part = text.substr(at, end - at);
    at = end + 1;
    const std::size_t first = part.find(':'), second = part.find(':', first == part.npos ? first : first + 1);
    if (first == part.npos || second == part.npos || part.find(':', second + 1) != part.npos) fail();
    section s;
    const std::string_view bytes = part.substr(0, first);
    const auto [bytes_end, ec] = std::from_chars(bytes.data(), bytes.data() + bytes.size(), s.bytes);
    if (ec != std::errc() || bytes_end != bytes.data() + bytes.size() || bytes.empty()) fail();
    if (!parse_cost(part.substr(first + 1, second - first - 1), s.seconds) ||
        !parse_cost(part.substr(second + 1), s.seconds_per_byte))
      fail();
    out.sections_.push_back(s);
  }
  std::stable_sort(out.sections_.begin(), out.sections_.end(),
                   [](const section& a, const section& b) { return a.bytes < b.bytes; });
  return out;
}

double message_overhead::seconds(std::size_t bytes) const noexcept {
  // SimGrid 3.32's rule (smpi::Host::orecv, osend, oisend): the first section's cost, replaced by
  // each following section's while the size is above that section's bytes.
  if (sections_.empty()) return 0;
  const auto cost = [bytes](const section& s) { return s.seconds + s.seconds_per_byte * static_cast<double>(bytes); };
  double current = cost(sections_.front());
  for (const section& s : sections_) {
    if (bytes <= s.bytes) return current;
    current = cost(s);
  }
  return current;
}

simulated_costs parse_simulated_costs(const std::function<const char*(std::string_view)>& variable) {
  simulated_costs costs;
  if (const char* mode = variable("TRANSIT_SIM_MODE"); given(mode)) {
    const std::string_view m(mode);
    if (m == "modelled") {
      costs.modelled = true;
    } else if (m != "measured") {
      throw_invalid("TRANSIT_SIM_MODE", m, "'modelled' or 'measured'");
    }
  }
  const auto required_seconds = [&](const char* name, double& into) {
    if (const char* text = variable(name); given(text)) {
      into = parse_seconds(name, text);
    } else if (costs.modelled) {
      throw_invalid(name, "", "a number of seconds with TRANSIT_SIM_MODE=modelled");
    }
  };
  required_seconds("TRANSIT_SIM_SECONDS_PER_ITEM", costs.seconds_per_item);
  required_seconds("TRANSIT_SIM_SECONDS_PER_BYTE", costs.seconds_per_byte);
  if (const char* text = variable("TRANSIT_SIM_SEND_OVERHEAD"); given(text))
    costs.send_overhead = message_overhead::parse("TRANSIT_SIM_SEND_OVERHEAD", text);
  if (const char* text = variable("TRANSIT_SIM_RECEIVE_OVERHEAD"); given(text))
    costs.receive_overhead = message_overhead::parse("TRANSIT_SIM_RECEIVE_OVERHEAD", text);
  if (const char* text = variable("TRANSIT_SIM_TRANSIT_OVERHEAD"); given(text))
    costs.transit_overhead = message_overhead::parse("TRANSIT_SIM_TRANSIT_OVERHEAD", text);
  if (const char* text = variable("TRANSIT_SIM_NIC_MESSAGES_PER_SECOND"); given(text)) {
    if (!parse_non_negative(text, costs.nic_messages_per_second))
      throw_invalid("TRANSIT_SIM_NIC_MESSAGES_PER_SECOND", text, "a number of messages per second >= 0 (0: no limit)");
  }
  if (const char* text = variable("TRANSIT_SIM_MPI_LIBRARY"); given(text)) {
    const std::string_view library(text);
    if (library == "mpich") {
      costs.mpi = mpi_library::mpich;
    } else if (library != "open-mpi") {
      throw_invalid("TRANSIT_SIM_MPI_LIBRARY", library, "'open-mpi' or 'mpich'");
    }
  }
  return costs;
}

namespace {

// By world rank (simulation::world_rank: the ranks of a simulation share this process's globals):
// whether the rank is inside a baseline_messages scope.
std::vector<char>& in_baseline_collective() {
  static std::vector<char> inside;
  return inside;
}

// The cost of starting a send: the sender's overhead; within a baseline_messages scope the
// receiver's too (baseline_messages); with a NIC message rate, the wait for the node's interface,
// which injects one message per 1 / rate seconds, first come first served: a message from one
// node to another waits until the interface is free, then holds it for its slot, and the sending
// rank is back when its message has left (end of the slot), or after its own overheads if that is
// longer. The interfaces' state is the simulated machine's, shared by its ranks (all in this
// process, run one at a time by SimGrid): not per-PE state.
void install_send_costs(const simulated_costs& costs) {
  const double slot = costs.nic_messages_per_second > 0 ? 1 / costs.nic_messages_per_second : 0.0;
  const message_overhead send = costs.send_overhead, receive = costs.receive_overhead;
  simulation::register_send_cost([slot, send, receive](std::size_t size, const void* source, const void* dest) {
    static std::unordered_map<const void*, double> free_at;  // by node: when its interface is next free
    double own = send.seconds(size);
    const std::size_t rank = simulation::world_rank();
    const auto& inside = in_baseline_collective();
    if (rank < inside.size() && inside[rank] != 0) own += receive.seconds(size);
    if (slot == 0 || source == dest) return own;  // no interface, or within a node
    const double now = simulation::simulated_seconds();
    double& next_free = free_at[source];
    const double start = std::max(now, next_free);
    next_free = start + slot;
    return std::max(own, next_free - now);
  });
}

simulated_costs costs_from_environment() {
  simulated_costs costs =
      parse_simulated_costs([](std::string_view name) { return std::getenv(std::string(name).c_str()); });
  if (costs.modelled || costs.nic_messages_per_second > 0) install_send_costs(costs);
  return costs;
}

}  // namespace

const simulated_costs& simulation_costs() {
  if constexpr (!simulated_build) {
    static const simulated_costs none;
    return none;
  } else {
    // Read once per rank (smpi/privatization gives each rank its own copy of this static; without
    // it, once for all): SMPI runs its ranks one at a time, never in parallel.
    static const simulated_costs costs = costs_from_environment();
    return costs;
  }
}

void charge_simulated(double seconds) {
  if constexpr (!simulated_build) return;
  // A simulated sleep, not an execution (smpi_execute_benched): a modelled rank owns its core, so
  // both pass the same simulated time, but SimGrid 3.32 files every execution in its actor's list
  // of activities and scans that list to remove it when it ends. That list also keeps every
  // communication completed by MPI_Test (3.32 never removes those), so each charge cost a scan of
  // all the rank's past messages: at 1024 ranks most of the simulator's time (docs/simulation.md).
  // A charge below 100 ns (a message's few item hops) is owed until the rank's debt reaches it:
  // SimGrid rounds a sleep below its precision (scripts/simulate sets up to 100 ns) and warns.
  constexpr double smallest_charge = 1e-7;
  static std::vector<double> owed;  // per rank: the ranks of a simulation share this process's globals
  const std::size_t rank = simulation::world_rank();
  if (owed.size() <= rank) owed.resize(rank + 1, 0.0);
  double& debt = owed[rank];
  debt += seconds;
  if (debt < smallest_charge) return;
  const double due = debt;
  debt = 0;
  simulated_sleep(due);
}

void baseline_messages::mark(bool inside) noexcept {
  if constexpr (!simulated_build) return;
  if (!simulation_costs().modelled) return;
  auto& flags = in_baseline_collective();
  const std::size_t rank = simulation::world_rank();
  if (flags.size() <= rank) flags.resize(rank + 1, 0);
  flags[rank] = inside ? 1 : 0;
}

}  // namespace transit::detail
