#pragma once
// The parts of active_messages that do not depend on one object: how a call's arguments are
// classified and laid out as bytes (the call's record), how handlers get ids that agree on every
// PE, and how function pointers travel. The design is set out at the top of active_messages.hpp.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "transit/detail/core/error.hpp"
#include "transit/detail/streamer/core.hpp"

namespace transit {
class active_messages;
}

namespace transit::detail {

// ---- argument kinds: what travels ----

/// Defined by tests only (tests/active/wire_fuzz_test.cpp): reaches an active_messages' streamers.
struct active_messages_test_access;

/// A string argument (std::string, std::string_view, a literal, anything that converts to
/// std::string_view); the handler receives a wire_string.
struct text_arg {};
/// An array argument (std::vector<T>, std::span<T>); the handler receives a wire_array<T>.
template <class T>
struct array_arg {
  using element = T;
};
/// An argument that cannot travel (the static_assert in async names the rule).
template <class A>
struct invalid_arg {};

template <class T>
struct is_std_vector : std::false_type {};
template <class T, class Alloc>
struct is_std_vector<std::vector<T, Alloc>> : std::true_type {};

template <class A>
concept span_like = requires { typename A::element_type; } &&
                    std::is_convertible_v<const A&, std::span<const typename A::element_type>>;

template <class A>
constexpr auto kind_of() {
  if constexpr (std::is_same_v<A, std::nullptr_t> || std::is_same_v<A, std::vector<bool>>) {
    return std::type_identity<invalid_arg<A>>{};
  } else if constexpr (std::is_convertible_v<const A&, std::string_view>) {
    return std::type_identity<text_arg>{};
  } else if constexpr (is_std_vector<A>::value) {
    using T = typename A::value_type;
    if constexpr (std::is_trivially_copyable_v<T>) return std::type_identity<array_arg<T>>{};
    else return std::type_identity<invalid_arg<A>>{};
  } else if constexpr (span_like<A>) {
    using T = std::remove_cv_t<typename A::element_type>;
    if constexpr (std::is_trivially_copyable_v<T>) return std::type_identity<array_arg<T>>{};
    else return std::type_identity<invalid_arg<A>>{};
  } else if constexpr (std::is_trivially_copyable_v<A> && !std::is_pointer_v<A> && !std::is_member_pointer_v<A>) {
    return std::type_identity<A>{};  // a scalar: its bytes travel
  } else {
    return std::type_identity<invalid_arg<A>>{};
  }
}

/// What an argument of type Arg travels as: text_arg, array_arg<T>, the scalar type itself, or
/// invalid_arg. Calls of one handler with std::string or a literal, or with a vector or a span,
/// share one wire form (and one handler id).
template <class Arg>
using wire_kind_t = typename decltype(kind_of<std::remove_cvref_t<Arg>>())::type;

template <class K>
inline constexpr bool is_invalid_kind = false;
template <class A>
inline constexpr bool is_invalid_kind<invalid_arg<A>> = true;
template <class K>
inline constexpr bool is_array_kind = false;
template <class T>
inline constexpr bool is_array_kind<array_arg<T>> = true;
template <class K>
inline constexpr bool is_scalar_kind = !is_invalid_kind<K> && !is_array_kind<K> && !std::is_same_v<K, text_arg>;

// ---- what the handler receives ----

/// A string argument as a handler receives it: a view of the received bytes, valid during the
/// call, that also converts to std::string (for handlers taking std::string or const std::string&).
class wire_string : public std::string_view {
 public:
  explicit wire_string(std::string_view text) noexcept : std::string_view(text) {}
  operator std::string() const { return std::string(data(), size()); }
};

/// An array argument as a handler receives it: a view valid during the call, that also converts
/// to std::vector<T>.
template <class T>
class wire_array : public std::span<const T> {
 public:
  explicit wire_array(std::span<const T> items) noexcept : std::span<const T>(items) {}
  operator std::vector<T>() const { return std::vector<T>(this->begin(), this->end()); }
};

template <class K>
struct view_of {
  using type = K&;
};
template <>
struct view_of<text_arg> {
  using type = wire_string&;
};
template <class T>
struct view_of<array_arg<T>> {
  using type = wire_array<T>&;
};

/// True when `handler(am, args...)` compiles for arguments travelling as K...
template <class H, class... K>
inline constexpr bool callable_with = std::is_invocable_v<H&, active_messages&, typename view_of<K>::type...>;

/// A function pointer, or an empty default-constructible function object (a captureless lambda):
/// something every PE can name without carrying state.
template <class H>
inline constexpr bool is_handler_type = (std::is_pointer_v<H> && std::is_function_v<std::remove_pointer_t<H>>) ||
                                        (std::is_class_v<H> && std::is_empty_v<H> &&
                                         std::is_default_constructible_v<H> && std::is_trivially_copyable_v<H>);

// ---- the record: a call as bytes ----
//
//   u32 handler id | u64 code reference (function-pointer handlers only) | arguments, in order
//   scalar: its bytes, unaligned
//   string: count | bytes
//   array:  count | zero padding to alignof(T), counted from the record's start | elements
//   count:  one byte below 255, else the byte 255 and 8 bytes

/// The wire form of a source argument: a string_view, a span, or the scalar itself.
template <class Arg>
decltype(auto) to_wire(const Arg& arg) {
  using K = wire_kind_t<Arg>;
  if constexpr (std::is_same_v<K, text_arg>) {
    if constexpr (std::is_pointer_v<Arg>) {
      return arg == nullptr ? std::string_view() : std::string_view(arg);
    } else {
      return std::string_view(arg);
    }
  } else if constexpr (is_array_kind<K>) {
    return std::span<const typename K::element>(arg.data(), arg.size());
  } else {
    return (arg);
  }
}

/// Record writers ("sinks") provide position() and bytes(data, n); these add the encodings.
template <class Sink>
void put_count(Sink& out, std::uint64_t n) {
  if (n < 255) {
    const auto small = static_cast<std::uint8_t>(n);
    out.bytes(&small, 1);
  } else {
    const std::uint8_t escape = 255;
    out.bytes(&escape, 1);
    out.bytes(&n, sizeof n);
  }
}
template <class Sink>
void put_padding(Sink& out, std::size_t align) {
  static constexpr std::byte zeros[16] = {};
  out.bytes(zeros, (align - out.position() % align) % align);
}
template <class Sink>
void put_arg(Sink& out, std::string_view text) {
  put_count(out, text.size());
  out.bytes(text.data(), text.size());
}
template <class Sink, class T>
void put_arg(Sink& out, std::span<const T> items) {
  put_count(out, items.size());
  put_padding(out, alignof(T));
  out.bytes(items.data(), items.size_bytes());
}
template <class Sink, class T>
void put_arg(Sink& out, const T& scalar) {
  out.bytes(&scalar, sizeof scalar);
}

/// Counts a record's bytes.
class size_sink {
 public:
  std::size_t position() const noexcept { return size_; }
  void bytes(const void*, std::size_t n) noexcept { size_ += n; }

