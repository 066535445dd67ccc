#pragma once
// A small per-PE cache of message buffers. Aggregation sends buffers of a few sizes over and over;
// recycling them saves an allocation per message. The cache is bounded: beyond `max_cached`
// buffers, returned ones are freed.
#include <cstddef>
#include <vector>

#include "transit/transport/buffer.hpp"

namespace transit::detail {

class buffer_pool {
 public:
  static constexpr std::size_t max_cached = 64;

  /// A buffer with at least `payload_bytes` of room (and not wastefully more), size 0.
  message_buffer take(std::size_t payload_bytes) {
    for (std::size_t i = cache_.size(); i-- > 0;) {
      const std::size_t cap = cache_[i].capacity();
      if (cap >= payload_bytes && cap <= 2 * payload_bytes + 4096) {
        message_buffer b = std::move(cache_[i]);
        cache_[i] = std::move(cache_.back());
        cache_.pop_back();
        b.set_size(0);
        return b;
      }
    }
    return message_buffer(payload_bytes);
  }
  void give(message_buffer&& b) {
    if (b && cache_.size() < max_cached) cache_.push_back(std::move(b));
  }
  std::size_t cached() const noexcept { return cache_.size(); }

 private:
  std::vector<message_buffer> cache_;
};

}  // namespace transit::detail
