#pragma once
// byte_streamer: a streamer of items whose size is known at run time (the C API's), on the same
// item-type-independent core as streamer<T> (transit/detail/streamer/core.hpp). Delivery hands
// the callback whole runs of items in place in the received message: one call per run, no copy.
#include <cstddef>
#include <cstdint>

#include "transit/detail/streamer/core.hpp"
#include "transit/transit.h"

namespace transit::c_api {

class byte_streamer final : private detail::streamer_core {
 public:
  /// Collective. `item_bytes` is checked by the caller (1 to 65536).
  byte_streamer(context& ctx, const streamer_options& options, std::size_t item_bytes, transit_deliver_fn deliver,
                void* user);

  /// Local: checks every destination (std::out_of_range naming its position, its value and the
  /// bound; nothing inserted), then buffers `count` items for `dests`. A deliver callback that
  /// fails while the buffers this sends are polled ends the call with its error once every item is
  /// buffered: nothing is half-inserted.
  void insert(const int* dests, const std::byte* items, std::size_t count);

  void finish() { wait_impl(); }
  void quiesce() { quiesce_impl(); }
  bool progress() { return progress_impl(); }
  using detail::streamer_core::current_options;
  using detail::streamer_core::stats;

 private:
  void process_items(const std::byte* payload, const detail::wire_header& h, int source,
                     std::uint32_t& cursor) override;
  /// insert's appends, for items of Bytes bytes (0: item_bytes_, known at run time only).
  template <std::size_t Bytes>
  void append_all(const int* dests, const std::byte* items, std::size_t count);
  /// Copies one item into `l` for `dest`; true when that sent the buffer.
  bool append(link& l, const std::byte* item, int dest);
  /// Hands items [first, last) of a message, all for this PE, to the callback in one call.
  void deliver_run(const std::byte* items, std::uint32_t first, std::uint32_t last, std::uint32_t& cursor);

  transit_deliver_fn deliver_;
  void* user_;
};

}  // namespace transit::c_api
