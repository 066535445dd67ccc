#pragma once
// One policy for bytes from the wire: a receiver checks a message's size, kinds and indices before
// it reads them, and reports a message that fails a check through corrupt_message(), so that every
// report reads alike and ends the job the same way:
//   "<receiver>: corrupt <message> from PE <source>: <what was wrong>"
// On a PE's own thread the wire_error unwinds to transit::run, which prints it as
// "transit: PE <r>: ..." and ends the job with status 1 (no read out of bounds, no abort without a
// message). A thread that is not a PE's (a one-sided helper, the communication thread) catches it
// and ends the job with its text (transport::end_job).
#include <stdexcept>
#include <string>
#include <string_view>

namespace transit::detail {

/// A received message that failed its receiver's checks.
class wire_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws wire_error: "<receiver>: corrupt <message> from PE <source>: <problem>". `receiver` names
/// the endpoint ("streamer<int64>", "exchange", "one-sided hub of node 3"), `message` what arrived
/// ("message on channel 4", "request record"), `source` the PE it came from.
[[noreturn]] void corrupt_message(std::string_view receiver, std::string_view message, int source,
                                  std::string_view problem);

}  // namespace transit::detail
