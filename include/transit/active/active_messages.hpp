#pragma once
// active_messages: asynchronous calls with automatic aggregation, YGM style, on the streamer (TRAM
// thesis 6.2, the `aggregate` attribute; 7.1.2, arrays in chunks). `async(dest, handler, args...)`
// runs handler(am, args...) on PE dest; barrier() returns once every call, nested ones included,
// has run everywhere.
//
// Streamers. A streamer's construction is collective and checked across PEs, while async is a
// local call: a streamer cannot be created at the first call of some (handler, argument types) on
// one PE, because the other PEs would not construct it, or would construct theirs in another
// order. One streamer per pair made up front would be collective, but would grow with every
// handler in the binary, used or not (each a channel, a collective group, an MPI communicator, a
// construction round, and one more streamer for every barrier to poll). So the constructor builds
// a fixed set, the same on every PE:
//   - 9 streamers of fixed-size call items of 8, 12, 16, 24, 32, 48, 64, 128 and 256 bytes. A
//     call whose record (below) fits goes whole in the smallest that holds it: no allocation, one
//     copy into a buffer at the source and one per hop, and the handler reads it in the received
//     buffer.
//   - 1 streamer of 1 KiB chunks (24-byte header, 1000 bytes of record) for larger records, of any
//     size. Chunks of one call follow one route and arrive in order; the destination copies each
//     into the record's buffer (allocated at the first chunk) and runs the handler when the last
//     arrives. A record that fits one chunk is read in place. Chunks of different calls may
//     interleave (a handler run while a call is being chunked may make calls of its own): they
//     are told apart by (source PE, the source's call sequence number).
//   - Records of at least detail::large_call_bytes (64 KiB) to one PE skip the chunks: each is
//     written once into a transport message of its own (large_calls, on a channel of this
//     object's) and the handler reads it in the received message. Chunking that much costs three
//     passes over it (chunks, transport, reassembly); this costs the write and the transport's.
//     Broadcasts stay chunked (a message owns its buffer: one per PE would mean one copy per PE).
// Every streamer gets the options passed in; buffer_items is the capacity of buffers of calls up
// to 16 bytes, and buffers of larger items hold the same bytes (at least one item), so a 256-byte
// class or the chunk streamer does not hold 16 times the memory.
//
// Record of a call (detail/calls.hpp): u32 handler id | u64 code reference (function pointers
// only) | each argument: a scalar's bytes; a string's count and bytes; an array's count, padding
// to the element's alignment and elements. Counts take 1 byte below 255, else 9.
//
// Handler ids, identical on every PE without a handshake. Every (handler type, argument kinds)
// used in an async anywhere in the program registers itself during static initialisation (a
// template's static member), not at first use, whose order would differ between PEs. The first
// active_messages gives ids in the order of each handler's dispatch code within its loaded object
// (an offset there, which ASLR does not change, in an object named alike in every process of one
// binary). Function pointers travel as such a reference too (a captureless lambda is its own
// type and needs none). Every construction compares the tables of all PEs, collectively: a
// mismatch (different binaries, libraries loaded in different orders) throws std::logic_error on
// every PE before any call moves.
//
// Termination: barrier() quiesces all the object's streamers at once, with one wave protocol over
// all of them and the large calls' channel (detail::streamer_group, which also polls the transport
// once for all of them): a call made by a handler delivered through one streamer may travel in
// another, so no streamer alone can tell that the work is done. A large call carries its sender's
// count of barriers, and one from a PE already past the barrier this PE is in waits for this PE
// to get there. Calls are not ordered with respect to each other (they travel on different
// channels); only the chunks of one call are.
//
// Re-entrancy: handlers run on the destination's own thread, only inside async, async_broadcast,
// progress and barrier. A handler may call async and async_broadcast (buffered; nested delivery is
// bounded by the number of streamers) and progress (a no-op there); barrier from a handler throws
// std::logic_error.
//
// Exceptions: one thrown by a handler propagates out of the call that ran it (async,
// async_broadcast, progress or barrier); every other call still runs exactly once, and a barrier
// so interrupted resumes when called again. Uncaught, it ends the job with the PE named
// ("transit: PE <r>: <what>", by transit::run). A call being chunked when a handler throws is
// still sent whole; should another handler throw before its last chunk is out, that exception
// comes out of the next progress() or barrier() (one per call, none lost).
//
// Life cycle: construction and destruction are collective, as for streamers. Destroyed with calls
// made since its last barrier(), the object ends the job with a message saying so.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
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
/// design (streamers by call size, chunks, large calls, handler ids) is set out at the top of
/// this header and in docs/active_messages.md.
class active_messages {
 public:
  /// Collective: every PE constructs its active_messages (and streamers) in the same order with
  /// equal options. Default: a node x PE grid (virtual_grid::node_pe), grid routing. Throws
  /// std::invalid_argument for bad options (as streamer does), std::logic_error when the PEs'
  /// handler tables differ (not the same binary).
  explicit active_messages(context& ctx, streamer_options options = {});
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
  void async(int dest, Handler handler, Args&&... args) {
    if (check_call<Handler, Args...>()) {
      if (static_cast<unsigned>(dest) >= static_cast<unsigned>(size_)) [[unlikely]]
        throw_bad_destination(dest);
      send_call<Handler, detail::wire_kind_t<Args>...>(dest, handler, detail::to_wire(args)...);
    }
  }

