#pragma once
// The item-type-independent half of a streamer, and the one core every front end (streamer<T>,
// object_streamer through it, active messages through batch_deliver, the C API's byte_streamer and
// the Python module through that) stands on: links (one aggregation buffer per (peer, phase), plus
// one for items to this PE), the route table, the insert checks, the per-item path, the routing
// loop (route_message, with a front end's "deliver a run" callback), sending, both termination
// protocols, flushing, checking received messages, and statistics. The design (message layout,
// termination, tuning, life cycle, the exception rule) is set out in docs/streamer.md, "Inside
// the streamer core".
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/simulation.hpp"
#include "transit/detail/transport/message.hpp"
#include "transit/streamer/options.hpp"

// What the core only names: its router, transport and tuner live in its out-of-line state
// (src/streamer/core_state.hpp), so that a program that streams items compiles none of their
// headers (transit/base.hpp).
namespace transit {
class context;
class router;  // transit/grid/router.hpp
}  // namespace transit

namespace transit::detail {

class mailbox;
class transport;
// What the streamer asks the model below it (src/model/tuner.hpp).
struct tuning_seed;
struct step_configuration;

struct wire_header {
  std::uint32_t items;
  std::uint8_t phase;
  std::uint8_t flags;
  std::uint16_t step;        // the sender's step, mod 2^16
  std::uint64_t link_count;  // with final_marker: cumulative messages on this link, this one included;
                             // with acknowledgement: cumulative messages of the link acknowledged
};
static_assert(sizeof(wire_header) == 16);

inline constexpr std::uint8_t has_destinations = 1;
inline constexpr std::uint8_t final_marker = 2;
inline constexpr std::uint8_t link_announcement = 4;  // construction only: "I send to you in this phase"
inline constexpr std::uint8_t peer_left = 8;          // control: "my streamer is gone as of this step"
inline constexpr std::uint8_t quiesce_flush = 16;     // sent by quiesce(): the sender ends this step quiescing
inline constexpr std::uint8_t has_sources = 32;       // an int32 source per item follows the destinations
// "I have handled the first link_count messages you sent me on this link (phase)": the receiver's
// answer when steps end by acknowledgement. Travels on the data channel, counted in no statistic
// of messages sent or received (quiesce's waves count data messages only).
inline constexpr std::uint8_t acknowledgement = 64;
// "The transport confirms this message's delivery to me (transport::send_confirmed): do not
// acknowledge it". Steps ending by acknowledgement only, on a phase that ends every route.
inline constexpr std::uint8_t transport_confirmed = 128;
// The phase of a message sent around the grid, straight to its items' destination
// (streamer_core::send_direct): confirmed by the transport, in steps ending by acknowledgement.
// No grid has this many dimensions.
inline constexpr std::uint8_t direct_phase = 255;
inline constexpr std::uint8_t known_flags = has_destinations | final_marker | link_announcement | peer_left |
                                            quiesce_flush | has_sources | acknowledgement | transport_confirmed;

/// The name of T as the compiler spells it ("double", "my::particle").
template <class T>
constexpr std::string_view type_name() {
  constexpr std::string_view signature = __PRETTY_FUNCTION__;
  constexpr std::string_view marker = "T = ";
  const std::size_t begin = signature.find(marker) + marker.size();
  const std::size_t end = signature.find_first_of(";]", begin);
  return signature.substr(begin, end - begin);
}

/// Test access to a streamer's internals (forcing counter values); defined by tests only.
struct streamer_test_access;
class streamer_group;

/// A deliver callback that takes a run of items, for layers on the streamer (active messages run
/// consecutive calls of one handler in one loop): f(const T* items, std::uint32_t& cursor,
/// std::uint32_t n) delivers items[cursor, n) in order, moving `cursor` past each item before its
/// callback runs (so that after an exception it names the first item not yet delivered). A layer
/// that needs the PE that inserted each item takes f(const T* items, const std::int32_t* sources,
/// int source, std::uint32_t& cursor, std::uint32_t n) instead: item i came from sources[i], or
/// from `source` when `sources` is null.
template <class F>
struct batch_deliver {
  F f;
};

/// A front end's "deliver a run" callback, which the core's routing loop calls (route_message):
/// run(items, sources, source, cursor, end) delivers items [cursor, end) (never empty) of the item
/// array `items`, in order, moving `cursor` past each item before its callback runs; item i came
/// from sources[i], or from `source` when `sources` is null. Owns the callable, as std::function
/// would, at one indirect call per run.
class deliver_run_fn {
 public:
  template <class F>
  explicit deliver_run_fn(F f) : state_(new F(std::move(f))), call_(&call<F>), destroy_(&destroy<F>) {}
  deliver_run_fn(deliver_run_fn&& other) noexcept
      : state_(std::exchange(other.state_, nullptr)), call_(other.call_), destroy_(other.destroy_) {}
  deliver_run_fn& operator=(deliver_run_fn&&) = delete;
  deliver_run_fn(const deliver_run_fn&) = delete;
  deliver_run_fn& operator=(const deliver_run_fn&) = delete;
  ~deliver_run_fn() {
    if (state_ != nullptr) destroy_(state_);
  }
  void operator()(const std::byte* items, const std::int32_t* sources, int source, std::uint32_t& cursor,
                  std::uint32_t end) {
    call_(state_, items, sources, source, cursor, end);
  }

