// direct: one message per destination, and nonblocking consensus so that no PE needs to know who
// sends to it (protocol: include/transit/detail/exchange/engine.hpp). With a fixed pattern
// (exchange_options::fixed_pattern, checked by the engine on every run) the first run's consensus
// tells each PE how many messages it receives, and later runs only wait for those: no
// acknowledgements, no allreduce.
#include <algorithm>

#include "methods.hpp"

namespace transit::detail {

namespace {

class direct_method final : public exchange_method_impl {
 public:
  direct_method(exchange_port& port, bool fixed_pattern) : port_(port), fixed_pattern_(fixed_pattern) {
    if (fixed_pattern_) port_.allow_runs_ahead();
  }
  bool uses_transport() const noexcept override { return true; }

  std::uint64_t run(exchange_run& r) override {
    // A run that ends in consensus sends what the transport can confirm as confirmed messages
    // (MPI_Issend, NBX proper): their receivers send no acknowledgement.
    std::size_t acknowledged = 0;
    for (const auto& record : r.out.records) {
      const bool confirmed = !known_ && port_.confirmable(record.dest, sizeof(exchange_wire_header) + record.bytes);
      message_buffer m =
          port_.make_message(confirmed ? exchange_message_kind::confirmed : exchange_message_kind::data, 0, record.bytes);
      r.out.copy(record, 0, record.bytes, m.payload() + sizeof(exchange_wire_header));
      if (confirmed) {
        port_.send_confirmed(record.dest, std::move(m));
      } else {
        port_.send(record.dest, std::move(m));
        ++acknowledged;
      }
    }
    if (known_) return receive_known(r);
    const std::size_t in_before = r.in.size();
    const std::uint64_t largest = run_consensus(r, acknowledged);
    if (fixed_pattern_) {
      known_ = true;
      sources_ = r.in.size() - in_before;
      largest_volume_ = largest;
    }
    return largest;
  }

 private:
  /// A fixed pattern after its first run: waits for the messages of the sources it had then.
  std::uint64_t receive_known(exchange_run& r) {
    std::size_t received = 0;
    short_wait wait;
    context_access::wait_until(
        port_.ctx(),
        [&] {
          const bool progressed = port_.receive();
          const std::size_t taken = port_.take(exchange_message_kind::data, 0, [&](message& m, const exchange_wire_header&) {
            // Untrusted: a run of a fixed pattern brings exactly its first run's number of messages.
            if (received == sources_)
              port_.corrupt(m.source, "direct message", concat("one more than the ", sources_, " messages of a fixed pattern's run"));
            ++received;
            keep_record(r, m);
          });
          port_.take(exchange_message_kind::confirmed, 0, [&](message& m, const exchange_wire_header&) {
            port_.corrupt(m.source, "direct message", "a confirmed one in a fixed pattern's later run, which sends plain ones");
          });
          if (received == sources_) return step_result::done;
          return progressed || taken > 0 ? step_result::progressed : wait.idle();
        },
        "sparse_exchange direct (a fixed pattern's messages)");
    finish_sends(port_);
    return largest_volume_;
  }

  /// A data message's record joins the run's incoming list; its buffer is held until release().
  void keep_record(exchange_run& r, message& m) {
    const std::byte* body = m.data.payload() + sizeof(exchange_wire_header);
    r.in.push_back(incoming_record{m.source, body, m.data.size() - sizeof(exchange_wire_header)});
    port_.hold(std::move(m.data));
  }

  /// Receives and acknowledges records until every PE's records are acknowledged or confirmed
  /// (the allreduce that ends the consensus also finds the run's largest volume).
  std::uint64_t run_consensus(exchange_run& r, std::size_t expected_acks) {
    std::size_t acks = 0;
    bool joined = false;
    std::uint64_t largest = r.volume;  // the allreduce that ends the consensus also finds the volume
    collective_group& group = port_.group();
    short_wait wait;
    context_access::wait_until(
        port_.ctx(),
        [&] {
          bool progressed = port_.receive();
          // Every record is acknowledged, also after this PE joined: a peer's consensus waits on it.
          std::size_t taken = port_.take(exchange_message_kind::data, 0, [&](message& m, const exchange_wire_header&) {
            keep_record(r, m);
            port_.send(m.source, port_.make_message(exchange_message_kind::ack, 0, 0));
          });
          taken += take_confirmed(r);
          const std::size_t acked = port_.take(exchange_message_kind::ack, 0, [&](message& m, const exchange_wire_header&) {
            context_access::net(port_.ctx()).recycle(std::move(m.data));
          });
          acks += acked;
          taken += acked;
          progressed = progressed || taken > 0;
          if (!joined && acks == expected_acks && port_.unconfirmed() == 0) {
            group.start_allreduce(&largest, 1, scalar_type::u64, reduce_op::max);
            joined = true;
            progressed = true;
          }
          if (joined && group.test()) return step_result::done;
          return progressed ? step_result::progressed : wait.idle();
        },
        "sparse_exchange direct (acknowledgements and consensus)");
    // A confirmed record has left the network here, but a receive posted ahead (a simulated rank)
    // may not have been polled before the allreduce ended.
    if (port_.confirms_before_hand_over()) {
      while (port_.receive()) take_confirmed(r);
    }
    finish_sends(port_);  // the records are acknowledged; this completes their requests and the acks
    return largest;
  }

  std::size_t take_confirmed(exchange_run& r) {
    return port_.take(exchange_message_kind::confirmed, 0, [&](message& m, const exchange_wire_header&) { keep_record(r, m); });
  }

  exchange_port& port_;
  const bool fixed_pattern_;
  bool known_ = false;                // fixed pattern, after the first run: sources_ and largest_volume_ hold
  std::size_t sources_ = 0;           // PEs that send this one a message in every run
  std::uint64_t largest_volume_ = 0;  // of any PE, in every run
};

}  // namespace

std::unique_ptr<exchange_method_impl> make_direct(exchange_port& port, bool fixed_pattern) {
  return std::make_unique<direct_method>(port, fixed_pattern);
}

}  // namespace transit::detail
