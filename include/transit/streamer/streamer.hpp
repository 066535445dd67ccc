#pragma once
// streamer<T>: aggregated, routed delivery of fine-grained items (TRAM in transit).
#include <concepts>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <unordered_map>
#include <string_view>
#include <utility>
#include <vector>

#include "transit/runtime/context.hpp"
#include "transit/detail/streamer/core.hpp"
#include "transit/streamer/options.hpp"

namespace transit {

/// Streams items of type T to PEs. Items are copied once into a per-peer buffer at the source,
/// once more at each intermediate PE of the route, and read in place at the destination.
///
/// Delivery: every inserted item is delivered exactly once, on its destination PE, by `deliver`,
/// which runs on that PE's own thread and only inside insert, broadcast, progress, wait, quiesce
/// or finish of this streamer. A callback that takes `(const T& item, int source)` also gets the
/// PE that inserted the item (the root of a broadcast): free on a direct route (a message's
/// sender is its items' source), 4 bytes per item on the later hops of a grid route; a callback
/// taking `(const T&)` carries no source at all.
///
/// Re-entrancy rule: a deliver callback may call insert and broadcast (in a quiesce() step; the
/// items are buffered, never delivered recursively) and progress (a no-op when nested); it must
/// not call done, wait, finish or quiesce (std::logic_error). In a done()/wait() step a callback
/// must not insert: use quiesce() when deliveries produce new items.
///
/// Exceptions: one thrown by `deliver` propagates out of the call that ran the callback. That
/// item counts as delivered and is never delivered again; every other item stays queued and is
/// delivered by later calls, exactly once. A wait() or quiesce() so interrupted resumes where it
/// stopped when called again.
///
/// Life cycle: construction and destruction are collective. Every PE constructs its streamers in
/// the same order with the same item type, grid and routing (else construction throws
/// std::logic_error on every PE, naming both sides), and destroys a streamer after a step ended
/// (wait or quiesce returned) with nothing inserted since; destroyed mid-step, it ends the job with
/// a message saying what was lost.
template <class T>
class streamer final : private detail::streamer_core {
  static_assert(std::is_trivially_copyable_v<T>,
                "transit::streamer requires a trivially copyable item type: items are copied as bytes "
                "into message buffers");
  static_assert(alignof(T) <= 16, "transit::streamer supports item types aligned to at most 16 bytes");

 public:
  using item_type = T;  ///< the type of the items

  /// Collective: every PE constructs its streamers in the same order with equal options.
  /// `deliver` is any callable taking `const T&` (std::function included); a lambda is inlined
  /// into the per-message delivery loop. Throws std::invalid_argument for buffer_items above
  /// 2^32 - 1, a grid built for another PE count, or a router that cannot serve the grid, and
  /// transit::profile_error when buffer_items = 0 or tune = true meet an unreadable profile.
  template <class Deliver>
    requires std::invocable<Deliver&, const T&>
  streamer(context& ctx, streamer_options options, Deliver deliver)
      : detail::streamer_core(ctx, options, sizeof(T), type_name()),
        deliver_items_([d = std::move(deliver)](const T* items, const std::int32_t*, int, std::uint32_t& cursor,
                                                std::uint32_t n) mutable {
          // The cursor passes each item before its callback runs; it is written back only on an
          // exception (naming the first item not yet delivered) and at the end, so the loop
          // itself stays a plain call per item.
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
        }) {}

  /// Collective, as above, with a callback `deliver(const T& item, int source)` that also takes
  /// the PE that inserted the item. Every PE constructs the streamer with a callback of the same
  /// kind (else construction throws std::logic_error on every PE, as for any other difference).
  template <class Deliver>
    requires(!std::invocable<Deliver&, const T&> && std::invocable<Deliver&, const T&, int>)
  streamer(context& ctx, streamer_options options, Deliver deliver)
      : detail::streamer_core(ctx, options, sizeof(T), type_name(), true),
        deliver_items_([d = std::move(deliver)](const T* items, const std::int32_t* sources, int source,
                                                std::uint32_t& cursor, std::uint32_t n) mutable {
          std::uint32_t i = cursor;  // the cursor rule of the constructor above
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
        }) {}

