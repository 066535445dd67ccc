#pragma once
// bale's exstack loop on sparse_exchange, for any application: rounds in which each PE pushes
// items until some destination's buffer of buf_cnt items is full (that item waits for the next
// round, as exstack_push refuses it), exchanges, and pulls, until every PE has pushed all.
#include <cstdint>
#include <utility>
#include <vector>

#include "transit/transit.hpp"

namespace transit::apps {

/// Collective: sends items 0 .. count-1 of this PE, item i as `item(i)` to PE `dest(i)`, in bale's
/// exstack rounds of at most buf_cnt items per destination, through `exchange`; calls
/// `deliver(const T&)` for each item that arrives here. Returns the number of rounds. `dest`,
/// `item` and `deliver` are inlined (no std::function per item). buf_cnt must be at least 1.
template <class T, class Dest, class Item, class Deliver>
std::int64_t exchange_in_rounds(context& ctx, sparse_exchange<T>& exchange, std::int64_t count, std::int64_t buf_cnt,
                                Dest&& dest, Item&& item, Deliver&& deliver) {
  const auto pes = static_cast<std::size_t>(ctx.size());
  const auto limit = static_cast<std::size_t>(buf_cnt);
  std::int64_t next = 0, rounds = 0;
  std::vector<parcel<T>> outgoing(pes);
  for (;;) {
    for (std::size_t pe = 0; pe < pes; ++pe) {
      outgoing[pe].peer = static_cast<int>(pe);
      outgoing[pe].items.clear();
      outgoing[pe].items.reserve(limit);
    }
    for (; next < count; ++next) {
      auto& items = outgoing[static_cast<std::size_t>(dest(next))].items;
      if (items.size() == limit) break;
      items.push_back(item(next));
    }
    ++rounds;
    const bool mine_sent = next == count;
    for (const auto& in : exchange.run(std::move(outgoing)))
      for (const T& x : in.items) deliver(x);
    outgoing.assign(pes, parcel<T>{});
    if (ctx.allreduce(mine_sent ? 0 : 1, reduce_op::sum) == 0) return rounds;  // every PE has sent all
  }
}

}  // namespace transit::apps