 private:
  using call_type = void (*)(void*, const std::byte*, const std::int32_t*, int, std::uint32_t&, std::uint32_t);
  template <class F>
  static void call(void* f, const std::byte* items, const std::int32_t* sources, int source, std::uint32_t& cursor,
                   std::uint32_t end) {
    (*static_cast<F*>(f))(items, sources, source, cursor, end);
  }
  template <class F>
  static void destroy(void* f) noexcept {
    delete static_cast<F*>(f);
  }
  void* state_;
  call_type call_;
  void (*destroy_)(void*) noexcept;
};

/// Sets a flag (a deliver callback is running) and clears it on every exit, exceptions included.
class flag_guard {
 public:
  explicit flag_guard(bool& flag) : flag_(flag) { flag_ = true; }
  ~flag_guard() { flag_ = false; }
  flag_guard(const flag_guard&) = delete;
  flag_guard& operator=(const flag_guard&) = delete;

 private:
  bool& flag_;
};

/// A member of a streamer_group that is not a streamer: an endpoint with a channel of its own whose
/// messages each go straight to their destination as one transport message (active_messages'
/// large calls). The group polls it after each pump, and counts its messages in the same
/// quiescence waves as the streamers' (the four-counter argument holds for any channel whose
/// messages are counted when sent and when handled). It buffers nothing, so it is always flushed.
class group_endpoint {
 public:
  /// Handles what the group's last pump queued on its channel; true when anything happened.
  virtual bool poll_queued() = 0;
  /// Cumulative messages sent, and received and handled (the handler run or running).
  virtual std::uint64_t messages_sent() const noexcept = 0;
  virtual std::uint64_t messages_received() const noexcept = 0;
  /// Whether one of its callbacks is running (the call comes from it).
  virtual bool in_callback() const noexcept = 0;
  virtual ~group_endpoint() = default;
};

/// The state of one quiescence protocol, kept between calls so that a quiesce interrupted by a
/// callback's exception resumes (the allreduce in flight writes into `counts`).
struct quiesce_wave {
  bool in_flight = false;
  std::uint64_t counts[2] = {0, 0};    // (messages sent, messages received), summed over PEs
  std::uint64_t previous[2] = {0, 0};  // the previous wave's sums
};

class streamer_core {
 public:
  streamer_core(const streamer_core&) = delete;
  streamer_core& operator=(const streamer_core&) = delete;

  streamer_stats stats() const {
    streamer_stats s = stats_;
    s.items_buffered_peak = std::max(s.items_buffered_peak, buffered_);
    return s;
  }
  /// Include transit/grid/router.hpp to query it.
  const router& route_plan() const noexcept;
  /// What this streamer runs with now: the grid, routing and buffer size in use (after automatic
  /// sizing and tuning), and the options it was given otherwise.
  streamer_options current_options() const;
  /// The buffer of a PE's own items holds at least own_buffer_min_items items (within
  /// own_buffer_max_bytes of them), whatever the peers' capacity, except in a step whose
  /// deliveries insert: own items never travel, so a buffer per item only costs. Such a buffer
  /// goes at every poll, so own items wait no longer.
  static constexpr std::uint32_t own_buffer_min_items = 256;
  static constexpr std::size_t own_buffer_max_bytes = 4096;
  /// The capacity of the own items' buffer beside peers' buffers of `capacity` items of
  /// `item_bytes` bytes.
  static constexpr std::uint32_t own_capacity(std::uint32_t capacity, std::size_t item_bytes) noexcept {
    const std::size_t fits = std::max<std::size_t>(1, own_buffer_max_bytes / std::max<std::size_t>(1, item_bytes));
    return std::max(capacity, static_cast<std::uint32_t>(std::min<std::size_t>(own_buffer_min_items, fits)));
  }

 protected:
  /// Collective. `item_bytes` is sizeof(T); the item array starts right after the header.
  /// `wants_sources`: deliveries need each item's source (the callback takes it), so sources
  /// travel on the phases that need them. `broadcasts`: the front end broadcasts; a streamer that
  /// does not refuses a received broadcast destination as corrupt (check_items).
  streamer_core(context& ctx, const streamer_options& options, std::size_t item_bytes, std::string_view type_name,
                bool wants_sources, bool broadcasts);
  virtual ~streamer_core();
  /// For a front end that reports a loss to its caller instead of ending the job (the C API's
  /// transit_streamer_destroy): what the destructor would end the job with, "" when this
  /// streamer may go now. Either way the destructor then frees it without ending the job and
  /// tells its peers it left (a peer still in this step fails instead of waiting for it). Once.
  std::string release_reporting_loss();
  /// "streamer<type> #channel": how the reports name this streamer.
  std::string name() const;

  // ---- for the front ends (streamer<T>, the C API's byte_streamer): the checks, the per-item
  // path and the routing loop live here, so that every front end keeps the one wire policy
  // (delivery, exception and cursor rules at the top of this file) ----

