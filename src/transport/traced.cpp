// The transport's hooks into the timeline trace: transport::send and poll come here only while a
// recorder is attached (--transit-trace), and tell it of each message around the backend's own
// call. The recorder (src/trace/) is a leaf below the transport: this file says what a message is
// in its terms (peer, channel, bytes, and the endpoint a channel belongs to, as the mailbox reads it).
#include <stdexcept>

#include "trace/recorder.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/transport/mailbox.hpp"
#include "transit/detail/transport/transport.hpp"

namespace transit::detail {

void transport::traced_send(int dest, std::uint32_t channel, message_buffer&& data,
                            const std::shared_ptr<send_confirmations>* confirmed) {
  const std::size_t bytes = data.size();
  const std::int64_t start = trace::recorder::now();
  if (confirmed != nullptr) {
    send_confirmed_message(dest, channel, std::move(data), *confirmed);
  } else {
    send_message(dest, channel, std::move(data));
  }
  trace_->sent(dest, channel, bytes, start, trace::recorder::now());
}

// The seam's default: a transport that cannot confirm says so (confirmable_bytes() == 0), and no
// layer above calls this then.
void transport::send_confirmed_message(int, std::uint32_t, message_buffer&&, const std::shared_ptr<send_confirmations>&) {
  throw std::logic_error(concat("transport '", backend(), "' cannot confirm a send (its confirmable_bytes() is 0)"));
}

std::size_t transport::traced_poll(std::vector<message>& sink, std::size_t max) {
  const std::size_t before = sink.size();
  const std::int64_t start = trace::recorder::now();
  const std::size_t n = poll_messages(sink, max);
  if (n == 0) return 0;  // an empty poll is idle time, which the wait loop records
  const std::int64_t end = trace::recorder::now();
  for (std::size_t i = 0; i < n; ++i) {
    const message& m = sink[before + i];
    trace_->received(m.source, m.channel, mailbox::endpoint_of(m.channel), m.data.payload(), m.data.size(), start,
                     end, i, n);
  }
  return n;
}

}  // namespace transit::detail