 private:
  std::size_t size_ = 0;
};

/// Writes a record into contiguous memory of `capacity` bytes, which the record fits (its size was
/// counted first; the check also tells the compiler so).
class flat_sink {
 public:
  flat_sink(std::byte* out, std::size_t capacity) noexcept : start_(out), next_(out), end_(out + capacity) {}
  std::size_t position() const noexcept { return static_cast<std::size_t>(next_ - start_); }
  void bytes(const void* data, std::size_t n) {
    TRANSIT_ASSERT(n <= static_cast<std::size_t>(end_ - next_), "a call's record outgrew the size counted for it");
    if (n != 0) std::memcpy(next_, data, n);
    next_ += n;
  }

 private:
  std::byte* start_;
  std::byte* next_;
  std::byte* end_;
};

/// Collects a record as pieces, to be read out chunk by chunk: small pieces (ids, counts, padding,
/// small scalars) copied, larger ones by address (the caller's arguments, valid during the call),
/// so that the payload is copied once, into the chunks.
class gather_sink {
 public:
  std::size_t position() const noexcept { return size_; }
  void bytes(const void* data, std::size_t n) {
    if (n == 0) return;
    if (n <= copied_piece_bytes) {
      const auto* from = static_cast<const std::byte*>(data);
      pieces_.push_back(piece{nullptr, scratch_.size(), n});
      // GCC 12 at -O3, once several pieces' sizes are constants, takes the vector's growth for an
      // overflow (-Wstringop-overflow / -Warray-bounds on the reallocation): a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
      scratch_.insert(scratch_.end(), from, from + n);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    } else {
      pieces_.push_back(piece{static_cast<const std::byte*>(data), 0, n});
    }
    size_ += n;
  }
  /// Copies the next (up to) `n` bytes of the record to `out`; returns how many.
  std::size_t read(std::byte* out, std::size_t n) {
    std::size_t done = 0;
    while (done < n && next_ < pieces_.size()) {
      const piece& p = pieces_[next_];
      const std::byte* from = p.external != nullptr ? p.external : scratch_.data() + p.scratch_offset;
      const std::size_t take = std::min(n - done, p.bytes - offset_);
      std::memcpy(out + done, from + offset_, take);
      done += take;
      offset_ += take;
      if (offset_ == p.bytes) {
        ++next_;
        offset_ = 0;
      }
    }
    return done;
  }