  /// Whether `dest` may take the unchecked per-item path (see unchecked_dest_limit_).
  bool inserts_unchecked(int dest) const noexcept {
    return static_cast<unsigned>(dest) < static_cast<unsigned>(unchecked_dest_limit_);
  }
  /// Throws std::out_of_range unless `dest` is a PE of the job.
  void check_destination(int dest) const {
    if (static_cast<unsigned>(dest) >= static_cast<unsigned>(size_)) [[unlikely]]
      throw_bad_destination(dest);
  }
  /// The position of the first of `count` destinations that is no PE of the job; `count` if none.
  std::size_t first_bad_destination(const int* dests, std::size_t count) const noexcept {
    for (std::size_t i = 0; i < count; ++i) {
      if (static_cast<unsigned>(dests[i]) >= static_cast<unsigned>(size_)) [[unlikely]]
        return i;
    }
    return count;
  }
  /// Opens an insert or a broadcast (`call`, for the message) of `items` items: throws
  /// std::logic_error after done() in this step; counts the items; a deliver callback that
  /// inserts makes the step dynamic.
  void begin_insert(std::uint64_t items, const char* call) {
    if (state_ != step_state::open) [[unlikely]]
      throw_closed_step(call);
    // Whether a deliver callback inserted is found by its callback_scope from this count, so that
    // the per-item path tests nothing more.
    stats_.items_inserted += items;
  }
  /// The per-item path for items of Bytes bytes (0: item_bytes_, known at run time only): `write`
  /// stores the item in the buffer of the first hop towards `dest` (a copy, an optional
  /// destination store and a compare). True when a buffer was sent: the caller calls after_send()
  /// once its own appends are done.
  template <std::size_t Bytes, class Write>
  bool append_for(int dest, Write& write) {
    return append_item(link_for(dest), write, item_size<Bytes>(), dest, rank_);
  }
  /// append_for where inserts_unchecked(dest): counts the item, and no bound to count it against.
  template <std::size_t Bytes, class Write>
  bool append_unchecked(int dest, Write& write) {
    stats_.items_inserted += 1;
    return append_item<false>(link_for(dest), write, item_size<Bytes>(), dest, rank_);
  }
  /// After begin_insert: buffers `item` for every PE (this one included) along the broadcast tree,
  /// every copy before anything is polled, so that a callback's exception cannot cut it short.
  template <std::size_t Bytes>
  void broadcast_item(const std::byte* item);
  /// The routing loop of one checked message from `source`, from item `cursor` on: delivers the
  /// runs of items for this PE through `run` (see deliver_run_fn), forwards the others, and
  /// forwards a broadcast before delivering it. Counts items delivered and forwarded. A callback's
  /// exception leaves `cursor` at the first item not yet handled.
  template <std::size_t Bytes, class Run>
  void route_message(const std::byte* payload, const wire_header& h, int source, std::uint32_t& cursor, Run& run);

  /// An aggregation buffer towards one peer in one phase. The cursors make appending an item a
  /// copy and a compare; a link without an open buffer has next == end == nullptr.
  struct link {
    std::byte* next = nullptr;            // next free item slot
    std::byte* end = nullptr;             // one past the last item slot
    std::int32_t* next_dest = nullptr;    // next free destination slot; null when not carried
    std::int32_t* next_source = nullptr;  // next free source slot; null when not carried
    message_buffer buffer;
    std::uint64_t sent = 0;               // cumulative messages sent on this link
    std::uint64_t acknowledged = 0;       // of those, acknowledged by the peer (steps ending by acknowledgement)
    std::uint32_t capacity = 0;           // items the open buffer has room for
    int pe = -1;
    int phase = -1;                       // -1: the link to this PE itself
    bool carries_destinations = false;
    bool carries_sources = false;         // implies carries_destinations
    bool inter_node = false;              // the peer is on another node
    bool carried_items = false;           // a message with items left on it in this step
    // Steps ending by acknowledgement: the transport confirms this link's messages, so the peer
    // sends no acknowledgement (a phase that ends every route, messages the transport confirms).
    bool confirmed_by_transport = false;
  };
  struct in_link {
    int pe = -1;
    int phase = -1;
    std::uint64_t received = 0;   // cumulative messages received
    std::uint64_t announced = 0;  // cumulative count in this step's final marker
    bool final_received = false;  // this step's final marker has arrived
    std::uint64_t acknowledged = 0;  // of `received`, acknowledged to the peer
  };
  enum class step_state {
    open,     // inserting
    done,     // done() called: staged completion
    ending,   // every in-link complete; the step's closing barrier is in flight
  };
  enum class flush_kind { full, timer, final, bound };
  static constexpr int self_link = 0;

  /// Link index for the next hop from this PE to `dest` (self_link for dest == rank).
  int link_to(int dest) const noexcept { return static_cast<int>(route_[dest] - links_.data()); }
  /// The link of the next hop from this PE to `dest`.
  link& link_for(int dest) const noexcept { return *route_[dest]; }
  int link_index(int pe, int phase) const;
  [[noreturn]] void throw_bad_destination(int dest) const;  // std::out_of_range
  [[noreturn]] void throw_closed_step(const char* call) const;  // std::logic_error
  /// A received message breaks the wire format: std::runtime_error naming channel and source.
  [[noreturn]] void throw_corrupt(int source, std::string_view problem) const;
  void open_buffer(link& l);
  /// While it lives a deliver callback may run (in_callback_, cleared on every exit, exceptions
  /// included); a callback that inserted into this streamer makes the step dynamic.
  class callback_scope {
   public:
    explicit callback_scope(streamer_core& core) : core_(core) {
      core_.in_callback_ = true;
      core_.inserted_before_callbacks_ = core_.stats_.items_inserted;
    }
    ~callback_scope() {
      core_.note_callback_inserts();
      core_.in_callback_ = false;
    }
    callback_scope(const callback_scope&) = delete;
    callback_scope& operator=(const callback_scope&) = delete;

