#pragma once
// The bodies of sparse_exchange<T>'s members, included at the end of exchange/sparse_exchange.hpp:
// the typed half of a run (group the parcels by destination into records, copy the received
// records into parcels); the untyped half, the methods, is detail::exchange_engine in src/exchange/.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

#include "transit/detail/core/error.hpp"
#include "transit/exchange/sparse_exchange.hpp"

namespace transit {

template <class T>
std::vector<parcel<T>> sparse_exchange<T>::run(std::vector<parcel<T>> outgoing) {
  const int rank = engine_.rank();
  check_peers(outgoing);
  // Group by destination, keeping the given order within one: one record per destination.
  // (order_ and plan_ keep their capacity from run to run.)
  order_.resize(outgoing.size());
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](std::size_t a, std::size_t b) { return outgoing[a].peer < outgoing[b].peer; });
  detail::outgoing_plan& plan = plan_;
  plan.records.clear();
  plan.spans.clear();
  std::vector<T> to_self;
  for (const std::size_t i : order_) {
    auto& p = outgoing[i];
    if (p.items.empty()) continue;
    if (p.peer == rank) {
      if (to_self.empty()) {
        to_self = std::move(p.items);
      } else {
        to_self.insert(to_self.end(), p.items.begin(), p.items.end());
      }
      continue;
    }
    const std::uint64_t bytes = static_cast<std::uint64_t>(p.items.size()) * sizeof(T);
    if (plan.records.empty() || plan.records.back().dest != p.peer)
      plan.records.push_back(detail::outgoing_record{p.peer, 0, plan.spans.size(), 0});
    auto& record = plan.records.back();
    record.bytes += bytes;
    ++record.span_count;
    plan.spans.push_back(detail::byte_span{reinterpret_cast<const std::byte*>(p.items.data()), bytes});
  }

  engine_.run(plan, incoming_);

  std::vector<parcel<T>> result;
  result.reserve(incoming_.size() + (to_self.empty() ? 0 : 1));
  bool self_placed = to_self.empty();
  std::uint64_t delivered = static_cast<std::uint64_t>(to_self.size()) * sizeof(T);
  for (const auto& r : incoming_) {
    if (!self_placed && r.source > rank) {
      result.push_back(parcel<T>{rank, std::move(to_self)});
      self_placed = true;
    }
    TRANSIT_ASSERT(r.bytes % sizeof(T) == 0, "a record's length is not a whole number of items");
    parcel<T> p{r.source, std::vector<T>(static_cast<std::size_t>(r.bytes / sizeof(T)))};
    std::memcpy(static_cast<void*>(p.items.data()), r.data, static_cast<std::size_t>(r.bytes));
    delivered += r.bytes;
    result.push_back(std::move(p));
  }
  if (!self_placed) result.push_back(parcel<T>{rank, std::move(to_self)});
  incoming_.clear();
  engine_.release();
  engine_.count_delivered(delivered);
  return result;
}

template <class T>
void sparse_exchange<T>::check_peers(const std::vector<parcel<T>>& outgoing) const {
  const int size = engine_.size();
  for (const auto& p : outgoing) {
    if (p.peer < 0 || p.peer >= size)
      throw std::out_of_range(detail::concat("sparse_exchange::run: parcel peer ", p.peer, " is outside [0, ",
                                             size, "): expected a PE of this job"));
  }
}

}  // namespace transit