 private:
  static constexpr std::size_t copied_piece_bytes = 16;
  struct piece {
    const std::byte* external;  // null: in scratch_
    std::size_t scratch_offset;
    std::size_t bytes;
  };
  std::vector<piece> pieces_;
  std::vector<std::byte> scratch_;
  std::size_t size_ = 0;
  std::size_t next_ = 0;    // piece being read
  std::size_t offset_ = 0;  // within it
};

/// Reads a record; every length is checked against the record's size (a std::runtime_error that
/// active_messages reports as a corrupt call from the PE the call came from).
class record_reader {
 public:
  /// Reads the record at `data` (`size` bytes) from byte `start` on; alignment counts from `data`.
  record_reader(const std::byte* data, std::size_t size, std::size_t start) noexcept
      : data_(data), size_(size), position_(start) {}
  /// Throws (see above): a record of `size` bytes ends before `wanted` bytes at `at`. (Static,
  /// so that a reader does not escape to memory and stays in registers in dispatch loops.)
  [[noreturn]] static void truncated(std::size_t size, std::size_t at, std::uint64_t wanted);

  /// `Checked`: false when the caller has checked the record's size for every argument at once.
  template <class T, bool Checked = true>
  T scalar() {
    if constexpr (Checked) need(sizeof(T));
    T value;
    std::memcpy(static_cast<void*>(&value), data_ + position_, sizeof(T));
    position_ += sizeof(T);
    return value;
  }
  std::string_view text() {
    const std::uint64_t n = count();
    need(n);
    const std::string_view view(reinterpret_cast<const char*>(data_ + position_), n);
    position_ += n;
    return view;
  }
  /// A view of the array in place when its bytes are aligned for T; otherwise (records inside
  /// small items are not always aligned) a copy in `fallback`.
  template <class T>
  std::span<const T> array(std::vector<T>& fallback) {
    const std::uint64_t n = count();
    position_ += (alignof(T) - position_ % alignof(T)) % alignof(T);
    if (position_ > size_ || n > (size_ - position_) / sizeof(T)) truncated(size_, position_, n * sizeof(T));
    const std::byte* at = data_ + position_;
    position_ += n * sizeof(T);
    if (reinterpret_cast<std::uintptr_t>(at) % alignof(T) == 0)
      return std::span<const T>(reinterpret_cast<const T*>(at), n);
    fallback.resize(n);
    if (n != 0) std::memcpy(static_cast<void*>(fallback.data()), at, n * sizeof(T));
    return std::span<const T>(fallback.data(), n);
  }

 private:
  std::uint64_t count() {
    const auto first = scalar<std::uint8_t>();
    return first < 255 ? first : scalar<std::uint64_t>();
  }
  void need(std::uint64_t n) {
    if (position_ > size_ || n > size_ - position_) truncated(size_, position_, n);
  }

