// Record batches of the forwarding methods (crystal router, grid): one copy per hop. Waiting for
// this PE's sends at the end of a run.
#include "methods.hpp"

namespace transit::detail {

void send_batch(exchange_port& port, const outgoing_plan& plan, int dest, exchange_message_kind kind,
                std::uint16_t step, std::uint64_t volume, record_batch& batch) {
  message_buffer m = port.make_message(kind, step, batch.body_bytes);
  exchange_wire_header h;
  std::memcpy(&h, m.payload(), sizeof h);
  h.records = batch.records.size();
  h.volume = volume;
  std::memcpy(m.payload(), &h, sizeof h);
  std::byte* at = m.payload() + sizeof h;
  for (const held_record& r : batch.records) {
    const exchange_record_header rh{r.dest, r.source, r.bytes};
    std::memcpy(at, &rh, sizeof rh);
    at += sizeof rh;
    if (r.own != nullptr) {
      plan.copy(*r.own, 0, r.bytes, at);
    } else {
      std::memcpy(at, r.data, static_cast<std::size_t>(r.bytes));
      port.stats().bytes_forwarded += record_wire_bytes(r.bytes);
    }
    std::memset(at + r.bytes, 0, static_cast<std::size_t>(padded(r.bytes) - r.bytes));
    at += padded(r.bytes);
  }
  TRANSIT_ASSERT(at == m.payload() + m.size(), "record batch size mismatch");
  batch.records.clear();
  batch.body_bytes = 0;
  port.send(dest, std::move(m));
}

void finish_sends(exchange_port& port) {
  transport& net = context_access::net(port.ctx());
  short_wait wait;
  context_access::wait_until(
      port.ctx(),
      [&] {
        port.receive();  // completes sends; what arrives is the next run's, parked
        return net.pending_sends() == 0 ? step_result::done : wait.idle();
      },
      "sparse_exchange (this PE's last messages)");
}

}  // namespace transit::detail
