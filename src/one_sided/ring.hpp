#pragma once
// Private to src/one_sided: a single-producer, single-consumer ring of variable-size records in
// memory shared by the PEs of a node (threads of one process, or processes through an MPI shared
// window: the positions are lock-free atomics, which work across processes). In helper mode each
// PE owns two in its shared part: requests to the helper and replies from it.
//
// Layout: ring_control, then `capacity` bytes (a multiple of 8). A record is an 8-byte header (its
// payload size) and the payload, padded to 8; a record never wraps: when it does not fit before
// the end, a wrap marker fills the rest. Any record up to capacity / 2 fits an empty ring.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

namespace transit::detail {

struct ring_control {
  alignas(64) std::atomic<std::uint64_t> head{0};  // consumer position (bytes, ever increasing)
  alignas(64) std::atomic<std::uint64_t> tail{0};  // producer position
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "rings need address-free atomics");

/// One side's view of a ring; the producer and the consumer each keep their own.
class byte_ring {
 public:
  static constexpr std::size_t control_bytes = sizeof(ring_control);

  byte_ring() = default;
  byte_ring(std::byte* at, std::size_t capacity)
      : control_(std::launder(reinterpret_cast<ring_control*>(at))), data_(at + control_bytes), capacity_(capacity) {}
  /// Constructs the control block at `at` (by the owner, before anyone else looks at it).
  static void create(std::byte* at) { new (at) ring_control(); }

  /// Producer: appends one record made of `a` then `b`; false when there is no room now.
  bool push(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) noexcept {
    const std::uint64_t size = a_bytes + b_bytes;
    const std::uint64_t need = header_bytes + padded(size);
    std::uint64_t tail = control_->tail.load(std::memory_order_relaxed);
    std::uint64_t position = tail % capacity_;
    const std::uint64_t to_end = capacity_ - position;
    const std::uint64_t total = need <= to_end ? need : to_end + need;
    if (capacity_ - (tail - cached_head_) < total) {
      cached_head_ = control_->head.load(std::memory_order_acquire);
      if (capacity_ - (tail - cached_head_) < total) return false;
    }
    if (need > to_end) {
      std::memcpy(data_ + position, &wrap_marker, header_bytes);
      tail += to_end;
      position = 0;
    }
    std::memcpy(data_ + position, &size, header_bytes);
    if (a_bytes > 0) std::memcpy(data_ + position + header_bytes, a, a_bytes);
    if (b_bytes > 0) std::memcpy(data_ + position + header_bytes + a_bytes, b, b_bytes);
    control_->tail.store(tail + need, std::memory_order_release);
    return true;
  }

  /// Consumer: calls f(record, bytes) for each record in order until f returns false (that record
  /// stays for next time). Returns whether any record was consumed.
  template <class F>
  bool drain(F&& f) {
    std::uint64_t head = control_->head.load(std::memory_order_relaxed);
    const std::uint64_t tail = control_->tail.load(std::memory_order_acquire);
    bool consumed = false;
    while (head != tail) {
      const std::uint64_t position = head % capacity_;
      std::uint64_t size = 0;
      std::memcpy(&size, data_ + position, header_bytes);
      if (size == wrap_marker) {
        head += capacity_ - position;
        continue;
      }
      if (!f(data_ + position + header_bytes, static_cast<std::size_t>(size))) break;
      head += header_bytes + padded(size);
      consumed = true;
    }
    control_->head.store(head, std::memory_order_release);
    return consumed;
  }

  bool empty() const noexcept {
    return control_->head.load(std::memory_order_acquire) == control_->tail.load(std::memory_order_acquire);
  }

 private:
  static constexpr std::uint64_t header_bytes = 8;
  static constexpr std::uint64_t wrap_marker = ~std::uint64_t{0};
  static constexpr std::uint64_t padded(std::uint64_t n) noexcept { return (n + 7) & ~std::uint64_t{7}; }

  ring_control* control_ = nullptr;
  std::byte* data_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t cached_head_ = 0;  // producer's last look at head
};

}  // namespace transit::detail
