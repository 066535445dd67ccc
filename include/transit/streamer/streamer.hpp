#pragma once
// streamer<T>: aggregated, routed delivery of fine-grained items (TRAM in transit). This header
// declares and documents; the template bodies are in transit/detail/streamer/streamer_impl.hpp,
// and the design (wire format, termination, tuning) is set out in docs/streamer.md.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
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
  streamer(context& ctx, streamer_options options, Deliver deliver);

  /// Collective, as above, with a callback `deliver(const T& item, int source)` that also takes
  /// the PE that inserted the item. Every PE constructs the streamer with a callback of the same
  /// kind (else construction throws std::logic_error on every PE, as for any other difference).
  template <class Deliver>
    requires(!std::invocable<Deliver&, const T&> && std::invocable<Deliver&, const T&, int>)
  streamer(context& ctx, streamer_options options, Deliver deliver);

  /// Collective, as above, with a deliver callback that takes runs of items (see
  /// detail::batch_deliver): for layers that dispatch items further. The form with sources makes
  /// the streamer carry them as the constructor above does.
  template <class F>
    requires std::invocable<F&, const T*, std::uint32_t&, std::uint32_t>
  streamer(context& ctx, streamer_options options, detail::batch_deliver<F> deliver);
  /// Collective, as above, with a batch callback that also takes each item's source:
  /// f(items, sources, source, cursor, n), where `sources` (one per item) is null when the run's
  /// items all come from `source`.
  template <class F>
    requires std::invocable<F&, const T*, const std::int32_t*, int, std::uint32_t&, std::uint32_t>
  streamer(context& ctx, streamer_options options, detail::batch_deliver<F> deliver);

  /// Local. Buffers `item` for `dest`; may send a full buffer and deliver arrived items.
  /// Throws std::out_of_range for dest outside [0, size()), std::logic_error after done().
  /// (Always inlined, as insert_with: the per-item path is a few instructions in the caller's loop,
  /// and a call would cost as much as they do.)
  [[gnu::always_inline]] void insert(const T& item, int dest);

  /// Local. As insert, with the item written in place: `write(std::byte* slot)` stores the item's
  /// sizeof(T) bytes at `slot`, in the buffer (for an item assembled from parts: written once,
  /// not assembled and then copied). `write` must not call this streamer.
  template <class Write>
    requires std::invocable<Write&, std::byte*>
  [[gnu::always_inline]] void insert_with(int dest, Write&& write);

  class inserter;
  /// Any thread: a handle through which one thread of the application inserts into this PE's
  /// streamer (an OpenMP `parallel for` over the PE's edges: one inserter per thread). See
  /// inserter for the rule.
  inserter make_inserter();

  /// Local. Delivers `item` exactly once on every PE (this one included), routed along the grid:
  /// one copy per link of a spanning tree, not size()-1 sends. Throws std::logic_error after
  /// done() in this step.
  void broadcast(const T& item);

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
    explicit inserter(streamer& s);
    /// Takes over `other`'s buffers; `other` is left empty (its destructor does nothing).
    inserter(inserter&& other) noexcept;
    inserter& operator=(inserter&&) = delete;
    inserter(const inserter&) = delete;
    inserter& operator=(const inserter&) = delete;
    /// Flushes; a refused hand-over (after done()) ends the program (std::terminate), as items
    /// must not be dropped.
    ~inserter();

    /// Local to the calling thread, no lock: buffers `item` for `dest`; hands the buffer to the PE
    /// when it is full. Throws std::out_of_range for dest outside [0, size()), std::logic_error
    /// for a hand-over after the PE's done().
    void insert(const T& item, int dest);

    /// Local to the calling thread: hands every partial buffer (and the count of items inserted)
    /// to the PE, in one locked hand-over. Throws std::logic_error after the PE's done().
    void flush();

   private:
    struct slot {
      std::byte* next = nullptr;
      std::byte* end = nullptr;
      std::int32_t* next_dest = nullptr;
      std::int32_t* next_source = nullptr;
      detail::message_buffer buffer;
    };
    void open(slot& b, int index);
    void close(slot& b, int index);
    void full(slot& b, int index);
    void hand_over();

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
  /// partial buffers when the flush period has elapsed. Returns whether anything happened. In an
  /// insert loop it polls the network once per 512 items inserted (a poll costs as much as tens
  /// of inserts); a call with nothing inserted since the previous one always polls.
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

  static std::string_view type_name();
  void process_items(const std::byte* payload, const detail::wire_header& h, int source,
                     std::uint32_t& cursor) override;

  // The "deliver a run" callback the core's routing loop calls (see detail::deliver_run_fn).
  detail::deliver_run_fn deliver_;
};

}  // namespace transit

#include "transit/detail/streamer/streamer_impl.hpp"