  const std::byte* data_;
  std::size_t size_;
  std::size_t position_;
};

/// One argument as the handler receives it: a scalar's copy, a wire_string, or a wire_array
/// (with the aligned copy it may need).
/// `Checked`: false when the caller checked the record's size for all arguments (only scalars).
template <class K, bool Checked>
struct arg_holder {
  explicit arg_holder(record_reader& in) : value(in.scalar<K, Checked>()) {}
  K& view() noexcept { return value; }
  K value;
};
template <bool Checked>
struct arg_holder<text_arg, Checked> {
  explicit arg_holder(record_reader& in) : value(in.text()) {}
  wire_string& view() noexcept { return value; }
  wire_string value;
};
template <class T, bool Checked>
struct arg_holder<array_arg<T>, Checked> {
  explicit arg_holder(record_reader& in) : value(in.array<T>(fallback)) {}
  arg_holder(arg_holder&& other) noexcept : fallback(std::move(other.fallback)), value(other.value) {}
  wire_array<T>& view() noexcept { return value; }
  std::vector<T> fallback;  // declared first: `value` may point into it (a vector's move keeps its storage)
  wire_array<T> value;
};

// ---- handler ids ----
//
// Every (handler type, argument kinds) pair used in an async call anywhere in the program has a
// handler_slot, whose `registered` member is initialised before main (or when its library is
// loaded), adding its entry to this process's table. The first active_messages constructed gives
// ids in the order of each entry's code address within its loaded object (an offset, which ASLR
// does not change, in an object named the same in every process of one binary): every PE of the
// same binary computes the same ids without a handshake, whatever order registration or first use
// happened in. Each construction checks, collectively, that every PE's table is the same.

/// Runs a call from its whole record (`bytes` long, the handler id first).
using handler_invoke = void (*)(active_messages& am, const std::byte* record, std::size_t bytes);
/// Runs the calls in consecutive call items of `stride` bytes from item `cursor` on, as long as
/// they name the same handler as that one; moves `cursor` past each before it runs (the streamer's
/// batch_deliver rule). One indirect call per run of calls, not per call.
using handler_run = void (*)(active_messages& am, const std::byte* items, std::size_t stride, std::uint32_t& cursor,
                             std::uint32_t n);

inline constexpr std::uint32_t no_handler_id = UINT32_MAX;      // not registered yet
inline constexpr std::uint32_t queued_handler_id = UINT32_MAX - 1;  // registered, id not given yet

struct handler_entry {
  handler_invoke invoke;
  handler_run run;
  std::string_view name;  // the handler_slot type, for messages
  std::atomic<std::uint32_t> id{no_handler_id};
};

/// Static initialisation: queues `entry` for an id (once, however often it is called).
bool register_handler(handler_entry& entry) noexcept;

/// This process's handler table: gives ids to entries queued since the last call and returns
/// every entry's invoke function by id, with a signature (count and code references) to compare
/// across PEs.
struct handler_table {
  std::vector<handler_invoke> invoke;
  std::vector<handler_run> run;
  std::vector<std::string_view> names;
  std::uint64_t signature = 0;
};
handler_table current_handlers();

/// Where a function's code is, as the same number in every process of one binary: a hash of its
/// loaded object's file name (empty for the executable) and the offset within that object.
/// Throws std::invalid_argument for an address in no loaded object.
std::uint64_t code_reference(std::uintptr_t address);
/// The address of `reference` in this process; throws std::runtime_error unless it is code of a
/// loaded object here.
std::uintptr_t code_address(std::uint64_t reference);

/// A map that keeps its last lookup at hand: code references are looked up once per call, and
/// consecutive calls mostly name the same function.
template <class Key, class Value>
class recent_map {
 public:
  template <class Compute>
  Value get(Key key, Compute&& compute) {
    if (has_last_ && key == last_key_) return last_value_;
    auto it = map_.find(key);
    if (it == map_.end()) it = map_.emplace(key, compute(key)).first;
    last_key_ = key;
    last_value_ = it->second;
    has_last_ = true;
    return last_value_;
  }

