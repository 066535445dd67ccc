#pragma once
// Private to src/exchange: the methods behind exchange_engine and the record batches that crystal
// router and grid forward (layouts: include/transit/detail/exchange/engine.hpp).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/exchange/engine.hpp"

namespace transit::detail {

/// One run as a method sees it.
struct exchange_run {
  const outgoing_plan& out;
  std::vector<incoming_record>& in;  // append in any order; the engine sorts by source
  std::uint64_t volume;              // bytes this PE sends to other PEs in this run
};

class exchange_method_impl {
 public:
  virtual ~exchange_method_impl() = default;
  /// Collective. Moves the run's records; returns the largest `volume` of any PE in this run
  /// (equal on every PE).
  virtual std::uint64_t run(exchange_run& r) = 0;
  /// True when the method's messages travel on the transport. A blocking MPI collective must then
  /// wait until every PE has finished such a run: a PE blocked inside MPI cannot release the
  /// messages its transport still holds back for a peer (flow control), and the peer would wait.
  virtual bool uses_transport() const noexcept = 0;
};

/// With `fixed_pattern`, direct runs its consensus in the first run only (later runs wait for the
/// first run's number of messages).
std::unique_ptr<exchange_method_impl> make_direct(exchange_port& port, bool fixed_pattern);
std::unique_ptr<exchange_method_impl> make_crystal_router(exchange_port& port);
std::unique_ptr<exchange_method_impl> make_grid_method(exchange_port& port, const virtual_grid& grid);
/// The mpi backend only (the engine checks); defined in mpi_collectives.cpp.
/// With `fixed_pattern` (exchange_options::fixed_pattern, which the engine checks on every run),
/// mpi_alltoallv and mpi_neighbor exchange counts in their first run only (mpi_neighbor also skips
/// its allreduce then).
std::unique_ptr<exchange_method_impl> make_mpi_alltoallv(exchange_port& port, bool fixed_pattern);
std::unique_ptr<exchange_method_impl> make_mpi_neighbor(exchange_port& port, bool fixed_pattern);

/// A record on its way: this PE's own (its parcels, in the plan) or one that arrived in a message.
struct held_record {
  int dest = -1;
  int source = -1;
  std::uint64_t bytes = 0;
  const std::byte* data = nullptr;       // arrived: contiguous bytes in a held message
  const outgoing_record* own = nullptr;  // this PE's: spans in the plan
};

constexpr std::uint64_t padded(std::uint64_t bytes) noexcept { return (bytes + 7) & ~std::uint64_t{7}; }
constexpr std::uint64_t record_wire_bytes(std::uint64_t bytes) noexcept {
  return sizeof(exchange_record_header) + padded(bytes);
}

/// Records bound for one peer in one stage or phase.
struct record_batch {
  std::vector<held_record> records;
  std::uint64_t body_bytes = 0;
  void add(const held_record& r) {
    records.push_back(r);
    body_bytes += record_wire_bytes(r.bytes);
  }
};

/// Sends `batch` to `dest` as one message (an empty batch too) and clears it: one copy of each
/// record. Counts the bytes of records from other PEs as forwarded.
void send_batch(exchange_port& port, const outgoing_plan& plan, int dest, exchange_message_kind kind,
                std::uint16_t step, std::uint64_t volume, record_batch& batch);

/// Waits for `expected` messages of (kind, step) and calls each(held_record, sender PE) for each of their
/// records, which stay valid until the run ends. Returns the largest volume they carry.
template <class Each>
std::uint64_t receive_records(exchange_port& port, exchange_message_kind kind, std::uint16_t step, int expected,
                              const char* what, Each&& each);

/// Calls each(held_record, sender PE) for every record of a stage or phase message; returns its header.
/// The records point into `m`, which the caller must hold until the run ends. Reports a message
/// whose records do not fill it exactly, or name a PE outside the job, through port.corrupt().
template <class Each>
exchange_wire_header read_records(const exchange_port& port, const message& m, Each&& each) {
  exchange_wire_header h;
  std::memcpy(&h, m.data.payload(), sizeof h);  // exchange_port::receive checked the size
  const std::byte* at = m.data.payload() + sizeof h;
  const std::byte* const end = m.data.payload() + m.data.size();
  const char* const what =
      h.kind == static_cast<std::uint16_t>(exchange_message_kind::stage) ? "stage message" : "phase message";
  const auto bad = [&](std::uint64_t i, std::string_view problem) {
    port.corrupt(m.source, what, concat("record ", i, " of ", h.records, ": ", problem));
  };
  for (std::uint64_t i = 0; i < h.records; ++i) {
    exchange_record_header r;
    if (end - at < static_cast<std::ptrdiff_t>(sizeof r)) bad(i, "its header is cut off");
    std::memcpy(&r, at, sizeof r);
    at += sizeof r;
    if (r.bytes > static_cast<std::uint64_t>(end - at) || padded(r.bytes) > static_cast<std::uint64_t>(end - at))
      bad(i, concat(r.bytes, " bytes, but ", end - at, " bytes are left"));
    if (r.dest < 0 || r.dest >= port.size()) bad(i, concat("destination PE ", r.dest, " outside the job's ", port.size()));
    if (r.source < 0 || r.source >= port.size() || r.source == r.dest)
      bad(i, concat("source PE ", r.source, " outside the job's ", port.size(), " or its destination"));
    each(held_record{r.dest, r.source, r.bytes, at, nullptr}, m.source);
    at += padded(r.bytes);
  }
  if (at != end) port.corrupt(m.source, what, concat(end - at, " bytes after its ", h.records, " records"));
  return h;
}

/// What a waiting step of a method reports when nothing arrived. Exchange waits are short and on
/// every PE's critical path, and wait_until's back-off naps (the first costs a timer slack of about
/// 50 us). So a method polls and yields the core instead (as MPI's blocking calls do with
/// mpi_yield_when_idle) for the first `yield_budget` of a wait. After that the back-off takes
/// over, and it never naps while this PE has sends in flight (core/backoff.hpp: a message above
/// MPI's eager limit moves only while its sender calls MPI).
class short_wait {
 public:
  // A simulated PE neither naps with timer slack nor shares its core, and its idle waits block in
  // the transport (transport::wait_for_activity): 200 us of yields would be 1000 simulated polls.
  static constexpr std::chrono::microseconds yield_budget{simulated_build ? 0 : 200};
  step_result idle() {
    if (steady_clock::now() - start_ < yield_budget) {
      detail::yield();
      return step_result::progressed;
    }
    return step_result::idle;
  }

 private:
  steady_clock::time_point start_ = steady_clock::now();
};

/// Waits until this PE's sends have completed, receiving meanwhile. A run ends there, as a blocking
/// MPI collective does: otherwise a PE that returns to computing would hold up a peer still
/// receiving its last message (see short_wait).
void finish_sends(exchange_port& port);

template <class Each>
std::uint64_t receive_records(exchange_port& port, exchange_message_kind kind, std::uint16_t step, int expected,
                              const char* what, Each&& each) {
  std::uint64_t largest = 0;
  int received = 0;
  short_wait wait;
  const auto arrive = [&](message& m, const exchange_wire_header&) {
    largest = std::max(largest, read_records(port, m, each).volume);
    port.hold(std::move(m.data));
    ++received;
  };
  context_access::wait_until(
      port.ctx(),
      [&] {
        if (received == expected) return step_result::done;
        port.receive();
        const std::size_t taken = port.take(kind, step, arrive);
        if (received == expected) return step_result::done;
        return taken > 0 ? step_result::progressed : wait.idle();
      },
      what);
  return largest;
}

}  // namespace transit::detail
