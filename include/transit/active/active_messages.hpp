#pragma once
// active_messages: asynchronous calls with automatic aggregation, YGM style, on the streamer (TRAM
// thesis 6.2, the `aggregate` attribute; 7.1.2, arrays in chunks). This header is the contract;
// the design (streamers by call size, chunks, large calls, handler ids, termination) is set out in
// docs/active_messages.md, and the templates' bodies are in detail/active/active_messages_impl.hpp.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "transit/detail/active/calls.hpp"
#include "transit/runtime/context.hpp"
#include "transit/streamer/options.hpp"
#include "transit/streamer/streamer.hpp"

namespace transit {

/// Asynchronous calls with automatic aggregation: async(dest, handler, args...) runs
/// handler(am, args...) once on PE `dest`, on that PE's own thread, only inside its async,
/// async_broadcast, progress or barrier; barrier() returns once every call, nested ones included,
/// has run everywhere. Handlers are function pointers or captureless lambdas; arguments are
/// scalars, strings or vectors of any size. A handler may call async, async_broadcast and progress
/// (a no-op there); barrier from a handler throws std::logic_error. A handler's exception leaves
/// the call that ran it; every other call still runs exactly once. Construction and destruction
/// are collective (destroyed with calls made since its last barrier, it ends the job). The
/// design (streamers by call size, chunks, large calls, handler ids) is set out in
/// docs/active_messages.md.
class active_messages {
 public:
  /// Tag of the constructor whose handlers may ask caller().
  struct with_callers_t {
    explicit with_callers_t() = default;
  };
  /// Pass to the constructor for handlers that ask caller().
  static constexpr with_callers_t with_callers{};

  /// Collective: every PE constructs its active_messages (and streamers) in the same order with
  /// equal options. Default: a node x PE grid (virtual_grid::node_pe), grid routing. Throws
  /// std::invalid_argument for bad options (as streamer does), std::logic_error when the PEs'
  /// handler tables differ (not the same binary).
  explicit active_messages(context& ctx, streamer_options options = {});
  /// Collective, as above, for handlers that ask caller(): calls routed through intermediate PEs
  /// carry the PE that made them (4 bytes per call on those hops only). Every PE constructs its
  /// object the same way (else std::logic_error on every PE).
  active_messages(context& ctx, streamer_options options, with_callers_t);
  /// Collective: after barrier() returned on every PE, with no call made since.
  ~active_messages();
  active_messages(const active_messages&) = delete;
  active_messages& operator=(const active_messages&) = delete;

  /// Local. Runs handler(am, args...) once on PE `dest`, with am the destination's object. The
  /// handler is a function pointer or a captureless lambda; args are trivially copyable (not
  /// pointers), strings, or vectors or spans of trivially copyable elements, of any size. The
  /// handler takes a string as std::string or std::string_view, an array as std::vector<T> or
  /// std::span<const T> (views valid during the call). May run handlers of arrived calls. Throws
  /// std::out_of_range for dest outside [0, size()).
  template <class Handler, class... Args>
  void async(int dest, Handler handler, Args&&... args);

  /// Local. Runs handler(am, args...) once on every PE, this one included, the copies travelling
  /// along a spanning tree of the grid (one per link of the tree, not size() - 1 sends).
  template <class Handler, class... Args>
  void async_broadcast(Handler handler, Args&&... args);

  /// Local: the PE this object belongs to (handlers reach their PE's context through it).
  context& ctx() noexcept { return ctx_; }

  /// Collective: returns when every call made anywhere before it, and every call those made in
  /// turn, has run; the object is then ready for more calls. A handler's exception comes out of
  /// it, and calling it again resumes. Throws std::logic_error from a handler.
  void barrier();

  /// Local, non-blocking: runs the handlers of arrived calls and forwards what passes through.
  /// Returns whether anything happened; false (and does nothing) from a handler. A handler's
  /// exception comes out of it. Polls the network as streamer::progress does: once per 512 calls
  /// made since its last poll, every time when none was made since the previous progress().
  bool progress();

  /// Local, from a handler of an object constructed with_callers: the PE that made the running
  /// call (this PE for its own). Throws std::logic_error outside a handler or without with_callers.
  int caller() const {
    if (caller_source_ < 0 && caller_sources_ == nullptr) [[unlikely]]
      throw_no_caller();
    return caller_sources_ != nullptr ? caller_sources_[call_index_] : caller_source_;
  }

  /// Local: this PE's counters summed over the object's streamers (items are calls and chunks).
  streamer_stats stats() const;

 private:
  template <class H, class... K>
  friend struct detail::handler_slot;
  friend struct detail::active_messages_test_access;  // tests/active: forged calls

  static constexpr int broadcast_dest = -1;

  template <std::size_t... I>
  static auto call_streamers_type(std::index_sequence<I...>)
      -> std::tuple<std::optional<streamer<detail::call_cell<detail::call_classes[I]>>>...>;
  using call_streamers = decltype(call_streamers_type(std::make_index_sequence<detail::num_call_classes>()));

