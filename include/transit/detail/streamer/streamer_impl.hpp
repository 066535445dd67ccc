#pragma once
// The template bodies of streamer<T> (transit/streamer/streamer.hpp, which declares and documents
// them). The per-item path (insert, the inserter) inlines into the caller: a copy, an optional
// destination store and a compare. Checks, counters and the routing loop are the streamer core's
// (detail/streamer/core.hpp), shared with every other front end.
#include <cstring>
#include <exception>
#include <utility>

#include "transit/streamer/streamer.hpp"

namespace transit {

namespace detail {

/// The run callback of a deliver callback taking `const T&`. The cursor passes each item before
/// its callback runs; it is written back only on an exception (naming the first item not yet
/// delivered) and at the end, so the loop itself stays a plain call per item.
template <class T, class Deliver>
auto item_runs(Deliver d) {
  return [d = std::move(d)](const std::byte* bytes, const std::int32_t*, int, std::uint32_t& cursor,
                            std::uint32_t n) mutable {
    const T* items = reinterpret_cast<const T*>(bytes);
    std::uint32_t i = cursor;
    try {
      while (i < n) {
        const T& item = items[i++];
        d(item);
      }
    } catch (...) {
      cursor = i;
      throw;
    }
    cursor = n;
  };
}

/// The run callback of a deliver callback taking `(const T&, int source)`; the cursor rule above.
template <class T, class Deliver>
auto item_runs_from(Deliver d) {
  return [d = std::move(d)](const std::byte* bytes, const std::int32_t* sources, int source, std::uint32_t& cursor,
                            std::uint32_t n) mutable {
    const T* items = reinterpret_cast<const T*>(bytes);
    std::uint32_t i = cursor;
    try {
      if (sources == nullptr) {  // one source for the whole run: the loop stays as plain
        while (i < n) {
          const T& item = items[i++];
          d(item, source);
        }
      } else {
        while (i < n) {
          const std::uint32_t k = i++;
          d(items[k], static_cast<int>(sources[k]));
        }
      }
    } catch (...) {
      cursor = i;
      throw;
    }
    cursor = n;
  };
}

}  // namespace detail

template <class T>
template <class Deliver>
  requires std::invocable<Deliver&, const T&>
streamer<T>::streamer(context& ctx, streamer_options options, Deliver deliver)
    : detail::streamer_core(ctx, options, sizeof(T), type_name(), false, true),
      deliver_(detail::item_runs<T>(std::move(deliver))) {}

template <class T>
template <class Deliver>
  requires(!std::invocable<Deliver&, const T&> && std::invocable<Deliver&, const T&, int>)
streamer<T>::streamer(context& ctx, streamer_options options, Deliver deliver)
    : detail::streamer_core(ctx, options, sizeof(T), type_name(), true, true),
      deliver_(detail::item_runs_from<T>(std::move(deliver))) {}

template <class T>
template <class F>
  requires std::invocable<F&, const T*, std::uint32_t&, std::uint32_t>
streamer<T>::streamer(context& ctx, streamer_options options, detail::batch_deliver<F> deliver)
    : detail::streamer_core(ctx, options, sizeof(T), type_name(), false, true),
      deliver_([f = std::move(deliver.f)](const std::byte* items, const std::int32_t*, int, std::uint32_t& cursor,
                                          std::uint32_t n) mutable {
        f(reinterpret_cast<const T*>(items), cursor, n);
      }) {}

template <class T>
template <class F>
  requires std::invocable<F&, const T*, const std::int32_t*, int, std::uint32_t&, std::uint32_t>
streamer<T>::streamer(context& ctx, streamer_options options, detail::batch_deliver<F> deliver)
    : detail::streamer_core(ctx, options, sizeof(T), type_name(), true, true),
      deliver_([f = std::move(deliver.f)](const std::byte* items, const std::int32_t* sources, int source,
                                          std::uint32_t& cursor, std::uint32_t n) mutable {
        f(reinterpret_cast<const T*>(items), sources, source, cursor, n);
      }) {}

template <class T>
inline void streamer<T>::insert(const T& item, int dest) {
  insert_with(dest, [&item](std::byte* slot) { std::memcpy(slot, &item, sizeof(T)); });
}

template <class T>
template <class Write>
  requires std::invocable<Write&, std::byte*>
inline void streamer<T>::insert_with(int dest, Write&& write) {
  if (inserts_unchecked(dest)) [[likely]] {
    if (append_unchecked<sizeof(T)>(dest, write)) [[unlikely]]
      after_send();
    return;
  }
  check_destination(dest);
  begin_insert(1, "insert");
  if (append_for<sizeof(T)>(dest, write)) [[unlikely]]
    after_send();
}

template <class T>
typename streamer<T>::inserter streamer<T>::make_inserter() {
  return inserter(*this);
}

template <class T>
void streamer<T>::broadcast(const T& item) {
  begin_insert(1, "broadcast");
  broadcast_item<sizeof(T)>(reinterpret_cast<const std::byte*>(&item));
}

template <class T>
std::string_view streamer<T>::type_name() {
  if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, int>) return "int";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else return detail::type_name<T>();
}

