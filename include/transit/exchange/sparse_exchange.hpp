#pragma once
// sparse_exchange<T>: a personalised all-to-all where each PE sends to few peers and does not know
// who sends to it (halo exchanges of spectral- and finite-element codes). docs/exchange.md.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "transit/detail/core/error.hpp"
#include "transit/detail/exchange/engine.hpp"
#include "transit/exchange/options.hpp"
#include "transit/runtime/context.hpp"

namespace transit {

/// Exchanges parcels of T among all PEs, by the method of exchange_options (automatic by default:
/// the fastest one measured on this pattern). Items are copied once into a message at their source,
/// once per intermediate PE (crystal router, grid), and once into the returned parcel; parcels to
/// this PE itself are moved, not copied.
template <class T>
class sparse_exchange {
  static_assert(std::is_trivially_copyable_v<T>,
                "transit::sparse_exchange requires a trivially copyable item type: items travel as bytes");

 public:
  using item_type = T;  ///< the type of the items of a parcel

  /// Collective: every PE constructs its exchanges in the same order with equal options.
  /// Throws std::invalid_argument for mpi_alltoallv or mpi_neighbor on the local backend, a grid
  /// for another PE count, or a TRANSIT_EXCHANGE_METHOD that names no method.
  explicit sparse_exchange(context& ctx, exchange_options options = {})
      : engine_(ctx, options, sizeof(T)) {}

  /// Collective. Sends each parcel to its `peer` (any PE, this one included). Returns one parcel per
  /// source that sent this PE items, sorted by source; a source's parcels to this PE arrive
  /// concatenated in the order given. Parcels without items are not delivered. Throws
  /// std::out_of_range, before communicating, for a peer outside [0, size()).
  std::vector<parcel<T>> run(std::vector<parcel<T>> outgoing) {
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

  /// Local. The method the last run used (what automatic chose, while timing: the candidate
  /// tried); before the first run, the method asked for. Equal on every PE.
  exchange_method method() const { return engine_.method(); }
  /// Local: this PE's counters, and the candidates' times of automatic's last choice.
  exchange_stats stats() const { return engine_.stats(); }

 private:
  void check_peers(const std::vector<parcel<T>>& outgoing) const {
    const int size = engine_.size();
    for (const auto& p : outgoing) {
      if (p.peer < 0 || p.peer >= size)
        throw std::out_of_range(detail::concat("sparse_exchange::run: parcel peer ", p.peer, " is outside [0, ",
                                               size, "): expected a PE of this job"));
    }
  }

  detail::exchange_engine engine_;
  std::vector<std::size_t> order_;
  detail::outgoing_plan plan_;
  std::vector<detail::incoming_record> incoming_;
};

}  // namespace transit