  /// The static checks of a call, each with its own message; true when it may be compiled.
  template <class Handler, class... Args>
  static constexpr bool check_call();
  /// Writes the call's record and sends it by its size: a call class, a large call or chunks.
  template <class H, class... K, class... W>
  void send_call(int dest, H handler, const W&... wire);
  /// Sends a record of at least detail::large_call_bytes as one transport message of its own: the
  /// record is written once, straight from the caller's arguments, into the message, and the
  /// destination's handler reads it there.
  template <class Write>
  void send_large(int dest, std::size_t bytes, const Write& write);
  /// Writes the record straight into a buffer of call class C (zero-padded to its size).
  template <std::size_t C, class Write>
  void send_small(int dest, const Write& write);
  /// f.template operator()<C>() for the call class c known only at run time.
  template <class F, std::size_t... I>
  static void with_class(std::size_t c, F&& f, std::index_sequence<I...>);
  template <class F>
  static void with_class(std::size_t c, F&& f);
  /// Sends a record too large for a call item as chunks, each filled in the buffer straight from
  /// the caller's arguments. A handler's exception raised while a chunk is sent (the streamer
  /// polls when a buffer fills) is kept until the last chunk is out: a call is never sent in part.
  /// Should further handlers throw meanwhile, their exceptions wait for the next progress() or
  /// barrier(): none is lost.
  template <class Write>
  void send_chunked(int dest, const Write& write);
  /// Runs the call whose record (handler id first) is at `record`, `bytes` long.
  void dispatch(const std::byte* record, std::size_t bytes);
  /// dispatch, for a call made by PE `source` (chunked and large calls).
  void dispatch_from(int source, const std::byte* record, std::size_t bytes);
  /// Runs the calls in items[cursor, n) of one call class (the streamer's batch_deliver rule), one
  /// run of calls to the same handler at a time.
  template <std::size_t Bytes>
  void dispatch_items(const detail::call_cell<Bytes>* items, std::uint32_t& cursor, std::uint32_t n);
  /// Constructs call class I's streamer (and adds it to together_), its deliveries recording
  /// their callers when `callers`.
  active_messages(context& ctx, const streamer_options& options, bool callers);
  template <std::size_t I>
  void make_call_streamer(context& ctx, const streamer_options& options, bool callers);
  /// Runs `f` with caller() answering sources[i] (call i of the run) or `source`.
  template <class F>
  void with_caller(const std::int32_t* sources, int source, F&& f);
  [[noreturn]] void throw_no_caller() const;

  void receive_chunk(const detail::chunk_cell& cell);
  void rethrow_later_error();
  void refresh_handlers(std::uint32_t id);
  void check_same_handlers_everywhere();
  [[noreturn]] void throw_bad_destination(int dest) const;
  [[noreturn]] static void throw_unknown_handler(const detail::handler_entry& entry);
  std::uint64_t code_reference_of(std::uintptr_t address);
  std::uintptr_t code_address_of(std::uint64_t reference);

  /// Calls whose record is at least detail::large_call_bytes, each one transport message of its own
  /// on a channel of this object's. A member of together_, which polls it with the streamers and
  /// counts its messages in the same quiescence waves: barrier() returns only once every large call
  /// has been handled, calls made by its handler included.
  class large_calls final : public detail::group_endpoint {
   public:
    explicit large_calls(active_messages& am);  // opens the channel: collective, like a streamer
    ~large_calls();
    large_calls(const large_calls&) = delete;
    large_calls& operator=(const large_calls&) = delete;

    /// A message with room for the header and a record of `record_bytes`.
    detail::message_buffer allocate(std::size_t record_bytes);
    /// Sends `message`, whose record (`record_bytes`) is written; adds the header.
    void send(int dest, detail::message_buffer&& message, std::size_t record_bytes);
    bool poll_queued() override;
    std::uint64_t messages_sent() const noexcept override { return sent_; }
    std::uint64_t messages_received() const noexcept override { return received_; }
    bool in_callback() const noexcept override { return in_callback_; }
    std::uint64_t bytes_sent() const noexcept { return bytes_sent_; }

   private:
    detail::large_call_header checked_header(const detail::message& m) const;

    active_messages& am_;
    std::uint32_t channel_;
    // Taken from the mailbox, in arrival order: [0, held_) are calls of the next step (sent by a PE
    // already past the barrier this PE is still in), kept for it; [held_, next_) are handled;
    // [next_, size) are still to look at (after a handler threw, the next poll resumes there).
    std::vector<detail::message> arrived_;
    std::size_t held_ = 0;
    std::size_t next_ = 0;
    std::uint64_t sent_ = 0;
    std::uint64_t received_ = 0;
    std::uint64_t bytes_sent_ = 0;
    bool in_callback_ = false;
  };

  /// A chunked record being received.
  struct partial_record {
    std::unique_ptr<std::byte, void (*)(void*)> data{nullptr, nullptr};
    std::uint64_t received = 0;
  };

  context& ctx_;
  const int rank_;
  const int size_;
  detail::streamer_group together_;  // all the streamers below: one poll, one quiescence
  std::unique_ptr<detail::collective_group> group_;
  call_streamers calls_;
  std::optional<streamer<detail::chunk_cell>> chunks_;
  std::optional<large_calls> large_;
  detail::handler_table handlers_;
  std::vector<std::exception_ptr> later_errors_;  // handlers' exceptions still to report, oldest first
  // caller(): the running call's index in its run, the run's sources (null: all from
  // caller_source_), or -1 and null outside a handler or without with_callers.
  const bool callers_;
  const std::int32_t* caller_sources_ = nullptr;
  int caller_source_ = -1;
  std::uint32_t call_index_ = 0;
  std::uint64_t inserted_at_barrier_ = 0;  // items (calls, chunks) inserted as the last barrier returned
  std::uint32_t next_sequence_ = 0;
  std::unordered_map<std::uint64_t, partial_record> partial_;  // (source, sequence) -> record
  // Code references of function-pointer handlers, both ways.
  detail::recent_map<std::uintptr_t, std::uint64_t> references_;
  detail::recent_map<std::uint64_t, std::uintptr_t> addresses_;
};

}  // namespace transit

// The templates' bodies and the handler slots' call, which need active_messages complete.
#include "transit/detail/active/active_messages_impl.hpp"