  /// Collective, as above, with a deliver callback that takes runs of items (see
  /// detail::batch_deliver): for layers that dispatch items further. The form with sources makes
  /// the streamer carry them as the constructor above does.
  template <class F>
    requires std::invocable<F&, const T*, std::uint32_t&, std::uint32_t>
  streamer(context& ctx, streamer_options options, detail::batch_deliver<F> deliver)
      : detail::streamer_core(ctx, options, sizeof(T), type_name()),
        deliver_items_([f = std::move(deliver.f)](const T* items, const std::int32_t*, int, std::uint32_t& cursor,
                                                  std::uint32_t n) mutable { f(items, cursor, n); }) {}
  template <class F>
    requires std::invocable<F&, const T*, const std::int32_t*, int, std::uint32_t&, std::uint32_t>
  streamer(context& ctx, streamer_options options, detail::batch_deliver<F> deliver)
      : detail::streamer_core(ctx, options, sizeof(T), type_name(), true), deliver_items_(std::move(deliver.f)) {}

  /// Local. Buffers `item` for `dest`; may send a full buffer and deliver arrived items.
  /// Throws std::out_of_range for dest outside [0, size()), std::logic_error after done().
  void insert(const T& item, int dest) {
    insert_with(dest, [&item](std::byte* slot) { std::memcpy(slot, &item, sizeof(T)); });
  }

  /// Local. As insert, with the item written in place: `write(std::byte* slot)` stores the item's
  /// sizeof(T) bytes at `slot`, in the buffer (for an item assembled from parts: written once,
  /// not assembled and then copied). `write` must not call this streamer.
  template <class Write>
    requires std::invocable<Write&, std::byte*>
  void insert_with(int dest, Write&& write) {
    if (static_cast<unsigned>(dest) >= static_cast<unsigned>(size_)) [[unlikely]]
      throw_bad_destination(dest);
    if (state_ != step_state::open) [[unlikely]]
      throw_closed_step("insert");
    ++stats_.items_inserted;
    dynamic_step_ |= in_callback_;
    if (append_with(links_[link_to(dest)], write, dest, rank_)) [[unlikely]]
      after_send();
  }

  class inserter;
  /// Any thread: a handle through which one thread of the application inserts into this PE's
  /// streamer (an OpenMP `parallel for` over the PE's edges: one inserter per thread). See
  /// inserter for the rule.
  inserter make_inserter() { return inserter(*this); }

  /// Local. Delivers `item` exactly once on every PE (this one included), routed along the grid:
  /// one copy per link of a spanning tree, not size()-1 sends. Throws std::logic_error after
  /// done() in this step.
  void broadcast(const T& item) {
    if (state_ != step_state::open) [[unlikely]]
      throw_closed_step("broadcast");
    ++stats_.items_inserted;
    // Every copy is buffered before anything is polled, so a callback's exception cannot cut a
    // broadcast short.
    bool sent = append(links_[self_link], item, rank_, rank_);
    sent |= forward_broadcast(item, rank_, -1);
    if (sent) after_send();
  }

  /// Insertion from the application's own threads, into the streamer of the PE that owns them.
  ///
  /// The rule: each thread inserts through an inserter of its own (made by any thread with
  /// make_inserter(), used by one thread at a time), and every inserter is flushed (flush() or
  /// destroyed) before the PE calls done(), wait(), finish() or quiesce() for the step. An inserter
  /// has a buffer of its own per link of the PE (its items are copied once, into it, as insert
  /// copies into the PE's): inserting takes no lock. A full buffer, and at flush() each partial
  /// one, is handed to the PE in one locked hand-over, and the PE sends it at its next poll (any
  /// insert, progress, wait...), as one of its own messages: merged at flush, counted in the same
  /// termination. Deliveries still run on the PE's thread only, in its own calls.
  ///
  /// Valid for one step: the streamer may change its buffer size and routes between steps (tuning).
  /// Items handed over after the PE's done() in the step are refused: the hand-over (a full buffer
  /// or flush()) throws std::logic_error in the inserter's thread. The inserter must not outlive
  /// its streamer.
  class inserter {
   public:
    /// Any thread: an inserter into `s` (make_inserter() says the same). Holds no buffer yet.
    explicit inserter(streamer& s) : s_(&s), slots_(s.links_.size()) {}
    /// Takes over `other`'s buffers; `other` is left empty (its destructor does nothing).
    inserter(inserter&& other) noexcept
        : s_(std::exchange(other.s_, nullptr)),
          slots_(std::move(other.slots_)),
          ready_(std::move(other.ready_)),
          inserted_(std::exchange(other.inserted_, 0)) {}
    inserter& operator=(inserter&&) = delete;
    inserter(const inserter&) = delete;
    inserter& operator=(const inserter&) = delete;
    /// Flushes; a refused hand-over (after done()) ends the program (std::terminate), as items
    /// must not be dropped.
    ~inserter() {
      if (s_ != nullptr) flush();
    }