   private:
    streamer_core& core_;
  };
  /// Inside a callback_scope: if a callback has inserted, the step is dynamic. Counted here, off
  /// the per-item path, which only counts items_inserted.
  void note_callback_inserts() noexcept {
    if (stats_.items_inserted != inserted_before_callbacks_) dynamic_step_ = true;
  }
  /// The buffer of `l` is full: send it (or queue it for local delivery). The caller then polls
  /// (after_send) once its own appends are complete, so that an exception from a callback run by
  /// that poll never interrupts an insert or broadcast half-way.
  void buffer_full(link& l);
  /// max_buffered_items accounting, only called when a bound is set. True when it sent a buffer.
  bool count_bounded_item() {
    // The peak is taken where the count falls (send) and when read (stats), not per item.
    return ++buffered_ > max_buffered_ && relieve_bound();
  }
  /// The per-item path: `write(slot)` stores the item's `item_bytes` bytes (sizeof(T) for
  /// streamer<T>, a constant there; the run-time size for the C API's) in `l`'s buffer, plus the
  /// destination when the link carries it, and `source` (the PE that inserted the item) when the
  /// link carries sources. True when the buffer was sent (the caller polls once its own appends
  /// are done).
  template <bool MayBeBounded = true, class Write>
  bool append_item(link& l, Write& write, std::size_t item_bytes, int dest, int source) {
    if (l.next == nullptr) [[unlikely]]
      open_buffer(l);
    // The cursors are read before the item's bytes are stored: a store through std::byte* may
    // alias anything, and reloading them after it would put a load on every item's path.
    std::byte* const slot = l.next;
    std::byte* const end = l.end;
    std::int32_t* const next_dest = l.next_dest;
    write(slot);
    l.next = slot + item_bytes;
    // Sources only travel beside destinations: a direct link pays nothing for them.
    if (next_dest != nullptr) {
      *next_dest = dest;
      l.next_dest = next_dest + 1;
      if (l.next_source != nullptr) *l.next_source++ = source;
    }
    if (slot + item_bytes == end) [[unlikely]] {
      buffer_full(l);
      return true;
    }
    if constexpr (MayBeBounded) {
      if (max_buffered_ != 0) [[unlikely]]
        return count_bounded_item();
    }
    return false;
  }
  /// After a top-level insert or broadcast sent a buffer: receive and deliver, and bound the sends
  /// in flight. A no-op inside a deliver callback.
  void after_send();
  template <std::size_t Bytes>
  std::size_t item_size() const noexcept {
    if constexpr (Bytes != 0) return Bytes;
    else return item_bytes_;
  }
  /// Copies `item` into every child link of the broadcast tree of `root` (arrived on
  /// `arrived_phase`, -1 at the root); true when a buffer was sent.
  template <std::size_t Bytes>
  bool forward_broadcast(const std::byte* item, int root, int arrived_phase) {
    auto copy = [item, this](std::byte* slot) { std::memcpy(slot, item, item_size<Bytes>()); };
    bool sent = false;
    for (const int index : broadcast_links(root, arrived_phase))
      sent |= append_item(links_[static_cast<std::size_t>(index)], copy, item_size<Bytes>(), -root - 1, root);
    return sent;
  }
  /// The child links of the broadcast tree of `root` at this PE (cached: the router computes a
  /// tree in O(P)).
  const std::vector<int>& broadcast_links(int root, int arrived_phase);
  /// Calls `run` for items [cursor, end) and counts them delivered (up to the cursor when it throws).
  template <class Run>
  void deliver_run(Run& run, const std::byte* items, const std::int32_t* sources, int source, std::uint32_t& cursor,
                   std::uint32_t end) {
    const std::uint32_t first = cursor;
    try {
      run(items, sources, source, cursor, end);
    } catch (...) {
      stats_.items_delivered += cursor - first;
      throw;
    }
    stats_.items_delivered += end - first;
  }
  template <std::size_t Bytes, bool Sources, class Run>
  void route_items(const std::byte* items, const std::int32_t* dests, const std::int32_t* sources,
                   const wire_header& h, int source, std::uint32_t& cursor, Run& run);
  std::size_t destinations_offset(std::size_t items) const noexcept {
    return (sizeof(wire_header) + items * item_bytes_ + 3) & ~std::size_t{3};
  }
  /// Where the sources start in a buffer of `items` items (right after the destinations).
  std::size_t sources_offset(std::size_t items) const noexcept {
    return destinations_offset(items) + items * sizeof(std::int32_t);
  }
  /// Bytes of a buffer of `capacity` items on link `l` (payload: header, items, destinations,
  /// sources).
  std::size_t buffer_bytes_for(const link& l, std::uint32_t capacity) const noexcept {
    if (l.carries_sources) return sources_offset(capacity) + capacity * sizeof(std::int32_t);
    return l.carries_destinations ? destinations_offset(capacity) + capacity * sizeof(std::int32_t)
                                  : sizeof(wire_header) + capacity * item_bytes_;
  }
  /// The link's destination and source slots for a buffer at `payload` of `capacity` items, of
  /// which `items` are written.
  void point_link_arrays(link& l, std::byte* payload, std::uint32_t capacity, std::uint32_t items) const noexcept {
    l.next_dest = l.carries_destinations
                      ? reinterpret_cast<std::int32_t*>(payload + destinations_offset(capacity)) + items
                      : nullptr;
    l.next_source =
        l.carries_sources ? reinterpret_cast<std::int32_t*>(payload + sources_offset(capacity)) + items : nullptr;
  }

  /// A buffer an inserter (one of the application's own threads) filled for link `link`: `items`
  /// items of `capacity` written, destinations after destinations_offset(capacity) when the link
  /// carries them.
  struct handed_buffer {
    int link;
    std::uint32_t items;
    std::uint32_t capacity;
    message_buffer buffer;
  };
  /// Any thread: queues an inserter's buffers (taken from `buffers`, left empty) for this PE to
  /// send at its next poll, and counts `items_inserted` in its statistics. One lock per call.
  void hand_over(std::vector<handed_buffer>& buffers, std::uint64_t items_inserted);

