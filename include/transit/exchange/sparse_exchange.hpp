#pragma once
// sparse_exchange<T>: a personalised all-to-all where each PE sends to few peers and does not know
// who sends to it (halo exchanges of spectral- and finite-element codes). docs/exchange.md. This header declares
// and documents; the bodies are in detail/exchange/sparse_exchange_impl.hpp.
#include <cstddef>
#include <type_traits>
#include <vector>

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
  std::vector<parcel<T>> run(std::vector<parcel<T>> outgoing);

  /// Local. The method the last run used (what automatic chose, while timing: the candidate
  /// tried); before the first run, the method asked for. Equal on every PE.
  exchange_method method() const { return engine_.method(); }
  /// Local: this PE's counters, and the candidates' times of automatic's last choice.
  exchange_stats stats() const { return engine_.stats(); }

 private:
  /// Throws std::out_of_range naming the first parcel whose peer is not a PE of the job.
  void check_peers(const std::vector<parcel<T>>& outgoing) const;

  detail::exchange_engine engine_;
  std::vector<std::size_t> order_;
  detail::outgoing_plan plan_;
  std::vector<detail::incoming_record> incoming_;
};

}  // namespace transit

// The members' bodies.
#include "transit/detail/exchange/sparse_exchange_impl.hpp"