    /// Local to the calling thread, no lock: buffers `item` for `dest`; hands the buffer to the PE
    /// when it is full. Throws std::out_of_range for dest outside [0, size()), std::logic_error
    /// for a hand-over after the PE's done().
    void insert(const T& item, int dest) {
      if (static_cast<unsigned>(dest) >= static_cast<unsigned>(s_->size_)) [[unlikely]]
        s_->throw_bad_destination(dest);
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

    /// Local to the calling thread: hands every partial buffer (and the count of items inserted)
    /// to the PE, in one locked hand-over. Throws std::logic_error after the PE's done().
    void flush() {
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].next != nullptr) close(slots_[i], static_cast<int>(i));
      }
      if (ready_.empty() && inserted_ == 0) return;
      hand_over();
    }

   private:
    struct slot {
      std::byte* next = nullptr;
      std::byte* end = nullptr;
      std::int32_t* next_dest = nullptr;
      std::int32_t* next_source = nullptr;
      detail::message_buffer buffer;
    };
    void open(slot& b, int index) {
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
    void close(slot& b, int index) {
      const std::byte* first = b.buffer.payload() + sizeof(detail::wire_header);
      const auto items = static_cast<std::uint32_t>((b.next - first) / sizeof(T));
      ready_.push_back(typename streamer::handed_buffer{index, items, s_->capacity_, std::move(b.buffer)});
      b.next = b.end = nullptr;
      b.next_dest = nullptr;
      b.next_source = nullptr;
    }
    void full(slot& b, int index) {
      close(b, index);
      hand_over();
    }
    // A refused hand-over (after done()) drops what it carried: the exception says so, and the
    // destructor must not try again (it would terminate).
    void hand_over() {
      try {
        s_->hand_over(ready_, inserted_);
      } catch (...) {
        ready_.clear();
        inserted_ = 0;
        throw;
      }
      inserted_ = 0;
    }

    streamer* s_;
    std::vector<slot> slots_;
    std::vector<typename streamer::handed_buffer> ready_;
    std::uint64_t inserted_ = 0;
  };

  /// Local: this PE inserts nothing more in this step. Starts the staged flush. Throws
  /// std::logic_error when called twice in one step, from a deliver callback, or while a
  /// quiesce() that threw is unfinished.
  void done() { done_impl(); }
  /// Collective: returns when every item inserted anywhere in this step has been delivered
  /// (calls done() first if this PE has not). The streamer is then ready for the next step.
  /// Throws std::logic_error from a deliver callback, or when another PE ends the step with
  /// quiesce() or destroyed its streamer; rethrows a deliver callback's exception.
  void wait() { wait_impl(); }
  /// done() then wait(); Collective, throws as wait().
  void finish() { wait_impl(); }
  /// Collective, for dynamic work: returns when no item is buffered or in flight anywhere,
  /// counting items inserted by deliver callbacks. Every PE ends the step with quiesce() (a PE
  /// calling wait() instead makes both throw std::logic_error); throws std::logic_error from a
  /// deliver callback; rethrows a deliver callback's exception (call quiesce() again to resume).
  void quiesce() { quiesce_impl(); }
  /// Local, non-blocking: delivers what has arrived, forwards what passes through, and sends
  /// partial buffers when the flush period has elapsed. Returns whether anything happened.
  bool progress() { return progress_impl(); }
  /// Local: this PE's counters (and, with tune = true, the tuning history).
  streamer_stats stats() const { return detail::streamer_core::stats(); }
  /// Local: the options in use now: grid, routing and buffer size as chosen (buffer_items = 0
  /// resolved, and after tuning, the configuration of the coming step), the rest as given. The
  /// same on every PE.
  streamer_options current_options() const { return detail::streamer_core::current_options(); }
  /// The router items travel by (grid, phases, links). Local.
  using detail::streamer_core::route_plan;

