#pragma once
// global_array<T>: a distributed array (block or cyclic layout) with one-sided put, get,
// accumulate, fetch_add and compare_exchange (HiCOO in transit; docs/one_sided.md).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "transit/detail/core/error.hpp"
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
  global_array(context& ctx, std::size_t size, one_sided_options options = {})
      : global_array(ctx, size, array_layout::block, options) {}
  /// Collective, as above, with the layout of the elements; every PE passes the same one.
  global_array(context& ctx, std::size_t size, array_layout layout, one_sided_options options = {})
      : size_(size),
        layout_(size, static_cast<std::size_t>(ctx.size()), layout == array_layout::cyclic),
        rank_(static_cast<std::size_t>(ctx.rank())),
        begin_(layout_.index_of(rank_, 0)),
        selector_(ctx) {
    detail::engine_config config;
    config.options = options;
    config.local_elements = layout_.elements_on(static_cast<std::size_t>(ctx.rank()));
    config.element_size = sizeof(T);
    config.initialize = [](std::byte* block, std::size_t elements) {
      std::uninitialized_value_construct_n(reinterpret_cast<T*>(block), elements);
    };
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) config.ops = detail::element_ops_for<T>();
    engine_ = detail::make_one_sided_engine(ctx, config);
  }
  /// Collective (teardown serves the other PEs until every one has finished).
  ~global_array() = default;
  global_array(const global_array&) = delete;
  global_array& operator=(const global_array&) = delete;

  /// Local. Number of elements.
  std::size_t size() const noexcept { return size_; }
  /// Local. The PE holding element `index`; std::out_of_range outside [0, size()).
  int owner(std::size_t index) const {
    check_index(index, "owner");
    return static_cast<int>(owner_of(index));
  }
  /// Local. The layout chosen at construction.
  array_layout layout() const noexcept { return layout_.cyclic ? array_layout::cyclic : array_layout::block; }
  /// Local. This PE's elements (block: a block; cyclic: elements rank, rank + P, ...). Other
  /// PEs' operations change them at any time: the node's PEs apply theirs, and serve other nodes'
  /// requests, through the node's shared memory (where a node cannot share memory, polling mode
  /// changes them only inside this PE's transit calls). Read them after sync() or under a mutex.
  std::span<T> local() noexcept {
    const auto bytes = engine_->local_block();
    return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  /// Local. Global index of local()[0].
  std::size_t local_begin() const noexcept { return begin_; }
  /// Local. Global index of local()[k] (block: local_begin() + k; cyclic: k * P + rank).
  std::size_t global_index(std::size_t k) const noexcept { return layout_.index_of(rank_, k); }
  /// Local. The position of element `index` in its owner's local(); std::out_of_range outside
  /// [0, size()).
  std::size_t local_offset(std::size_t index) const {
    check_index(index, "local_offset");
    return layout_.offset_of(index, owner_of(index));
  }

  /// Local. Writes values to [index, index + values.size()); returns when `values` may be reused.
  /// Complete at the target after fence(). std::out_of_range for a region past the end.
  void put(std::size_t index, std::span<const T> values) {
    detail::completion done;
    put_pieces(index, values, &done, nullptr);
    engine_->wait(done, "global_array::put");
  }
  /// Local, blocking: reads [index, index + out.size()) into out.
  void get(std::size_t index, std::span<T> out) {
    detail::completion done;
    get_pieces(index, out, &done, nullptr);
    engine_->wait(done, "global_array::get");
  }
  /// Local. As put, but returns at once; `values` must outlive the request, which completes when
  /// they may be reused.
  request put_nb(std::size_t index, std::span<const T> values) {
    auto state = std::make_shared<detail::completion>();
    put_pieces(index, values, state.get(), state);
    return request(engine_.get(), std::move(state));
  }
  /// Local. As get, but returns at once; `out` must outlive the request.
  request get_nb(std::size_t index, std::span<T> out) {
    auto state = std::make_shared<detail::completion>();
    get_pieces(index, out, state.get(), state);
    return request(engine_.get(), std::move(state));
  }
  /// Local. element = element op value, atomically per element; returns when `values` may be
  /// reused (complete at the target after fence()).
  void accumulate(std::size_t index, std::span<const T> values, reduce_op op)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  {
    check_region(index, values.size(), "accumulate");
    detail::completion done;
    for_each_piece(index, values.size(), [&](int owner, std::size_t offset, std::size_t count, std::size_t first) {
      detail::operation op_piece{detail::op_code::accumulate, op, owner, offset, count,
                                 reinterpret_cast<const std::byte*>(values.data() + first), nullptr};
      engine_->issue(op_piece, &done, nullptr);
    });
    engine_->wait(done, "global_array::accumulate");
  }
  /// Local, blocking: adds delta to the element atomically and returns the value before.
  T fetch_add(std::size_t index, T delta)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  {
    T old{};
    detail::completion done;
    fetch_add_piece(index, delta, &old, &done, nullptr);
    engine_->wait(done, "global_array::fetch_add");
    return old;
  }
  /// Local. As fetch_add, but returns at once; *old_value is written when the request completes.
  request fetch_add_nb(std::size_t index, T delta, T* old_value)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  {
    auto state = std::make_shared<detail::completion>();
    fetch_add_piece(index, delta, old_value, state.get(), state);
    return request(engine_.get(), std::move(state));
  }
  /// Local, blocking: replaces the element by `desired` if it equals `expected` (same bytes),
  /// atomically; returns the value it had.
  T compare_exchange(std::size_t index, T expected, T desired)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  {
    check_index(index, "compare_exchange");
    T pair[2] = {expected, desired};
    T old{};
    detail::completion done;
    const std::size_t owner = owner_of(index);
    detail::operation op{detail::op_code::compare_exchange, reduce_op::sum, static_cast<int>(owner),
                         layout_.offset_of(index, owner), 1, reinterpret_cast<const std::byte*>(pair),
                         reinterpret_cast<std::byte*>(&old)};
    engine_->issue(op, &done, nullptr);
    engine_->wait(done, "global_array::compare_exchange");
    return old;
  }

  // ---- batches of single elements (scattered indices) ----

  /// Local: element indices[k] = values[k] for every k; returns when `values` may be reused
  /// (complete at the targets after fence()). Each element waits only when its request buffer is
  /// out of room, serving meanwhile, as put does; no wait and no allocation per element
  /// otherwise. Errors as the batched put_nb (nothing issued).
  void put(std::span<const std::uint64_t> indices, std::span<const T> values) {
    check_batch(indices, values.size(), "put", "values");
    issue_flowing(indices, detail::op_code::put, reduce_op::sum, values.data(), "global_array::put");
  }
  /// Local: element indices[k] = element op values[k], atomically per element, for every k (bale's
  /// atomic adds of a whole batch); returns when `values` may be reused (complete at the targets
  /// after fence()), waiting only for buffer room as the batched put. Errors as the batched put_nb.
  void accumulate(std::span<const std::uint64_t> indices, std::span<const T> values, reduce_op op)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  {
    check_batch(indices, values.size(), "accumulate", "values");
    issue_flowing(indices, detail::op_code::accumulate, op, values.data(), "global_array::accumulate");
  }

  /// Local, non-blocking: element indices[k] = values[k] for every k, issued together (their
  /// requests aggregate per owner); the request completes when `values` may be reused, and they
  /// must outlive it. Complete at the targets after fence(). Checks first, issuing nothing on an
  /// error: std::out_of_range naming the first index outside [0, size()), std::invalid_argument
  /// when the spans' sizes differ.
  request put_nb(std::span<const std::uint64_t> indices, std::span<const T> values) {
    check_batch(indices, values.size(), "put_nb", "values");
    return issue_batch(indices, detail::op_code::put, reduce_op::sum, [&](std::size_t k) {
      return std::pair{reinterpret_cast<const std::byte*>(values.data() + k), static_cast<std::byte*>(nullptr)};
    });
  }
  /// Local, non-blocking: out[k] = element indices[k]; `out` must outlive the request. Errors as
  /// the batched put_nb.
  request get_nb(std::span<const std::uint64_t> indices, std::span<T> out) {
    check_batch(indices, out.size(), "get_nb", "output elements");
    return issue_batch(indices, detail::op_code::get, reduce_op::sum, [&](std::size_t k) {
      return std::pair{static_cast<const std::byte*>(nullptr), reinterpret_cast<std::byte*>(out.data() + k)};
    });
  }
  /// Local, non-blocking: element indices[k] = element op values[k], atomically per element, for
  /// every k (bale's atomic adds of a whole batch: no round trip, one wait). The request completes
  /// when `values` may be reused, and they must outlive it; complete at the targets after
  /// fence(). Errors as the batched put_nb.
  request accumulate_nb(std::span<const std::uint64_t> indices, std::span<const T> values, reduce_op op)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  {
    check_batch(indices, values.size(), "accumulate_nb", "values");
    return issue_batch(indices, detail::op_code::accumulate, op, [&](std::size_t k) {
      return std::pair{reinterpret_cast<const std::byte*>(values.data() + k), static_cast<std::byte*>(nullptr)};
    });
  }
  /// Local, non-blocking: old_values[k] = element indices[k], which gains deltas[k] atomically;
  /// both spans must outlive the request. Errors as the batched put_nb (deltas and old_values
  /// both of indices' size).
  request fetch_add_nb(std::span<const std::uint64_t> indices, std::span<const T> deltas, std::span<T> old_values)
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  {
    check_batch(indices, deltas.size(), "fetch_add_nb", "deltas");
    check_batch(indices, old_values.size(), "fetch_add_nb", "old values");
    return issue_batch(indices, detail::op_code::fetch_add, reduce_op::sum, [&](std::size_t k) {
      return std::pair{reinterpret_cast<const std::byte*>(deltas.data() + k),
                       reinterpret_cast<std::byte*>(old_values.data() + k)};
    });
  }

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
                   transfer_protocol protocol = transfer_protocol::automatic) {
    detail::transfer_regions(*engine_, layout_, selector_, detail::transfer_direction::put, targets,
                             const_cast<std::byte*>(reinterpret_cast<const std::byte*>(values.data())), values.size(),
                             sizeof(T), protocol);
  }
  /// Local, blocking: reads `sources` into out, their elements concatenated in order. Errors as
  /// put_regions.
  void get_regions(std::span<const region> sources, std::span<T> out,
                   transfer_protocol protocol = transfer_protocol::automatic) {
    detail::transfer_regions(*engine_, layout_, selector_, detail::transfer_direction::get, sources,
                             reinterpret_cast<std::byte*>(out.data()), out.size(), sizeof(T), protocol);
  }
  /// Local. put_regions of `blocks` regions of `count` elements at index, index + stride, ...
  /// (stride in elements, at least count). std::invalid_argument for stride < count or
  /// values.size() != count * blocks; std::out_of_range for a block past the end.
  void put_strided(std::size_t index, std::size_t count, std::size_t stride, std::size_t blocks,
                   std::span<const T> values, transfer_protocol protocol = transfer_protocol::automatic) {
    const auto regions = detail::strided_regions(index, count, stride, blocks, values.size(), size_);
    put_regions(regions, values, protocol);
  }
  /// Local. The protocol `automatic` takes for `regions` regions of `region_bytes` each to PE
  /// `target`: forced by TRANSIT_PROTOCOL, a fresh random draw under TRANSIT_PROTOCOL=random,
  /// else the profile's fastest. std::out_of_range for a target outside [0, PEs).
  transfer_protocol chosen_protocol(std::size_t region_bytes, std::size_t regions, int target) const {
    return selector_.choose(region_bytes, regions, target);
  }
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
  void check_index(std::size_t index, const char* what) const {
    if (index >= size_)
      throw std::out_of_range(detail::concat("global_array::", what, ": index ", index, " is outside [0, ", size_,
                                             "): expected an element of the array"));
  }
  void check_region(std::size_t index, std::size_t count, const char* what) const {
    if (index > size_ || count > size_ - index)
      throw std::out_of_range(detail::concat("global_array::", what, ": region [", index, ", ", index, " + ", count,
                                             ") runs past the end of the array (size ", size_, ")"));
  }
  void check_batch(std::span<const std::uint64_t> indices, std::size_t elements, const char* what,
                   const char* name) const {
    if (elements != indices.size())
      throw std::invalid_argument(detail::concat("global_array::", what, ": got ", elements, " ", name, " for ",
                                                 indices.size(), " indices: expected one per index"));
    for (std::size_t k = 0; k < indices.size(); ++k) {
      if (indices[k] >= size_)
        throw std::out_of_range(detail::concat("global_array::", what, ": indices[", k, "] = ", indices[k],
                                               " is outside [0, ", size_,
                                               "): expected an element of the array; nothing was issued"));
    }
  }
  /// One request for a checked batch: element k's operation reads and writes at data(k).
  template <class Data>
  request issue_batch(std::span<const std::uint64_t> indices, detail::op_code code, reduce_op op, Data&& data) {
    auto state = std::make_shared<detail::completion>();
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const auto index = static_cast<std::size_t>(indices[k]);
      const std::size_t owner = owner_of(index);
      const auto [in, out] = data(k);
      engine_->issue(detail::operation{code, op, static_cast<int>(owner), layout_.offset_of(index, owner), 1, in, out},
                     state.get(), state);
    }
    return request(engine_.get(), std::move(state));
  }
  /// Issues put or accumulate of values[k] to each indices[k], checked, in order; an element that
  /// finds no buffer room is waited for before the next (the flow control of the single-element
  /// calls, without their wait per element), so the backlog stays at one element.
  void issue_flowing(std::span<const std::uint64_t> indices, detail::op_code code, reduce_op op, const T* values,
                     const char* what) {
    detail::completion done;
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const auto index = static_cast<std::size_t>(indices[k]);
      const std::size_t owner = owner_of(index);
      engine_->issue(detail::operation{code, op, static_cast<int>(owner), layout_.offset_of(index, owner), 1,
                                       reinterpret_cast<const std::byte*>(values + k), nullptr},
                     &done, nullptr);
      if (done.pending != 0) [[unlikely]]
        engine_->wait(done, what);
    }
  }
  /// Calls f(owner, offset in owner's block, count, position in the caller's span) per owner.
  template <class F>
  void for_each_piece(std::size_t index, std::size_t count, F&& f) const {
    std::size_t done = 0;
    while (done < count) {
      const std::size_t at = index + done;
      const std::size_t owner = owner_of(at);
      const std::size_t n = layout_.run_from(at, owner, count - done);
      f(static_cast<int>(owner), layout_.offset_of(at, owner), n, done);
      done += n;
    }
  }
  void put_pieces(std::size_t index, std::span<const T> values, detail::completion* done,
                  const std::shared_ptr<detail::completion>& keep) {
    check_region(index, values.size(), "put");
    for_each_piece(index, values.size(), [&](int owner, std::size_t offset, std::size_t count, std::size_t first) {
      detail::operation op{detail::op_code::put, reduce_op::sum, owner, offset, count,
                           reinterpret_cast<const std::byte*>(values.data() + first), nullptr};
      engine_->issue(op, done, keep);
    });
  }
  void get_pieces(std::size_t index, std::span<T> out, detail::completion* done,
                  const std::shared_ptr<detail::completion>& keep) {
    check_region(index, out.size(), "get");
    for_each_piece(index, out.size(), [&](int owner, std::size_t offset, std::size_t count, std::size_t first) {
      detail::operation op{detail::op_code::get, reduce_op::sum, owner, offset, count, nullptr,
                           reinterpret_cast<std::byte*>(out.data() + first)};
      engine_->issue(op, done, keep);
    });
  }
  void fetch_add_piece(std::size_t index, const T& delta, T* old, detail::completion* done,
                       const std::shared_ptr<detail::completion>& keep) {
    check_index(index, "fetch_add");
    const std::size_t owner = owner_of(index);
    detail::operation op{detail::op_code::fetch_add, reduce_op::sum, static_cast<int>(owner),
                         layout_.offset_of(index, owner), 1, reinterpret_cast<const std::byte*>(&delta),
                         reinterpret_cast<std::byte*>(old)};
    engine_->issue(op, done, keep);
  }

  std::size_t size_;
  detail::element_layout layout_;
  std::size_t rank_;
  std::size_t begin_;
  detail::protocol_selector selector_;
  std::unique_ptr<detail::one_sided_engine> engine_;
};

}  // namespace transit
