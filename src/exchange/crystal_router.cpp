// The crystal router (Fox et al.; gslib's crystal.c is the reference for P that is not a power of
// two). Stage rule and message layout: include/transit/detail/exchange/engine.hpp.
//
// Invariant: at the start of a stage over the range [bl, bl+n) every record this PE holds is bound
// for a PE in that range. Each stage halves the range and sends every record bound for the other
// half across, so after ceil(log2 P) stages n == 1 and all that is left has arrived. A PE waits in
// a stage only for messages that the other PEs send before waiting in that stage themselves, and
// sends never block: no cycle of waits.
#include <algorithm>

#include "methods.hpp"

namespace transit::detail {

namespace {

class crystal_router_method final : public exchange_method_impl {
 public:
  explicit crystal_router_method(exchange_port& port) : port_(port) {}
  bool uses_transport() const noexcept override { return true; }

  std::uint64_t run(exchange_run& r) override {
    const int id = port_.rank();
    held_.clear();
    for (const auto& record : r.out.records) held_.push_back(held_record{record.dest, id, record.bytes, nullptr, &record});
    std::uint64_t largest = r.volume;
    int bl = 0;
    int n = port_.size();
    for (std::uint16_t stage = 0; n > 1; ++stage) {
      const int nl = (n + 1) / 2;  // the lower half is the larger one, as in gslib
      const int bh = bl + nl;
      const bool lower = id < bh;
      const int half_begin = lower ? bl : bh;
      const int half_end = lower ? bh : bl + n;
      int target = bl + (n - 1 - (id - bl));  // mirror partner in the other half
      int expected = 1;
      if (target == id) {  // odd n: the middle PE sends to the first of the upper half
        target = bh;
        expected = 0;
      }
      if (n % 2 == 1 && id == bh) expected = 2;  // from its mirror and from the middle PE

      kept_.clear();
      for (const held_record& h : held_) {
        if ((h.dest >= bh) == lower) {
          batch_.add(h);
        } else {
          kept_.push_back(h);
        }
      }
      held_.swap(kept_);
      send_batch(port_, r.out, target, exchange_message_kind::stage, stage, largest, batch_);

      const std::uint64_t seen = receive_records(
          port_, exchange_message_kind::stage, stage, expected, "sparse_exchange crystal_router (stage message)",
          [&](const held_record& record, int from) {
            // After this stage every record held here is bound for this PE's half (the invariant).
            if (record.dest < half_begin || record.dest >= half_end)
              port_.corrupt(from, "stage message",
                            concat("a record for PE ", record.dest, " in stage ", stage, ", outside the receiver's half ",
                                   half_begin, "..", half_end - 1));
            if (record.dest == id) {
              r.in.push_back(incoming_record{record.source, record.data, record.bytes});
            } else {
              held_.push_back(record);
            }
          });
      largest = std::max(largest, seen);
      if (lower) {
        n = nl;
      } else {
        n -= nl;
        bl = bh;
      }
    }
    TRANSIT_ASSERT(held_.empty(), "crystal router ended with records still on their way");
    finish_sends(port_);
    return largest;
  }

 private:
  exchange_port& port_;
  std::vector<held_record> held_;
  std::vector<held_record> kept_;
  record_batch batch_;
};

}  // namespace

std::unique_ptr<exchange_method_impl> make_crystal_router(exchange_port& port) {
  return std::make_unique<crystal_router_method>(port);
}

}  // namespace transit::detail
