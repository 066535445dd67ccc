#pragma once
// global_array<T>: a distributed array (block or cyclic layout) with one-sided put, get,
// accumulate, fetch_add and compare_exchange (HiCOO in transit; docs/one_sided.md). This header
// declares and documents; the bodies are in detail/one_sided/global_array_impl.hpp.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "transit/detail/one_sided/block_layout.hpp"
#include "transit/detail/one_sided/engine.hpp"
#include "transit/detail/one_sided/transfers.hpp"
#include "transit/one_sided/options.hpp"
#include "transit/one_sided/regions.hpp"
#include "transit/one_sided/request.hpp"
#include "transit/runtime/context.hpp"

namespace transit {

/// Elements [0, size()) spread over the PEs in contiguous blocks (the first size() % P PEs hold
/// one more), or round robin under array_layout::cyclic (element i on PE i mod P at offset i / P
/// of its local(): bale's SHARED arrays). A PE applies operations on its own node's elements
/// itself, through the node's shared memory, in both progress modes; the others are requests,
/// forwarded and aggregated over the node topology of the options and served on the target's node
/// by the PE they reach there (polling) or its helper thread. Every
/// operation takes global indices under either layout; a region of a cyclic array travels as one
/// piece per element (its neighbours live on other PEs), which the aggregation carries together.
///
/// Consistency: operations from one PE to one element are applied in the order issued; accumulate,
/// fetch_add and compare_exchange are atomic per element; everything a PE issued is complete at
/// its target after its fence(), everywhere after sync(). Concurrent put or get against other
/// operations on the same element from other PEs is not ordered (as in MPI).
template <class T>
class global_array {
  static_assert(std::is_trivially_copyable_v<T>,
                "transit::global_array requires a trivially copyable element type: elements travel as bytes");

 public:
  using value_type = T;  ///< the element type

  /// Collective: every PE constructs its global arrays in the same order with equal size and
  /// options. Elements are value-initialised. Throws std::invalid_argument for bad options (see
  /// one_sided_options), hypercube on a node count that is not a power of two, mpi_rma on the
  /// local backend, helper_thread on mpi when MPI was not initialised with MPI_THREAD_MULTIPLE.
  global_array(context& ctx, std::size_t size, one_sided_options options = {});
  /// Collective, as above, with the layout of the elements; every PE passes the same one.
  global_array(context& ctx, std::size_t size, array_layout layout, one_sided_options options = {});
  /// Collective (teardown serves the other PEs until every one has finished).
  ~global_array() = default;
  global_array(const global_array&) = delete;
  global_array& operator=(const global_array&) = delete;

  /// Local. Number of elements.
  std::size_t size() const noexcept { return size_; }
  /// Local. The PE holding element `index`; std::out_of_range outside [0, size()).
  int owner(std::size_t index) const;
  /// Local. The layout chosen at construction.
  array_layout layout() const noexcept { return layout_.cyclic ? array_layout::cyclic : array_layout::block; }
  /// Local. This PE's elements (block: a block; cyclic: elements rank, rank + P, ...). Other
  /// PEs' operations change them at any time: the node's PEs apply theirs, and serve other nodes'
  /// requests, through the node's shared memory (where a node cannot share memory, polling mode
  /// changes them only inside this PE's transit calls). Read them after sync() or under a mutex.
  std::span<T> local() noexcept;
  /// Local. Global index of local()[0].
  std::size_t local_begin() const noexcept { return begin_; }
  /// Local. Global index of local()[k] (block: local_begin() + k; cyclic: k * P + rank).
  std::size_t global_index(std::size_t k) const noexcept { return layout_.index_of(rank_, k); }
  /// Local. The position of element `index` in its owner's local(); std::out_of_range outside
  /// [0, size()).
  std::size_t local_offset(std::size_t index) const;