  // ---- per-message hook ----
  /// Delivers or forwards the items of one message from `source` (this PE for its own items)
  /// from item `cursor` on: a front end calls route_message with its item size and its run
  /// callback. The message was checked: with has_sources, its sources are PEs of the job.
  virtual void process_items(const std::byte* payload, const wire_header& h, int source, std::uint32_t& cursor) = 0;

  // ---- operations behind the public API ----
  bool progress_impl();
  void done_impl();
  void wait_impl();
  void quiesce_impl();
  void set_state(step_state state) noexcept {
    state_ = state;
    unchecked_dest_limit_ = unchecked_dest_limit(state);
  }
  int unchecked_dest_limit(step_state state) const noexcept {
    return state == step_state::open && max_buffered_ == 0 ? size_ : 0;
  }

  context& ctx_;
  const int rank_;
  const int size_;
  const std::size_t item_bytes_;
  const bool wants_sources_;
  const bool broadcasts_;
  std::uint32_t capacity_;  // items per buffer; may change between steps (tuning)
  const std::uint64_t max_buffered_;
  std::vector<link> links_;          // links_[self_link] is this PE's own; the rest sorted by phase
  // Destination PE -> its link in links_: a pointer, not an index, saves the per-item path an
  // address computation. Rebuilt with links_, whose elements never move otherwise.
  std::vector<link*> route_;
  step_state state_ = step_state::open;  // changed by set_state only
  // The per-item path's one test (streamer<T>::insert_with): a destination below it is a PE of the
  // job, the step is open and no bound is set, so the item goes straight in; at or above it, the
  // checked path finds out which of those fails. size_ while the step is open and unbounded, else
  // 0. One compare instead of three ran the histogram 1.12x faster on one PE and 1.05x on 2 ranks
  // (BENCHMARKS.md, issue 53).
  int unchecked_dest_limit_ = unchecked_dest_limit(state_);
  bool in_callback_ = false;  // a deliver callback may be running: no nested polling
  std::uint64_t inserted_before_callbacks_ = 0;  // items_inserted when the callback_scope opened
  // A deliver callback inserted in this step: its work is dynamic (each delivery makes more, as
  // in PHOLD or a graph traversal).
  bool dynamic_step_ = false;
  // buffer_items = 0 without tuning: buffers opened in a dynamic step hold an eighth of capacity_
  // (docs/tuning.md: latency-bound steps want buffers that leave early).
  bool smaller_in_dynamic_steps_ = false;
  bool own_items_at_poll_ = false;  // the own items' buffer is larger than the peers': deliver_local sends it
  streamer_stats stats_;

 private:
  friend struct streamer_test_access;
  friend class streamer_group;

  /// See streamer_group::delivering_from. Local items are delivered only between messages.
  int delivering_from() const noexcept { return batch_.started ? batch_.messages[batch_.next].source : rank_; }

  /// A batch of messages being delivered, resumable after a callback's exception.
  struct delivery_queue {
    std::vector<message> messages;
    std::size_t next = 0;          // first message not fully handled
    std::uint32_t cursor = 0;      // first item not handled in messages[next]
    bool started = false;          // messages[next] has been checked and counted
    bool empty() const noexcept { return next == messages.size(); }
    void reset() {
      messages.clear();
      next = 0;
      cursor = 0;
      started = false;
    }
  };

  /// Sends what inserters handed over (the PE's thread, at each poll and before done()).
  bool send_handed_over();

