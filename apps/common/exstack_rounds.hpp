#pragma once
// bale's exstack loop (push until a destination's buffer is full, exchange, pop, proceed until
// every PE is done) on transit's sparse_exchange, for kernels whose items come from nested loops.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "transit/transit.hpp"

namespace transit::apps {

/// Local: the options of the sparse_exchange under exstack_rounds: automatic. Its timing trials
/// (up to 1300 runs of the candidates, docs/exchange.md) were once most of a short kernel's rounds
/// (Bellman-Ford exchange on 2 x 20000 vertices: 0.37-0.52 s automatic, 0.14-0.30 s direct), so
/// these options named direct; the trial budget now keeps the trials within 10% of the runs' time.
inline exchange_options exstack_exchange_options() { return exchange_options{}; }

/// bale's exstack on sparse_exchange: push() buffers an item for a PE, and when that PE's buffer
/// already holds `buf_cnt` items first runs a round (exchange, `deliver` on every item received);
/// finish() runs rounds until every PE has finished. Rounds are Collective: every PE runs the
/// same number (a PE that has finished keeps taking part while others push), each an exchange and
/// an allreduce of who is still pushing. `deliver(const T&)` runs on the receiving PE, inside
/// push() or finish(); it must not push. Buffers are reused from round to round.
template <class T, class Deliver>
class exstack_rounds {
 public:
  /// Local: rounds over `exchange` (constructed collectively by the caller, reused across
  /// kernels), at most `buf_cnt` items (> 0) per destination per round.
  exstack_rounds(context& ctx, sparse_exchange<T>& exchange, std::int64_t buf_cnt, Deliver deliver)
      : ctx_(ctx), exchange_(exchange), limit_(static_cast<std::size_t>(buf_cnt)), deliver_(std::move(deliver)) {
    refill();
  }

  /// Local, or Collective when `pe`'s buffer is full (a round runs first).
  void push(const T& item, int pe) {
    std::vector<T>* items = &outgoing_[static_cast<std::size_t>(pe)].items;
    if (items->size() == limit_) {
      round(false);
      items = &outgoing_[static_cast<std::size_t>(pe)].items;
    }
    items->push_back(item);
  }

  /// Collective: this PE pushes nothing more; runs rounds until every PE has said so, every
  /// item delivered. The rounds may then start again with push().
  void finish() {
    while (round(true)) {
    }
  }

 private:
  /// One round; returns whether some PE is still pushing.
  bool round(bool done) {
    std::vector<parcel<T>> incoming = exchange_.run(std::move(outgoing_));
    for (parcel<T>& in : incoming) {
      for (const T& item : in.items) deliver_(item);
      in.items.clear();
      spare_.push_back(std::move(in.items));
    }
    refill();
    return ctx_.allreduce(done ? 0 : 1, reduce_op::sum) != 0;
  }

  /// Fresh outgoing parcels, one per PE, their buffers taken from the spare ones.
  void refill() {
    const auto pes = static_cast<std::size_t>(ctx_.size());
    outgoing_.assign(pes, parcel<T>{});
    for (std::size_t pe = 0; pe < pes; ++pe) {
      outgoing_[pe].peer = static_cast<int>(pe);
      if (!spare_.empty()) {
        outgoing_[pe].items = std::move(spare_.back());
        spare_.pop_back();
      }
    }
  }

  context& ctx_;
  sparse_exchange<T>& exchange_;
  std::size_t limit_;
  Deliver deliver_;
  std::vector<parcel<T>> outgoing_{};
  std::vector<std::vector<T>> spare_{};
};

}  // namespace transit::apps