  /// Local. Writes values to [index, index + values.size()); returns when `values` may be reused.
  /// Complete at the target after fence(). std::out_of_range for a region past the end.
  void put(std::size_t index, std::span<const T> values);
  /// Local, blocking: reads [index, index + out.size()) into out.
  void get(std::size_t index, std::span<T> out);
  /// Local. As put, but returns at once; `values` must outlive the request, which completes when
  /// they may be reused.
  request put_nb(std::size_t index, std::span<const T> values);
  /// Local. As get, but returns at once; `out` must outlive the request.
  request get_nb(std::size_t index, std::span<T> out);
  /// Local. element = element op value, atomically per element; returns when `values` may be
  /// reused (complete at the target after fence()).
  void accumulate(std::size_t index, std::span<const T> values, reduce_op op)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  /// Local, blocking: adds delta to the element atomically and returns the value before.
  T fetch_add(std::size_t index, T delta)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  /// Local. As fetch_add, but returns at once; *old_value is written when the request completes.
  request fetch_add_nb(std::size_t index, T delta, T* old_value)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  /// Local, blocking: replaces the element by `desired` if it equals `expected` (same bytes),
  /// atomically; returns the value it had.
  T compare_exchange(std::size_t index, T expected, T desired)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  /// Local. As compare_exchange, but returns at once; *old_value is written when the request
  /// completes (the swap happened if and only if it equals `expected`, byte for byte). An element
  /// on this PE's node may be done before the call returns: test() is then true at once.
  /// std::out_of_range for an index outside [0, size()).
  request compare_exchange_nb(std::size_t index, T expected, T desired, T* old_value)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);

  // ---- batches of single elements (scattered indices) ----