  std::uint32_t items_in(const link& l) const noexcept {
    return l.next == nullptr ? 0
                             : static_cast<std::uint32_t>(
                                   (l.next - (l.buffer.payload() + sizeof(wire_header))) / item_bytes_);
  }
  void send(link& l, flush_kind kind, bool with_final_marker = false);
  bool relieve_bound();
  /// Steps ending by acknowledgement where every transport confirms: a link's last flush of at
  /// most this many items, on a phase whose items travel on, sends them straight to their
  /// destinations instead (send_direct). A near-empty step's item then takes one hop and no
  /// acknowledgement, not a hop per dimension each acknowledged; a fuller buffer stays one message.
  /// Simulated BG/Q, 256 ranks on 16x16, 16 updates per PE: never 262.8 us (markers), up to 2
  /// items 235.6, 4 201.9, 8 and more 195.6 (every flush then goes around); with 64 updates per
  /// PE the steps end by markers and the limit changes nothing (308.0-308.3 us).
  static constexpr std::uint32_t direct_items = 8;
  /// The `n` items of `l` (a link that carries destinations), one confirmed message per
  /// destination, phase direct_phase; the link's buffer is released. False, sending nothing, when
  /// one is a broadcast (it follows its tree) or a message would be too big to confirm.
  bool send_direct(link& l, std::uint32_t n);
  /// The `n` items of `l`'s buffer leave it (sent, or sent around the grid): the link has no open
  /// buffer, and with a bound they are no longer counted as buffered.
  void close_buffer(link& l, std::uint32_t n);
  void flush_links(std::size_t first, std::size_t last, flush_kind kind, bool with_final_marker);
  std::size_t buffer_bytes(const link& l) const noexcept;
  std::uint64_t buffered_items() const noexcept;
  std::string describe_self() const;
  /// Also copies PE 0's `seed` to every PE (in the same allreduce).
  void check_same_streamer_everywhere(const std::string& self, tuning_seed& seed);
  /// Links and route table from the router (no communication).
  void build_routes();
  /// Collective: learns the incoming links (for this step's tag) by announcement.
  void discover_in_links();
  step_configuration configuration() const;
  /// Collective, at the end of a step of a tuned streamer: agrees on the step's outcome, asks the
  /// tuner and changes the configuration for the next step.
  void retune();
  void reconfigure(const step_configuration& next);
  wire_header checked_header(const message& m) const;
  void check_items(const message& m, const wire_header& h) const;
  /// Receives and delivers (or forwards) arrived messages; `pump`: poll the transport first (a
  /// streamer_group pumps once for all its members instead).
  bool receive(bool pump = true);
  bool deliver_local();
  bool poll_once(bool pump = true);
  bool advance_staged();
  bool in_links_complete(int below_phase) const;
  // ---- steps that end by acknowledgement (termination.cpp) ----
  /// How steps end (TRANSIT_STEP_END): always by staged final markers, always by acknowledgement,
  /// chosen step by step from the traffic of the step before, or automatic: step by step where
  /// that pays (chooses_step_by_step), else by markers.
  enum class step_end { markers, acknowledgements, adaptive, automatic };
  static step_end step_end_policy();
  /// Whether steps end as chosen step by step: `adaptive`, or `automatic` where no PE shares its
  /// core (a round trip then waits for a context switch each way: 5 and 8 ranks on 2 cores ended
  /// 1-update steps 0.95x as fast by acknowledgement) on a grid of more than markers_per_hop links
  /// per hop, or of more than one link where every PE's transport confirms delivery.
  static bool chooses_step_by_step(step_end policy, int links, int hops, bool cores_shared,
                                   bool transport_confirms) noexcept {
    if (policy == step_end::adaptive) return true;
    if (policy != step_end::automatic || cores_shared) return false;
    return transport_confirms ? links > 1 : links > markers_per_hop * hops;
  }
  /// Sum over the grid's dimensions of extent - 1: a PE's links on a full grid (the same on
  /// every PE, unlike its own link count on a partial grid).
  static int grid_links(const router& plan);
  /// The grid's dimensions of more than one PE: the hops of the longest route.
  static int grid_hops(const router& plan);
  /// Up to this many grid links per hop, automatic ends every step by markers where some
  /// transport cannot confirm delivery: a round trip per hop costs more than a marker per link
  /// there. Simulated BG/Q, one update per PE, with acknowledgements of transit's on every hop:
  /// markers 1.1x faster on 4x2 (4 links, 2 hops), even on 4x4 (6, 2), 1.7x on the hypercubes
  /// of 64 and 256 (as many links as hops); acknowledgements 1.7x faster on direct 8 (7, 1), 1.3x
  /// on 4x8 (10, 2). 4 ranks on 2 cores, direct (3, 1): markers 1.5x faster. Where every
  /// transport confirms, a near-empty step's items go around the grid in one hop (send_direct),
  /// and step by step wins on every grid of more than one link (simulated BG/Q, one update per
  /// PE, markers against step by step: 25.3 and 20.2 us on direct 3, 33.6 and 24.6 on 2x2x2, 67.8
  /// and 43.5 on the hypercube of 64, 87.9 and 43.5 on 4x4x4; with 16 updates within 0.5 us), and
  /// ties on one (11.4 and 11.3 us at 2 ranks).
  static constexpr int markers_per_hop = 3;
  /// At the end of a step ended by wait(): chooses the next step's way of ending from this one's
  /// traffic (step_traffic_, summed over PEs); on a switch to acknowledgements, starts every
  /// link's counts level.
  void choose_next_step_end();
  /// After done(): sends every buffer (no stage waits for another: without markers nothing says a
  /// phase is closed), releases the in-link this PE owes its engagement to once it is idle, and
  /// acknowledges what it has handled. True when it sent anything.
  bool settle_acknowledged();
  bool send_acknowledgements();
  /// An acknowledgement from `source` for the link (source, h.phase): checked by checked_header.
  void take_acknowledgement(int source, const wire_header& h);
  /// Nothing buffered or being delivered, and every message sent acknowledged or confirmed.
  bool idle_and_acknowledged() const noexcept;
  /// Counts a checked data message of this step on its in-link (final marker, quiesce flag).
  void count_arrival(const message& m, const wire_header& h);
  /// Tells the PEs this one sends to that its streamer is gone (peer_left control messages).
  void announce_departure();
  bool locally_idle() const noexcept {
    return local_.empty() && local_messages_.empty() && links_[self_link].next == nullptr;
  }
  void maybe_timer_flush();
  /// Modelled simulation (src/core/simulated_costs.hpp): charges the item hops counted since the
  /// last charge (inserted, forwarded, delivered), once per message sent and per poll, so the
  /// per-item path itself charges nothing. Nothing at all outside a simulation build.
  void charge_items() {
    if constexpr (simulated_build) charge_items_now();
  }
  void charge_items_now();
  std::uint64_t items_charged_ = 0;
  void end_step();
  void check_no_peer_left() const;
  /// Throws std::logic_error when a peer ends this step the other way (`waiting`: this PE waits).
  void check_same_ending(bool waiting) const;
  std::uint64_t activity() const noexcept {
    return stats_.items_inserted + stats_.items_forwarded + stats_.messages_received;
  }
  std::size_t undelivered_messages();
  /// What destroying this streamer now loses, as the destructor's report; "" when nothing is.
  /// Closes the channel (undelivered_messages): called once, by the destructor or by
  /// release_reporting_loss.
  std::string loss_report();
  bool released_ = false;  // release_reporting_loss() ran: the destructor only leaves
  std::string describe() const;
  transport& net() const noexcept;
  mailbox& mail() const noexcept;

