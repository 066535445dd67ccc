#pragma once
// The bodies of active_messages' templates (and its inline members), included at the end of
// active/active_messages.hpp: the public header declares and documents, this file does the work.
// The record layout, the call classes and the chunking rules are in docs/active_messages.md.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <type_traits>
#include <utility>

#include "transit/active/active_messages.hpp"

namespace transit {

template <class Handler, class... Args>
void active_messages::async(int dest, Handler handler, Args&&... args) {
  if (check_call<Handler, Args...>()) {
    if (static_cast<unsigned>(dest) >= static_cast<unsigned>(size_)) [[unlikely]]
      throw_bad_destination(dest);
    send_call<Handler, detail::wire_kind_t<Args>...>(dest, handler, detail::to_wire(args)...);
  }
}

template <class Handler, class... Args>
void active_messages::async_broadcast(Handler handler, Args&&... args) {
  if (check_call<Handler, Args...>())
    send_call<Handler, detail::wire_kind_t<Args>...>(broadcast_dest, handler, detail::to_wire(args)...);
}

template <class Handler, class... Args>
constexpr bool active_messages::check_call() {
  static_assert(detail::is_handler_type<Handler>,
                "transit::active_messages: a handler must be a function pointer or a captureless lambda "
                "(identical on every PE); this one captures state or is not default-constructible");
  static_assert((!detail::is_invalid_kind<detail::wire_kind_t<Args>> && ...),
                "transit::active_messages: an argument must be trivially copyable (not a pointer), a string "
                "(std::string, std::string_view, a literal) or a std::vector or std::span of trivially copyable "
                "elements");
  if constexpr (detail::is_handler_type<Handler> && (!detail::is_invalid_kind<detail::wire_kind_t<Args>> && ...)) {
    static_assert(detail::callable_with<Handler, detail::wire_kind_t<Args>...>,
                  "transit::active_messages: the handler cannot be called as handler(active_messages&, args...) "
                  "with these arguments; it receives a string as std::string or std::string_view, an array as "
                  "std::vector<T> or std::span<const T>, anything else as its own type");
    return detail::callable_with<Handler, detail::wire_kind_t<Args>...>;
  } else {
    return false;
  }
}

template <class H, class... K, class... W>
void active_messages::send_call(int dest, H handler, const W&... wire) {
  using slot = detail::handler_slot<H, K...>;
  static_cast<void>(slot::registered);  // instantiates the registration (it ran before main)
  const std::uint32_t id = slot::entry.id.load(std::memory_order_relaxed);
  if (id >= detail::queued_handler_id) [[unlikely]]
    throw_unknown_handler(slot::entry);
  std::uint64_t code = 0;
  if constexpr (std::is_pointer_v<H>) code = code_reference_of(reinterpret_cast<std::uintptr_t>(handler));
  const auto write = [&](auto& out) {
    out.bytes(&id, sizeof id);
    if constexpr (std::is_pointer_v<H>) out.bytes(&code, sizeof code);
    (detail::put_arg(out, wire), ...);
  };
  if constexpr ((detail::is_scalar_kind<K> && ...)) {
    // Only scalars: the size, and the class, are known at compile time.
    constexpr std::size_t bytes = sizeof(std::uint32_t) + (std::is_pointer_v<H> ? 8 : 0) + (sizeof(K) + ... + 0);
    if constexpr (bytes <= detail::largest_call) {
      send_small<detail::call_class_of(bytes)>(dest, write);
      return;
    }
  }
  detail::size_sink size;
  write(size);
  const std::size_t bytes = size.position();
  if (bytes <= detail::largest_call) {
    with_class(detail::call_class_of(bytes), [&]<std::size_t C>() { send_small<C>(dest, write); });
  } else if (bytes >= detail::large_call_bytes && dest != broadcast_dest) {
    send_large(dest, bytes, write);
  } else {
    send_chunked(dest, write);
  }
}

template <class Write>
void active_messages::send_large(int dest, std::size_t bytes, const Write& write) {
  detail::message_buffer message = large_->allocate(bytes);
  detail::flat_sink out(message.payload() + detail::large_header_bytes, bytes);
  write(out);
  large_->send(dest, std::move(message), bytes);
}

template <std::size_t C, class Write>
void active_messages::send_small(int dest, const Write& write) {
  constexpr std::size_t bytes = detail::call_classes[C];
  const auto fill = [&](std::byte* slot) {
    detail::flat_sink out(slot, bytes);
    write(out);
    if (out.position() < bytes) std::memset(slot + out.position(), 0, bytes - out.position());
  };
  auto& s = *std::get<C>(calls_);
  if (dest == broadcast_dest) {
    detail::call_cell<bytes> cell;
    fill(cell.bytes);
    s.broadcast(cell);
  } else {
    s.insert_with(dest, fill);  // written straight into the buffer
  }
}

template <class F, std::size_t... I>
void active_messages::with_class(std::size_t c, F&& f, std::index_sequence<I...>) {
  static_cast<void>(((c == I ? (f.template operator()<I>(), true) : false) || ...));
}

template <class F>
void active_messages::with_class(std::size_t c, F&& f) {
  with_class(c, std::forward<F>(f), std::make_index_sequence<detail::num_call_classes>());
}

template <class Write>
void active_messages::send_chunked(int dest, const Write& write) {
  detail::gather_sink record;
  write(record);
  const std::uint64_t total = record.position();
  std::uint32_t sequence = next_sequence_++ & ~detail::broadcast_sequence_bit;
  if (dest == broadcast_dest) sequence |= detail::broadcast_sequence_bit;
  std::exception_ptr error;
  for (std::uint64_t offset = 0; offset < total; offset += detail::chunk_data_bytes) {
    const auto fill = [&](std::byte* slot) {
      const detail::chunk_header header{total, offset, static_cast<std::uint32_t>(rank_), sequence};
      std::memcpy(slot, &header, sizeof header);
      const std::size_t got = record.read(slot + sizeof header, detail::chunk_data_bytes);
      if (got < detail::chunk_data_bytes) std::memset(slot + sizeof header + got, 0, detail::chunk_data_bytes - got);
    };
    try {
      if (dest == broadcast_dest) {
        detail::chunk_cell cell;
        fill(reinterpret_cast<std::byte*>(&cell));
        chunks_->broadcast(cell);
      } else {
        chunks_->insert_with(dest, fill);
      }
    } catch (...) {  // the chunk itself was buffered; the rest must follow
      if (!error) {
        error = std::current_exception();
      } else {
        later_errors_.push_back(std::current_exception());  // for the next progress() or barrier()
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

inline void active_messages::dispatch(const std::byte* record, std::size_t bytes) {
  std::uint32_t id;
  std::memcpy(&id, record, sizeof id);
  if (id >= handlers_.invoke.size()) [[unlikely]]
    refresh_handlers(id);
  handlers_.invoke[id](*this, record, bytes);
}

template <std::size_t Bytes>
void active_messages::dispatch_items(const detail::call_cell<Bytes>* items, std::uint32_t& cursor, std::uint32_t n) {
  const auto* bytes = reinterpret_cast<const std::byte*>(items);
  while (cursor < n) {
    std::uint32_t id;
    std::memcpy(&id, bytes + std::size_t{cursor} * Bytes, sizeof id);
    if (id >= handlers_.run.size()) [[unlikely]] {
      try {
        refresh_handlers(id);
      } catch (...) {
        ++cursor;  // this call is dropped, reported once; the others still run
        throw;
      }
    }
    handlers_.run[id](*this, bytes, Bytes, cursor, n);
  }
}

inline std::uint64_t active_messages::code_reference_of(std::uintptr_t address) {
  return references_.get(address, detail::code_reference);
}

inline std::uintptr_t active_messages::code_address_of(std::uint64_t reference) {
  return addresses_.get(reference, detail::code_address);
}

}  // namespace transit

// The handler slots' call, which needs active_messages complete.
#include "transit/detail/active/handler_call.hpp"