template <class T>
void streamer<T>::process_items(const std::byte* payload, const detail::wire_header& h, int source,
                                std::uint32_t& cursor) {
  route_message<sizeof(T)>(payload, h, source, cursor, deliver_);
}

// ---- inserter ----

template <class T>
streamer<T>::inserter::inserter(streamer& s) : s_(&s), slots_(s.links_.size()) {}

template <class T>
streamer<T>::inserter::inserter(inserter&& other) noexcept
    : s_(std::exchange(other.s_, nullptr)),
      slots_(std::move(other.slots_)),
      ready_(std::move(other.ready_)),
      inserted_(std::exchange(other.inserted_, 0)) {}

template <class T>
streamer<T>::inserter::~inserter() {
  if (s_ != nullptr) flush();
}

template <class T>
void streamer<T>::inserter::insert(const T& item, int dest) {
  s_->check_destination(dest);
  const int index = s_->link_to(dest);
  slot& b = slots_[static_cast<std::size_t>(index)];
  if (b.next == nullptr) [[unlikely]]
    open(b, index);
  std::memcpy(b.next, &item, sizeof(T));
  b.next += sizeof(T);
  if (b.next_dest != nullptr) {
    *b.next_dest++ = dest;
    if (b.next_source != nullptr) *b.next_source++ = s_->rank_;
  }
  ++inserted_;
  if (b.next == b.end) [[unlikely]]
    full(b, index);
}

template <class T>
void streamer<T>::inserter::flush() {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].next != nullptr) close(slots_[i], static_cast<int>(i));
  }
  if (ready_.empty() && inserted_ == 0) return;
  hand_over();
}

template <class T>
void streamer<T>::inserter::open(slot& b, int index) {
  const auto& l = s_->links_[static_cast<std::size_t>(index)];
  b.buffer = detail::message_buffer(s_->buffer_bytes_for(l, s_->capacity_));
  std::byte* payload = b.buffer.payload();
  b.next = payload + sizeof(detail::wire_header);
  b.end = b.next + std::size_t{s_->capacity_} * sizeof(T);
  b.next_dest = l.carries_destinations
                    ? reinterpret_cast<std::int32_t*>(payload + s_->destinations_offset(s_->capacity_))
                    : nullptr;
  b.next_source = l.carries_sources
                      ? reinterpret_cast<std::int32_t*>(payload + s_->sources_offset(s_->capacity_))
                      : nullptr;
}

template <class T>
void streamer<T>::inserter::close(slot& b, int index) {
  const std::byte* first = b.buffer.payload() + sizeof(detail::wire_header);
  const auto items = static_cast<std::uint32_t>((b.next - first) / sizeof(T));
  ready_.push_back(typename streamer::handed_buffer{index, items, s_->capacity_, std::move(b.buffer)});
  b.next = b.end = nullptr;
  b.next_dest = nullptr;
  b.next_source = nullptr;
}

template <class T>
void streamer<T>::inserter::full(slot& b, int index) {
  close(b, index);
  hand_over();
}

// A refused hand-over (after done()) drops what it carried: the exception says so, and the
// destructor must not try again (it would terminate).
template <class T>
void streamer<T>::inserter::hand_over() {
  try {
    s_->hand_over(ready_, inserted_);
  } catch (...) {
    ready_.clear();
    inserted_ = 0;
    throw;
  }
  inserted_ = 0;
}

}  // namespace transit
