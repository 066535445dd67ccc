#pragma once
// handler_slot::call, included at the end of active/active_messages.hpp: it reads a record and
// calls the handler with active_messages complete.
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "transit/active/active_messages.hpp"

namespace transit::detail {

template <class H, class... K>
void handler_slot<H, K...>::call(active_messages& am, const std::byte* record, std::size_t bytes) {
  // A record of scalars only has a size known here: checked once, then read without checks.
  // Strings and arrays have their lengths checked, and so has everything after them.
  constexpr bool only_scalars = (is_scalar_kind<K> && ...);
  constexpr std::size_t head_bytes = sizeof(std::uint32_t) + (std::is_pointer_v<H> ? sizeof(std::uint64_t) : 0);
  constexpr std::size_t checked_bytes = only_scalars ? (head_bytes + ... + sizeof(K)) : head_bytes;
  if (bytes < checked_bytes) [[unlikely]]
    record_reader::truncated(bytes, 0, checked_bytes);
  record_reader in(record, bytes, sizeof(std::uint32_t));  // past the handler id
  H handler{};
  if constexpr (std::is_pointer_v<H>)
    handler = reinterpret_cast<H>(am.code_address_of(in.scalar<std::uint64_t, false>()));
  // Braced initialisation reads the arguments in order.
  std::tuple<arg_holder<K, !only_scalars>...> held{arg_holder<K, !only_scalars>(in)...};
  std::apply([&](auto&... a) { handler(am, a.view()...); }, held);
}

template <class H, class... K>
inline void handler_slot<H, K...>::set_call_index(active_messages& am, std::uint32_t i) {
  am.call_index_ = i;
}

}  // namespace transit::detail