 private:
  std::unordered_map<Key, Value> map_;
  bool has_last_ = false;
  Key last_key_{};
  Value last_value_{};
};

/// Dispatch of a handler type with arguments travelling as K...: reads the arguments from the
/// record and calls the handler (defined in active_messages.hpp).
template <class H, class... K>
struct handler_slot {
  /// Reads the arguments and calls the handler; inlined into run's loop (defined in
  /// active_messages.hpp).
  [[gnu::always_inline]] static inline void call(active_messages& am, const std::byte* record, std::size_t bytes);
  static void invoke(active_messages& am, const std::byte* record, std::size_t bytes) { call(am, record, bytes); }
  static void run(active_messages& am, const std::byte* items, std::size_t stride, std::uint32_t& cursor,
                  std::uint32_t n) {
    std::uint32_t id;
    std::memcpy(&id, items + std::size_t{cursor} * stride, sizeof id);
    std::uint32_t i = cursor;  // in a register; written back on an exception and at the end
    try {
      do {
        const std::byte* record = items + std::size_t{i} * stride;
        set_call_index(am, i++);  // for caller()
        call(am, record, stride);
      } while (i < n && std::memcmp(items + std::size_t{i} * stride, &id, sizeof id) == 0);
    } catch (...) {
      cursor = i;
      throw;
    }
    cursor = i;
  }
  static inline handler_entry entry{&invoke, &run, type_name<handler_slot>()};
  /// Defined in active_messages.hpp, which this header precedes.
  static void set_call_index(active_messages& am, std::uint32_t i);
  static inline const bool registered = register_handler(entry);
};

// ---- the items the streamers carry ----

/// Sizes of the fixed-size items small calls travel in (bytes, record included). A call goes in
/// the smallest that holds its record; a larger record travels in chunks.
inline constexpr std::size_t call_classes[] = {8, 12, 16, 24, 32, 48, 64, 128, 256};
inline constexpr std::size_t num_call_classes = std::size(call_classes);
inline constexpr std::size_t largest_call = call_classes[num_call_classes - 1];

constexpr std::size_t call_class_of(std::size_t record_bytes) {
  std::size_t c = 0;
  while (call_classes[c] < record_bytes) ++c;
  return c;
}

template <std::size_t Bytes>
struct call_cell {
  alignas(4) std::byte bytes[Bytes];
};

/// A piece of a record too large for a call_cell. Chunks of one call follow one route, so they
/// arrive in order (the streamer delivers items from one PE to another in insertion order); the
/// offset lets the destination check that.
struct chunk_header {
  std::uint64_t total;     // bytes of the whole record
  std::uint64_t offset;    // of this chunk's first byte within the record
  std::uint32_t source;    // the PE that made the call
  std::uint32_t sequence;  // the source's count of chunked calls; top bit: broadcast
};
inline constexpr std::size_t chunk_bytes = 1024;
inline constexpr std::size_t chunk_data_bytes = chunk_bytes - sizeof(chunk_header);
inline constexpr std::uint32_t broadcast_sequence_bit = 0x8000'0000u;

struct chunk_cell {
  chunk_header header;
  std::byte data[chunk_data_bytes];
};
static_assert(sizeof(chunk_cell) == chunk_bytes);

/// Records of at least this many bytes (to one PE, not broadcast) travel as one transport message
/// of their own instead of in chunks: 4 buffers of the chunk streamer at the default buffer_items
/// (16 chunks of 1 KiB each). Chunking such a record costs three passes over it (into the chunks,
/// the transport, the reassembly) and at least 4 messages anyway; a message of its own costs one
/// pass at the source (the record written into the message), the transport's, and none at the
/// destination, where the handler reads the received message.
inline constexpr std::size_t large_call_bytes = std::size_t{64} << 10;

/// The start of a large call's message; the record follows at large_header_bytes, as aligned as
/// the message payload (64), so arrays in it are read in place.
struct large_call_header {
  std::uint64_t record_bytes;
  std::uint32_t step;  // the sender's count of barriers ended: a PE still in that barrier waits for it
  std::uint32_t reserved;
};
inline constexpr std::size_t large_header_bytes = 64;
static_assert(sizeof(large_call_header) <= large_header_bytes);

}  // namespace transit::detail
