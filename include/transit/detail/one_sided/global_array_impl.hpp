#pragma once
// The bodies of global_array<T>'s members, included at the end of one_sided/global_array.hpp
// (YGM's .ipp, bale's _impl.h): the public header declares and documents them. Each typed call
// splits its region at the owners' boundaries and hands untyped operations to the one-sided
// engine (detail/one_sided/engine.hpp); multi-region transfers go to detail/one_sided/transfers.hpp.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "transit/detail/core/error.hpp"
#include "transit/one_sided/global_array.hpp"

namespace transit {

template <class T>
global_array<T>::global_array(context& ctx, std::size_t size, one_sided_options options)
    : global_array(ctx, size, array_layout::block, options) {}

template <class T>
global_array<T>::global_array(context& ctx, std::size_t size, array_layout layout, one_sided_options options)
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

template <class T>
int global_array<T>::owner(std::size_t index) const {
  check_index(index, "owner");
  return static_cast<int>(owner_of(index));
}

template <class T>
std::span<T> global_array<T>::local() noexcept {
  const auto bytes = engine_->local_block();
  return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
}

template <class T>
std::size_t global_array<T>::local_offset(std::size_t index) const {
  check_index(index, "local_offset");
  return layout_.offset_of(index, owner_of(index));
}

template <class T>
void global_array<T>::put(std::size_t index, std::span<const T> values) {
  detail::completion done;
  put_pieces(index, values, &done, nullptr);
  engine_->wait(done, "global_array::put");
}

template <class T>
void global_array<T>::get(std::size_t index, std::span<T> out) {
  detail::completion done;
  get_pieces(index, out, &done, nullptr);
  engine_->wait(done, "global_array::get");
}

template <class T>
request global_array<T>::put_nb(std::size_t index, std::span<const T> values) {
  auto state = std::make_shared<detail::completion>();
  put_pieces(index, values, state.get(), state);
  return request(engine_.get(), std::move(state));
}

template <class T>
request global_array<T>::get_nb(std::size_t index, std::span<T> out) {
  auto state = std::make_shared<detail::completion>();
  get_pieces(index, out, state.get(), state);
  return request(engine_.get(), std::move(state));
}

template <class T>
void global_array<T>::accumulate(std::size_t index, std::span<const T> values, reduce_op op)
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

template <class T>
T global_array<T>::fetch_add(std::size_t index, T delta)
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
{
  T old{};
  detail::completion done;
  fetch_add_piece(index, delta, &old, &done, nullptr);
  engine_->wait(done, "global_array::fetch_add");
  return old;
}

template <class T>
request global_array<T>::fetch_add_nb(std::size_t index, T delta, T* old_value)
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
{
  auto state = std::make_shared<detail::completion>();
  fetch_add_piece(index, delta, old_value, state.get(), state);
  return request(engine_.get(), std::move(state));
}

template <class T>
T global_array<T>::compare_exchange(std::size_t index, T expected, T desired)
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
{
  check_index(index, "compare_exchange");
  const T pair[2] = {expected, desired};
  T old{};
  detail::completion done;
  engine_->issue(swap_operation(index, pair, &old), &done, nullptr);
  engine_->wait(done, "global_array::compare_exchange");
  return old;
}

template <class T>
request global_array<T>::compare_exchange_nb(std::size_t index, T expected, T desired, T* old_value)
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
{
  check_index(index, "compare_exchange_nb");
  if (old_value == nullptr)
    throw std::invalid_argument("global_array::compare_exchange_nb: old_value is null: expected where the old value goes");
  const T pair[2] = {expected, desired};
  detail::operation op = swap_operation(index, pair, old_value);
  if (engine_->apply_at_once(op)) return request{};  // in the node's memory: done, nothing to keep
  auto operands = std::make_shared<swap_operands>();  // one allocation: the pair is inline
  operands->one[0] = expected;
  operands->one[1] = desired;
  op.in = reinterpret_cast<const std::byte*>(operands->one);
  std::shared_ptr<detail::completion> state(operands, &operands->done);
  engine_->issue(op, state.get(), state);
  return request(engine_.get(), std::move(state));
}

template <class T>
void global_array<T>::put(std::span<const std::uint64_t> indices, std::span<const T> values) {
  check_batch(indices, values.size(), "put", "values");
  issue_flowing(indices, detail::op_code::put, reduce_op::sum, values.data(), "global_array::put");
}

template <class T>
void global_array<T>::accumulate(std::span<const std::uint64_t> indices, std::span<const T> values, reduce_op op)
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
{
  check_batch(indices, values.size(), "accumulate", "values");
  issue_flowing(indices, detail::op_code::accumulate, op, values.data(), "global_array::accumulate");
}

template <class T>
request global_array<T>::put_nb(std::span<const std::uint64_t> indices, std::span<const T> values) {
  check_batch(indices, values.size(), "put_nb", "values");
  return issue_batch(indices, detail::op_code::put, reduce_op::sum, [&](std::size_t k) {
    return std::pair{reinterpret_cast<const std::byte*>(values.data() + k), static_cast<std::byte*>(nullptr)};
  });
}

template <class T>
request global_array<T>::get_nb(std::span<const std::uint64_t> indices, std::span<T> out) {
  check_batch(indices, out.size(), "get_nb", "output elements");
  return issue_batch(indices, detail::op_code::get, reduce_op::sum, [&](std::size_t k) {
    return std::pair{static_cast<const std::byte*>(nullptr), reinterpret_cast<std::byte*>(out.data() + k)};
  });
}

template <class T>
request global_array<T>::accumulate_nb(std::span<const std::uint64_t> indices, std::span<const T> values, reduce_op op)
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
{
  check_batch(indices, values.size(), "accumulate_nb", "values");
  return issue_batch(indices, detail::op_code::accumulate, op, [&](std::size_t k) {
    return std::pair{reinterpret_cast<const std::byte*>(values.data() + k), static_cast<std::byte*>(nullptr)};
  });
}

template <class T>
request global_array<T>::fetch_add_nb(std::span<const std::uint64_t> indices, std::span<const T> deltas, std::span<T> old_values)
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
{
  check_batch(indices, deltas.size(), "fetch_add_nb", "deltas");
  check_batch(indices, old_values.size(), "fetch_add_nb", "old values");
  return issue_batch(indices, detail::op_code::fetch_add, reduce_op::sum, [&](std::size_t k) {
    return std::pair{reinterpret_cast<const std::byte*>(deltas.data() + k),
                     reinterpret_cast<std::byte*>(old_values.data() + k)};
  });
}

template <class T>
request global_array<T>::compare_exchange_nb(std::span<const std::uint64_t> indices, std::span<const T> expected,
                                             std::span<const T> desired, std::span<T> old_values)
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
{
  // Every span's size first, then the indices once.
  const std::pair<std::size_t, const char*> spans[] = {
      {expected.size(), "expected values"}, {desired.size(), "desired values"}, {old_values.size(), "old values"}};
  for (const auto& [elements, name] : spans) {
    if (elements != indices.size()) check_batch(indices, elements, "compare_exchange_nb", name);
  }
  check_batch(indices, expected.size(), "compare_exchange_nb", "expected values");
  // The engine reads an operation's operands when it sends it, which a full buffer may put off
  // past this call: they live with the request's completion (an aliasing pointer to it).
  auto operands = std::make_shared<swap_operands>();
  operands->pairs.resize(2 * indices.size());
  for (std::size_t k = 0; k < indices.size(); ++k) {
    operands->pairs[2 * k] = expected[k];
    operands->pairs[2 * k + 1] = desired[k];
  }
  const T* pairs = operands->pairs.data();
  std::shared_ptr<detail::completion> state(operands, &operands->done);
  return issue_batch(
      indices, detail::op_code::compare_exchange, reduce_op::sum,
      [&](std::size_t k) {
        return std::pair{reinterpret_cast<const std::byte*>(pairs + 2 * k),
                         reinterpret_cast<std::byte*>(old_values.data() + k)};
      },
      std::move(state));
}

template <class T>
void global_array<T>::put_regions(std::span<const region> targets, std::span<const T> values,
                                  transfer_protocol protocol) {
  detail::transfer_regions(*engine_, layout_, selector_, detail::transfer_direction::put, targets,
                           const_cast<std::byte*>(reinterpret_cast<const std::byte*>(values.data())), values.size(),
                           sizeof(T), protocol);
}

template <class T>
void global_array<T>::get_regions(std::span<const region> sources, std::span<T> out,
                                  transfer_protocol protocol) {
  detail::transfer_regions(*engine_, layout_, selector_, detail::transfer_direction::get, sources,
                           reinterpret_cast<std::byte*>(out.data()), out.size(), sizeof(T), protocol);
}

template <class T>
void global_array<T>::put_strided(std::size_t index, std::size_t count, std::size_t stride, std::size_t blocks,
                                  std::span<const T> values, transfer_protocol protocol) {
  const auto regions = detail::strided_regions(index, count, stride, blocks, values.size(), size_);
  put_regions(regions, values, protocol);
}

template <class T>
transfer_protocol global_array<T>::chosen_protocol(std::size_t region_bytes, std::size_t regions, int target) const {
  return selector_.choose(region_bytes, regions, target);
}

template <class T>
void global_array<T>::check_index(std::size_t index, const char* what) const {
  if (index >= size_)
    throw std::out_of_range(detail::concat("global_array::", what, ": index ", index, " is outside [0, ", size_,
                                           "): expected an element of the array"));
}

template <class T>
void global_array<T>::check_region(std::size_t index, std::size_t count, const char* what) const {
  if (index > size_ || count > size_ - index)
    throw std::out_of_range(detail::concat("global_array::", what, ": region [", index, ", ", index, " + ", count,
                                           ") runs past the end of the array (size ", size_, ")"));
}

template <class T>
void global_array<T>::check_batch(std::span<const std::uint64_t> indices, std::size_t elements, const char* what,
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

template <class T>
template <class Data>
request global_array<T>::issue_batch(std::span<const std::uint64_t> indices, detail::op_code code, reduce_op op, Data&& data,
                                     std::shared_ptr<detail::completion> state) {
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const auto index = static_cast<std::size_t>(indices[k]);
    const std::size_t owner = owner_of(index);
    const auto [in, out] = data(k);
    engine_->issue(detail::operation{code, op, static_cast<int>(owner), layout_.offset_of(index, owner), 1, in, out},
                   state.get(), state);
  }
  return request(engine_.get(), std::move(state));
}

template <class T>
void global_array<T>::issue_flowing(std::span<const std::uint64_t> indices, detail::op_code code, reduce_op op, const T* values,
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

template <class T>
template <class F>
void global_array<T>::for_each_piece(std::size_t index, std::size_t count, F&& f) const {
  std::size_t done = 0;
  while (done < count) {
    const std::size_t at = index + done;
    const std::size_t owner = owner_of(at);
    const std::size_t n = layout_.run_from(at, owner, count - done);
    f(static_cast<int>(owner), layout_.offset_of(at, owner), n, done);
    done += n;
  }
}

template <class T>
void global_array<T>::put_pieces(std::size_t index, std::span<const T> values, detail::completion* done,
                                 const std::shared_ptr<detail::completion>& keep) {
  check_region(index, values.size(), "put");
  for_each_piece(index, values.size(), [&](int owner, std::size_t offset, std::size_t count, std::size_t first) {
    detail::operation op{detail::op_code::put, reduce_op::sum, owner, offset, count,
                         reinterpret_cast<const std::byte*>(values.data() + first), nullptr};
    engine_->issue(op, done, keep);
  });
}

template <class T>
void global_array<T>::get_pieces(std::size_t index, std::span<T> out, detail::completion* done,
                                 const std::shared_ptr<detail::completion>& keep) {
  check_region(index, out.size(), "get");
  for_each_piece(index, out.size(), [&](int owner, std::size_t offset, std::size_t count, std::size_t first) {
    detail::operation op{detail::op_code::get, reduce_op::sum, owner, offset, count, nullptr,
                         reinterpret_cast<std::byte*>(out.data() + first)};
    engine_->issue(op, done, keep);
  });
}

template <class T>
detail::operation global_array<T>::swap_operation(std::size_t index, const T* pair, T* old) const {
  const std::size_t owner = owner_of(index);
  return detail::operation{detail::op_code::compare_exchange, reduce_op::sum, static_cast<int>(owner),
                           layout_.offset_of(index, owner), 1, reinterpret_cast<const std::byte*>(pair),
                           reinterpret_cast<std::byte*>(old)};
}

template <class T>
void global_array<T>::fetch_add_piece(std::size_t index, const T& delta, T* old, detail::completion* done,
                                      const std::shared_ptr<detail::completion>& keep) {
  check_index(index, "fetch_add");
  const std::size_t owner = owner_of(index);
  detail::operation op{detail::op_code::fetch_add, reduce_op::sum, static_cast<int>(owner),
                       layout_.offset_of(index, owner), 1, reinterpret_cast<const std::byte*>(&delta),
                       reinterpret_cast<std::byte*>(old)};
  engine_->issue(op, done, keep);
}

}  // namespace transit
