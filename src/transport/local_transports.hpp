#pragma once
// Private to the library: what the local backend offers the runtime's launch (src/runtime/launch/):
// the transports of one job whose PEs are all threads of this process, and the job's failure state
// they share. The runtime makes the contexts and runs the threads; no backend class shows here.
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "transit/detail/transport/transport.hpp"

namespace transit::detail {

class local_world;

/// The transports of a local job of `pes` PEs, on one shared world (src/transport/local/).
class local_job_transports {
 public:
  explicit local_job_transports(int pes);
  ~local_job_transports();
  local_job_transports(const local_job_transports&) = delete;
  local_job_transports& operator=(const local_job_transports&) = delete;

  /// The transport of PE `pe` (0 <= pe < pes), used by that PE's thread only.
  std::unique_ptr<transport> make(int pe);
  /// Records a PE's failure (the first is the job's: later ones are its consequences) and flags
  /// the job aborted, so that the other PEs unwind at their next wait.
  void fail(int pe, std::string what);
  bool aborted() const noexcept;
  /// The job's first failure, if any: (PE, what).
  std::optional<std::pair<int, std::string>> first_failure() const;

 private:
  std::unique_ptr<local_world> world_;
};

}  // namespace transit::detail