 private:
  friend struct detail::streamer_test_access;
  friend class detail::streamer_group;  // progresses and quiesces several streamers together

  static std::string_view type_name() {
    if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
    else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
    else if constexpr (std::is_same_v<T, int>) return "int";
    else if constexpr (std::is_same_v<T, double>) return "double";
    else return detail::type_name<T>();
  }

  // The per-item path: a copy, an optional destination store and one compare. True when a buffer
  // was sent (the caller polls once its appends are done).
  bool append(link& l, const T& item, int dest, int source) {
    auto copy = [&](std::byte* slot) { std::memcpy(slot, &item, sizeof(T)); };
    return append_with(l, copy, dest, source);
  }
  template <class Write>
  bool append_with(link& l, Write& write, int dest, int source) {
    return append_item(l, write, sizeof(T), dest, source);
  }

  bool forward_broadcast(const T& item, int root, int arrived_phase) {
    bool sent = false;
    for (const int index : broadcast_links(root, arrived_phase)) sent |= append(links_[index], item, -root - 1, root);
    return sent;
  }

  void deliver_one(const T& item, int source) {
    std::uint32_t cursor = 0;
    deliver_items_(&item, nullptr, source, cursor, 1);
  }

  // Broadcast trees cost the router O(P) to compute; cache per (root, arrived phase).
  const std::vector<int>& broadcast_links(int root, int arrived_phase) {
    const std::int64_t key = std::int64_t{root} * 65536 + (arrived_phase + 1);
    auto it = broadcast_cache_.find(key);
    if (it == broadcast_cache_.end()) {
      std::vector<hop> children;
      route_plan().broadcast_children(rank_, root, arrived_phase, children);
      std::vector<int> indices;
      for (const auto& h : children) indices.push_back(link_index(h.pe, h.phase));
      it = broadcast_cache_.emplace(key, std::move(indices)).first;
    }
    return it->second;
  }

  void routes_changed() override { broadcast_cache_.clear(); }

  void process_items(const std::byte* payload, const detail::wire_header& h, int source,
                     std::uint32_t& cursor) override {
    const T* items = reinterpret_cast<const T*>(payload + sizeof(detail::wire_header));
    const std::uint32_t n = h.items;
    if (!(h.flags & detail::has_destinations)) {  // last hop: every item is for this PE, from `source`
      const std::uint32_t first = cursor;
      try {
        deliver_items_(items, nullptr, source, cursor, n);
      } catch (...) {
        stats_.items_delivered += cursor - first;
        throw;
      }
      stats_.items_delivered += n - first;
      return;
    }
    const auto* dests = reinterpret_cast<const std::int32_t*>(payload + destinations_offset(n));
    if (h.flags & detail::has_sources) {
      route_items(items, dests, reinterpret_cast<const std::int32_t*>(payload + sources_offset(n)), h, source, cursor);
    } else {
      route_items<false>(items, dests, nullptr, h, source, cursor);
    }
  }

  // Delivers or forwards each item of a message that carries destinations; item i came from
  // sources[i] (when carried; checked on arrival) or from the message's `source`.
  template <bool Sources = true>
  void route_items(const T* items, const std::int32_t* dests, const std::int32_t* sources,
                   const detail::wire_header& h, int source, std::uint32_t& cursor) {
    const std::uint32_t n = h.items;
    while (cursor < n) {
      const std::uint32_t i = cursor++;
      const int dest = dests[i];
      const int from = Sources ? static_cast<int>(sources[i]) : source;
      if (dest == rank_) {
        ++stats_.items_delivered;
        deliver_one(items[i], from);
      } else if (dest >= 0) {  // destinations were checked against the job's size on arrival
        ++stats_.items_forwarded;
        append(links_[link_to(dest)], items[i], dest, from);
      } else {
        ++stats_.items_forwarded;  // forwarded first: a callback's exception must not cut the tree
        const int root = -(dest + 1);
        forward_broadcast(items[i], root, h.phase);
        ++stats_.items_delivered;
        deliver_one(items[i], root);
      }
    }
  }

  // (items, sources or null, the message's source, cursor, n): see detail::batch_deliver.
  std::function<void(const T*, const std::int32_t*, int, std::uint32_t&, std::uint32_t)> deliver_items_;
  std::unordered_map<std::int64_t, std::vector<int>> broadcast_cache_;
};

}  // namespace transit