  /// Local: element indices[k] = values[k] for every k; returns when `values` may be reused
  /// (complete at the targets after fence()). Each element waits only when its request buffer is
  /// out of room, serving meanwhile, as put does; no wait and no allocation per element
  /// otherwise. Errors as the batched put_nb (nothing issued).
  void put(std::span<const std::uint64_t> indices, std::span<const T> values);
  /// Local: element indices[k] = element op values[k], atomically per element, for every k (bale's
  /// atomic adds of a whole batch); returns when `values` may be reused (complete at the targets
  /// after fence()), waiting only for buffer room as the batched put. Errors as the batched put_nb.
  void accumulate(std::span<const std::uint64_t> indices, std::span<const T> values, reduce_op op)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);

  /// Local, non-blocking: element indices[k] = values[k] for every k, issued together (their
  /// requests aggregate per owner); the request completes when `values` may be reused, and they
  /// must outlive it. Complete at the targets after fence(). Checks first, issuing nothing on an
  /// error: std::out_of_range naming the first index outside [0, size()), std::invalid_argument
  /// when the spans' sizes differ.
  request put_nb(std::span<const std::uint64_t> indices, std::span<const T> values);
  /// Local, non-blocking: out[k] = element indices[k]; `out` must outlive the request. Errors as
  /// the batched put_nb.
  request get_nb(std::span<const std::uint64_t> indices, std::span<T> out);
  /// Local, non-blocking: element indices[k] = element op values[k], atomically per element, for
  /// every k (bale's atomic adds of a whole batch: no round trip, one wait). The request completes
  /// when `values` may be reused, and they must outlive it; complete at the targets after
  /// fence(). Errors as the batched put_nb.
  request accumulate_nb(std::span<const std::uint64_t> indices, std::span<const T> values, reduce_op op)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  /// Local, non-blocking: old_values[k] = element indices[k], which gains deltas[k] atomically;
  /// both spans must outlive the request. Errors as the batched put_nb (deltas and old_values
  /// both of indices' size).
  request fetch_add_nb(std::span<const std::uint64_t> indices, std::span<const T> deltas, std::span<T> old_values)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  /// Local, non-blocking: for every k, element indices[k] becomes desired[k] if it equals
  /// expected[k] (same bytes), atomically, and old_values[k] gets the value it had; the requests
  /// aggregate per owner, one wait for them all instead of a round trip each. `expected` and
  /// `desired` are copied; old_values must outlive the request. Operations on one element apply
  /// in the order of k. Errors as the batched put_nb (all three spans of indices' size).
  request compare_exchange_nb(std::span<const std::uint64_t> indices, std::span<const T> expected,
                              std::span<const T> desired, std::span<T> old_values)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);

  /// Local: returns when every operation this PE issued on this array is complete at its target.
  void fence() { engine_->fence(); }
  /// Collective: fence() on every PE, then a barrier; afterwards every PE sees every update.
  void sync() { engine_->sync(); }
  /// Local: this PE's counters.
  one_sided_stats stats() const { return engine_->stats(); }

  // ---- multi-region transfers (one_sided/regions.hpp; `automatic` from protocols/, docs/protocols.md) ----

  /// Local. Writes values, the regions' elements concatenated in order, to `targets`; returns
  /// when `values` may be reused, complete at the targets after fence() (blocking: already on
  /// return). Regions may overlap; overlapping elements end with the value of the later region.
  /// std::out_of_range for a region past the end, std::invalid_argument when values.size() is
  /// not the sum of the counts. `automatic` chooses per target (chosen_protocol).
  void put_regions(std::span<const region> targets, std::span<const T> values,
                   transfer_protocol protocol = transfer_protocol::automatic);
  /// Local, blocking: reads `sources` into out, their elements concatenated in order. Errors as
  /// put_regions.
  void get_regions(std::span<const region> sources, std::span<T> out,
                   transfer_protocol protocol = transfer_protocol::automatic);
  /// Local. put_regions of `blocks` regions of `count` elements at index, index + stride, ...
  /// (stride in elements, at least count). std::invalid_argument for stride < count or
  /// values.size() != count * blocks; std::out_of_range for a block past the end.
  void put_strided(std::size_t index, std::size_t count, std::size_t stride, std::size_t blocks,
                   std::span<const T> values, transfer_protocol protocol = transfer_protocol::automatic);
  /// Local. The protocol `automatic` takes for `regions` regions of `region_bytes` each to PE
  /// `target`: forced by TRANSIT_PROTOCOL, a fresh random draw under TRANSIT_PROTOCOL=random,
  /// else the profile's fastest. std::out_of_range for a target outside [0, PEs).
  transfer_protocol chosen_protocol(std::size_t region_bytes, std::size_t regions, int target) const;
  /// Local, never throws: the largest region (bytes) `packed` gathers into packed messages, a
  /// quarter of the largest packed request (at least four regions per message). Polling mode:
  /// a packed request may carry 16 request buffers, so with the default 16 KiB buffer_bytes this
  /// is 64 KiB; helper mode keeps a packed request to one buffer (a quarter of 16 KiB less the
  /// request header, by default); mpi_rma: 256 MiB (its packed request is one MPI call per
  /// region anyway). Larger
  /// regions go as `pipelined` does, so for regions all above this size the two protocols are
  /// one transfer (docs/protocols.md).
  std::size_t packed_region_limit() const noexcept { return detail::packed_piece_limit(*engine_); }

 private:
  std::size_t owner_of(std::size_t index) const noexcept { return layout_.owner_of(index); }
  void check_index(std::size_t index, const char* what) const;
  void check_region(std::size_t index, std::size_t count, const char* what) const;
  void check_batch(std::span<const std::uint64_t> indices, std::size_t elements, const char* what,
                   const char* name) const;
  /// One request for a checked batch: element k's operation reads and writes at data(k).
  /// `state` completes with the request (by default a fresh one; compare_exchange_nb's also holds
  /// the operands the engine may read after the call returns).
  template <class Data>
  request issue_batch(std::span<const std::uint64_t> indices, detail::op_code code, reduce_op op, Data&& data,
                      std::shared_ptr<detail::completion> state = std::make_shared<detail::completion>());
  /// The compare_exchange of checked element `index`: operands (expected, desired) at `pair`, the
  /// old value to `old`.
  detail::operation swap_operation(std::size_t index, const T* pair, T* old) const;
  /// compare_exchange_nb's operands, (expected, desired) per element, kept with its completion:
  /// `one` for a single element, `pairs` for a batch.
  struct swap_operands {
    detail::completion done;
    T one[2]{};
    std::vector<T> pairs;
  };
  /// Issues put or accumulate of values[k] to each indices[k], checked, in order; an element that
  /// finds no buffer room is waited for before the next (the flow control of the single-element
  /// calls, without their wait per element), so the backlog stays at one element.
  void issue_flowing(std::span<const std::uint64_t> indices, detail::op_code code, reduce_op op, const T* values,
                     const char* what);
  /// Calls f(owner, offset in owner's block, count, position in the caller's span) per owner.
  template <class F>
  void for_each_piece(std::size_t index, std::size_t count, F&& f) const;
  void put_pieces(std::size_t index, std::span<const T> values, detail::completion* done,
                  const std::shared_ptr<detail::completion>& keep);
  void get_pieces(std::size_t index, std::span<T> out, detail::completion* done,
                  const std::shared_ptr<detail::completion>& keep);
  void fetch_add_piece(std::size_t index, const T& delta, T* old, detail::completion* done,
                       const std::shared_ptr<detail::completion>& keep);

  std::size_t size_;
  detail::element_layout layout_;
  std::size_t rank_;
  std::size_t begin_;
  detail::protocol_selector selector_;
  std::unique_ptr<detail::one_sided_engine> engine_;
};


}  // namespace transit

// The members' bodies.
#include "transit/detail/one_sided/global_array_impl.hpp"