  /// Local. Runs handler(am, args...) once on every PE, this one included, the copies travelling
  /// along a spanning tree of the grid (one per link of the tree, not size() - 1 sends).
  template <class Handler, class... Args>
  void async_broadcast(Handler handler, Args&&... args) {
    if (check_call<Handler, Args...>())
      send_call<Handler, detail::wire_kind_t<Args>...>(broadcast_dest, handler, detail::to_wire(args)...);
  }

  /// Local: the PE this object belongs to (handlers reach their PE's context through it).
  context& ctx() noexcept { return ctx_; }

  /// Collective: returns when every call made anywhere before it, and every call those made in
  /// turn, has run; the object is then ready for more calls. A handler's exception comes out of
  /// it, and calling it again resumes. Throws std::logic_error from a handler.
  void barrier();

  /// Local, non-blocking: runs the handlers of arrived calls and forwards what passes through.
  /// Returns whether anything happened; false (and does nothing) from a handler. A handler's
  /// exception comes out of it.
  bool progress();

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
  static constexpr bool check_call() {
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
  void send_call(int dest, H handler, const W&... wire) {
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

  /// Sends a record of at least detail::large_call_bytes as one transport message of its own: the
  /// record is written once, straight from the caller's arguments, into the message, and the
  /// destination's handler reads it there.
  template <class Write>
  void send_large(int dest, std::size_t bytes, const Write& write) {
    detail::message_buffer message = large_->allocate(bytes);
    detail::flat_sink out(message.payload() + detail::large_header_bytes, bytes);
    write(out);
    large_->send(dest, std::move(message), bytes);
  }

  template <std::size_t C, class Write>
  void send_small(int dest, const Write& write) {
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
  static void with_class(std::size_t c, F&& f, std::index_sequence<I...>) {
    static_cast<void>(((c == I ? (f.template operator()<I>(), true) : false) || ...));
  }
  template <class F>
  static void with_class(std::size_t c, F&& f) {
    with_class(c, std::forward<F>(f), std::make_index_sequence<detail::num_call_classes>());
  }

  /// Sends a record too large for a call item as chunks, each filled in the buffer straight from
  /// the caller's arguments. A handler's exception raised while a chunk is sent (the streamer
  /// polls when a buffer fills) is kept until the last chunk is out: a call is never sent in part.
  /// Should further handlers throw meanwhile, their exceptions wait for the next progress() or
  /// barrier(): none is lost.
  template <class Write>
  void send_chunked(int dest, const Write& write) {
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

  /// Runs the call whose record (handler id first) is at `record`, `bytes` long.
  void dispatch(const std::byte* record, std::size_t bytes) {
    std::uint32_t id;
    std::memcpy(&id, record, sizeof id);
    if (id >= handlers_.invoke.size()) [[unlikely]]
      refresh_handlers(id);
    handlers_.invoke[id](*this, record, bytes);
  }

  /// Runs the calls in items[cursor, n) of one call class (the streamer's batch_deliver rule), one
  /// run of calls to the same handler at a time.
  template <std::size_t Bytes>
  void dispatch_items(const detail::call_cell<Bytes>* items, std::uint32_t& cursor, std::uint32_t n) {
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

  void receive_chunk(const detail::chunk_cell& cell);
  void rethrow_later_error();
  void refresh_handlers(std::uint32_t id);
  void check_same_handlers_everywhere();
  [[noreturn]] void throw_bad_destination(int dest) const;
  [[noreturn]] static void throw_unknown_handler(const detail::handler_entry& entry);
  std::uint64_t code_reference_of(std::uintptr_t address) { return references_.get(address, detail::code_reference); }
  std::uintptr_t code_address_of(std::uint64_t reference) { return addresses_.get(reference, detail::code_address); }

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
  std::uint64_t inserted_at_barrier_ = 0;  // items (calls, chunks) inserted as the last barrier returned
  std::uint32_t next_sequence_ = 0;
  std::unordered_map<std::uint64_t, partial_record> partial_;  // (source, sequence) -> record
  // Code references of function-pointer handlers, both ways.
  detail::recent_map<std::uintptr_t, std::uint64_t> references_;
  detail::recent_map<std::uint64_t, std::uintptr_t> addresses_;
};

}  // namespace transit

// The handler slots' call, which needs active_messages complete.
#include "transit/detail/active/handler_call.hpp"