  std::string type_name_;
  std::uint32_t channel_;
  std::vector<in_link> in_links_;                    // sorted by phase
  delivery_queue batch_;                             // arrived messages being delivered
  std::vector<message> deferred_;  // arrived early: from a peer already in step_ + 1, or during construction
  std::vector<message> local_messages_;              // full buffers of the self link, to deliver
  delivery_queue local_;                             // local messages being delivered
  std::uint64_t buffered_ = 0;                       // items in buffers, counted only with a bound
  std::uint64_t items_since_poll_ = 0;               // items sent since insert last polled (after_send)
  /// Items inserted when progress() (of a streamer or a group) last polled the network, and when
  /// it last returned.
  struct poll_pacing {
    std::uint64_t inserted_at_network_poll = 0;
    std::uint64_t inserted_at_progress = 0;
  };
  poll_pacing pacing_;                               // progress()'s network polls between inserts
  std::uint32_t step_ = 0;
  int next_final_phase_ = 0;
  // Steps ending by acknowledgement (docs/streamer.md, "Steps and termination"): the messages
  // this PE sent and no peer has acknowledged yet; the in-links whose messages this PE has handled
  // but not acknowledged; and, once this PE has joined the step's closing barrier, the in-link of
  // the message that made it busy again, acknowledged last (Dijkstra and Scholten's parent).
  step_end step_end_ = step_end::automatic;  // TRANSIT_STEP_END, read once at construction
  bool acknowledged_ends_ = false;
  bool adaptive_ends_ = false;            // chooses_step_by_step
  bool cores_shared_ = false;             // some PE of the job shares its core (not in simulation)
  bool transport_confirms_ = false;       // every PE's transport confirms delivery (confirmable_bytes)
  bool last_step_acknowledged_ = false;   // how the last step ended by wait() ended (tests)
  // Summed by the closing collective of an adaptive streamer's step: links that carried items,
  // and links (the allreduce writes here while it is in flight).
  std::uint64_t step_traffic_[2] = {0, 0};
  std::uint64_t unacknowledged_ = 0;  // messages on links not confirmed_by_transport (those: impl::confirmations)
  std::vector<int> acknowledgements_due_;
  int parent_in_link_ = -1;
  std::uint64_t buffers_allocated_ = 0;
  std::uint64_t buffer_bytes_allocated_ = 0;
  std::size_t flush_rotation_ = 0;
  std::chrono::microseconds flush_period_;
  steady_clock::time_point last_flush_check_;
  // The router, the collective group, the tuner, the link lookups and the inserters' hand-over
  // queue (src/streamer/core_state.hpp): used per message or per poll, never per item. Owned; a
  // plain pointer, so that this header needs none of their headers (<memory>, <unordered_map>,
  // <mutex>, <atomic>).
  struct impl;
  impl* impl_;
  /// The constructor's work once impl_ exists (which it frees when this throws).
  void construct(const streamer_options& options);
  std::uint64_t activity_at_check_ = 0;
  std::uint64_t activity_at_step_start_ = 0;
  /// Quiescence of `members` and `endpoints` (this streamer alone, or a streamer_group) on `group`.
  static void quiesce_members(context& ctx, std::span<streamer_core* const> members,
                              std::span<group_endpoint* const> endpoints, collective_group& group,
                              quiesce_wave& wave, std::string_view what);
  /// One poll of the transport (unless `pump` is false), then poll_once of every member and
  /// poll_queued of every endpoint.
  static bool poll_members(context& ctx, std::span<streamer_core* const> members,
                           std::span<group_endpoint* const> endpoints, bool pump = true);
  /// For progress() (of a streamer or a group), `inserted` items inserted so far: whether it
  /// should poll the network, or only take what is here. Always when this PE's sends back up;
  /// else, when items were inserted since the previous progress(), only once progress_poll_items
  /// were inserted since the network's last poll; and then when mailbox::pump_due allows.
  static bool network_poll_due(context& ctx, poll_pacing& pacing, std::uint64_t inserted);

  bool quiescing_ = false;  // in a quiesce() (own or joint) that has not returned yet
  quiesce_wave wave_;       // this streamer's own quiesce()
  int left_peer_ = -1;      // a peer whose streamer left before this step ended, or -1
  int waited_peer_ = -1;    // a peer that sent a final marker (it ends this step with wait), or -1
  int quiesced_peer_ = -1;  // a peer that flushed from quiesce() in this step, or -1
  int diagnostic_id_ = -1;
  // Tuning (tune = true): the tuner, and where the running step started.
  bool tune_ = false;
  bool exploring_ = true;  // the running step tries a configuration (stats().tuning[].explored)
  steady_clock::time_point step_started_;
  std::uint64_t items_at_step_start_ = 0;
  std::uint64_t messages_at_step_start_ = 0;
  // The timeline trace (--transit-trace), when on: where the running step started, its items.
  void trace_step_start();
  void trace_step_end();
  std::int64_t traced_step_start_ = 0;
  std::uint64_t traced_items_at_step_start_ = 0;
};

/// Several streamers progressed and quiesced together (active_messages' streamers): one transport
/// poll per round for all of them, and one quiescence protocol over all of them (see the top of
/// this file). Construction is collective (a collective group of its own); every PE adds the same
/// streamers in the same order.
class streamer_group {
 public:
  explicit streamer_group(context& ctx);
  ~streamer_group();
  streamer_group(const streamer_group&) = delete;
  streamer_group& operator=(const streamer_group&) = delete;

