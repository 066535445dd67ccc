#pragma once
// Private to the library: the transports of this process's PEs, as a backend's launch opens them
// (transport/launch.hpp) for the runtime's launch (src/runtime/launch.cpp), which makes a context
// over each and runs the PE threads. The runtime asks this interface what to do, never a backend.
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "transit/detail/transport/transport.hpp"

namespace transit::detail {

class process_transports {
 public:
  virtual ~process_transports() = default;
  /// The transport of this process's PE `local_pe` (from 0), made and used on that PE's thread.
  virtual std::unique_ptr<transport> make(int local_pe) = 0;
  /// Whether the thread that made this drives the transports (run_driver(): a communication
  /// thread) while every PE runs on a thread of its own; if not, that thread waits for the PE
  /// threads, or runs a lone PE itself.
  virtual bool has_driver() const noexcept { return false; }
  /// The driver's loop (only when has_driver()): returns once every PE's transport is gone.
  virtual void run_driver() {}
  /// A PE of this process failed with `what`. The backend ends the job its way: it records the
  /// failure (the first is the job's; later ones are its consequences) and flags the job aborted,
  /// so that the other PEs unwind at their next wait, and returns (threads of one process: the
  /// runtime reports the first failure); or it reports the failure ("transit: PE <r>: <what>") and
  /// ends the whole job, never returning (MPI ranks).
  virtual void end_job(int local_pe, std::string what) = 0;
  /// Whether end_job flagged the job aborted.
  virtual bool aborted() const noexcept { return false; }
  /// The first failure end_job recorded, if any: (local PE, what).
  virtual std::optional<std::pair<int, std::string>> first_failure() const { return std::nullopt; }
  /// After every PE's transport is gone (and run_driver returned): the teardown.
  virtual void close() {}
};

}  // namespace transit::detail
