#pragma once
// A message buffer: one aligned allocation holding a small prefix reserved for the transport and
// then the payload. Ownership moves with send(): the local transport hands the same memory to the
// receiving thread, so payload bytes are written once at the sender and never copied in between.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace transit::detail {

class message_buffer {
 public:
  /// Bytes before the payload reserved for the transport (channel and size on the wire).
  static constexpr std::size_t prefix_bytes = 16;
  /// Payloads start at this alignment, enough for any item type the streamer accepts.
  static constexpr std::size_t alignment = 64;

  message_buffer() noexcept = default;
  explicit message_buffer(std::size_t payload_capacity) : capacity_(payload_capacity) {
    // The prefix sits in the last bytes of the first cache line so the payload is aligned.
    base_ = static_cast<std::byte*>(std::aligned_alloc(alignment, alignment + round_up(payload_capacity)));
    if (base_ == nullptr) throw std::bad_alloc();
  }
  message_buffer(message_buffer&& other) noexcept
      : base_(std::exchange(other.base_, nullptr)),
        capacity_(std::exchange(other.capacity_, 0)),
        size_(std::exchange(other.size_, 0)) {}
  message_buffer& operator=(message_buffer&& other) noexcept {
    if (this != &other) {
      std::free(base_);
      base_ = std::exchange(other.base_, nullptr);
      capacity_ = std::exchange(other.capacity_, 0);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  message_buffer(const message_buffer&) = delete;
  message_buffer& operator=(const message_buffer&) = delete;
  ~message_buffer() { std::free(base_); }

  explicit operator bool() const noexcept { return base_ != nullptr; }
  std::byte* payload() noexcept { return base_ + alignment; }
  const std::byte* payload() const noexcept { return base_ + alignment; }
  std::size_t capacity() const noexcept { return capacity_; }
  /// Payload bytes in use; only these are sent.
  std::size_t size() const noexcept { return size_; }
  void set_size(std::size_t bytes) noexcept { size_ = bytes; }

  /// Prefix plus used payload, contiguous: what goes on the wire.
  std::byte* wire() noexcept { return payload() - prefix_bytes; }
  const std::byte* wire() const noexcept { return payload() - prefix_bytes; }
  std::size_t wire_size() const noexcept { return prefix_bytes + size_; }

 private:
  static std::size_t round_up(std::size_t n) noexcept { return (n + alignment - 1) / alignment * alignment; }
  std::byte* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

}  // namespace transit::detail