  /// Local. `s` is a streamer<T> (which befriends this class); it must outlive this object.
  template <class Streamer>
  void add(Streamer& s) {
    members_.push_back(&static_cast<streamer_core&>(s));
  }
  /// Local. An endpoint polled and counted with the streamers; it must outlive this object.
  void add_endpoint(group_endpoint& e) { endpoints_.push_back(&e); }
  /// Local, non-blocking: polls the transport once (paced as streamer::progress, counting every
  /// member's inserts), then delivers and forwards what arrived for every member. False (and
  /// nothing done) from a member's deliver callback.
  bool progress() {
    if (in_callback()) return false;
    const bool pump = streamer_core::network_poll_due(ctx_, pacing_, items_inserted());
    const bool progressed = streamer_core::poll_members(ctx_, members_, endpoints_, pump);
    pacing_.inserted_at_progress = items_inserted();  // after the callbacks, as streamer::progress
    return progressed;
  }
  /// Local: whether a deliver callback of a member is running (this call comes from it).
  bool in_callback() const noexcept {
    for (const streamer_core* m : members_) {
      if (m->in_callback_) return true;
    }
    for (const group_endpoint* e : endpoints_) {
      if (e->in_callback()) return true;
    }
    return false;
  }
  /// Collective: returns when no item of any member is buffered or in flight anywhere, counting
  /// items inserted by deliver callbacks into any member; then every member's step has ended.
  /// Same rules as streamer::quiesce (not from a callback; resumes after a callback's exception).
  void quiesce(std::string_view what) {
    streamer_core::quiesce_members(ctx_, members_, endpoints_, *group_, wave_, what);
    ++steps_ended_;
  }
  /// Local, from a deliver callback of member `s` (a streamer<T>): the PE whose message it is
  /// delivering from (this PE for its own items), for a layer to name when an item fails its checks.
  template <class Streamer>
  static int delivering_from(const Streamer& s) noexcept {
    return static_cast<const streamer_core&>(s).delivering_from();
  }
  /// Local: how many quiesce() calls have returned on this PE. An endpoint tags its messages with
  /// it, so that one sent by a PE already past a quiescence is not handled by a PE still in it.
  std::uint32_t steps_ended() const noexcept { return steps_ended_; }

 private:
  context& ctx_;
  collective_group* group_;  // owned (a plain pointer: see streamer_core::impl_)
  std::vector<streamer_core*> members_;
  std::vector<group_endpoint*> endpoints_;
  quiesce_wave wave_;
  std::uint32_t steps_ended_ = 0;
  streamer_core::poll_pacing pacing_;

  std::uint64_t items_inserted() const noexcept {
    std::uint64_t sum = 0;
    for (const streamer_core* m : members_) sum += m->stats_.items_inserted;
    return sum;
  }
};

template <std::size_t Bytes>
void streamer_core::broadcast_item(const std::byte* item) {
  auto copy = [item, this](std::byte* slot) { std::memcpy(slot, item, item_size<Bytes>()); };
  bool sent = append_item(links_[self_link], copy, item_size<Bytes>(), rank_, rank_);
  sent |= forward_broadcast<Bytes>(item, rank_, -1);
  if (sent) after_send();
}

template <std::size_t Bytes, class Run>
void streamer_core::route_message(const std::byte* payload, const wire_header& h, int source, std::uint32_t& cursor,
                                  Run& run) {
  const std::byte* items = payload + sizeof(wire_header);
  const std::uint32_t n = h.items;
  if (!(h.flags & has_destinations)) {  // last hop: every item is for this PE, from `source`
    if (cursor < n) deliver_run(run, items, nullptr, source, cursor, n);  // a run is never empty
    return;
  }
  const auto* dests = reinterpret_cast<const std::int32_t*>(payload + destinations_offset(n));
  if (h.flags & has_sources) {
    route_items<Bytes, true>(items, dests, reinterpret_cast<const std::int32_t*>(payload + sources_offset(n)), h,
                             source, cursor, run);
  } else {
    route_items<Bytes, false>(items, dests, nullptr, h, source, cursor, run);
  }
}

// Item i came from sources[i] (Sources; checked on arrival) or from the message's `source`.
template <std::size_t Bytes, bool Sources, class Run>
void streamer_core::route_items(const std::byte* items, const std::int32_t* dests, const std::int32_t* sources,
                                const wire_header& h, int source, std::uint32_t& cursor, Run& run) {
  const std::uint32_t n = h.items;
  const std::size_t bytes = item_size<Bytes>();
  while (cursor < n) {
    const std::uint32_t i = cursor;
    const int dest = dests[i];
    if (dest == rank_) {  // a run of items for this PE: one call
      std::uint32_t end = i + 1;
      while (end < n && dests[end] == rank_) ++end;
      deliver_run(run, items, sources, source, cursor, end);
    } else if (dest >= 0) {  // destinations were checked against the job's size on arrival
      ++cursor;
      ++stats_.items_forwarded;
      const std::byte* item = items + std::size_t{i} * bytes;
      auto copy = [item, bytes](std::byte* slot) { std::memcpy(slot, item, bytes); };
      append_item(link_for(dest), copy, bytes, dest, Sources ? static_cast<int>(sources[i]) : source);
    } else {  // a broadcast (checked: only a front end that broadcasts receives one)
      ++stats_.items_forwarded;  // forwarded first: a callback's exception must not cut the tree
      const int root = -(dest + 1);
      forward_broadcast<Bytes>(items + std::size_t{i} * bytes, root, h.phase);
      deliver_run(run, items, nullptr, root, cursor, i + 1);
    }
  }
}

}  // namespace transit::detail
