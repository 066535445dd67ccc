#pragma once
// byte_streamer: a streamer of items whose size is known at run time (the C API's), a thin front
// end on the streamer core (transit/detail/streamer/core.hpp), which owns the checks, the per-item
// path and the routing loop as for streamer<T>. Delivery hands the callback whole runs of items in
// place in the received message: one call per run, no copy.
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
  using detail::streamer_core::release_reporting_loss;
  using detail::streamer_core::name;
  using detail::streamer_core::stats;

 private:
  friend struct detail::streamer_test_access;

  /// The core's run callback: one call of the C callback per run. The run counts as delivered
  /// before the callback runs: a failing callback never sees it again.
  struct run_callback {
    byte_streamer* self;
    void operator()(const std::byte* items, const std::int32_t*, int, std::uint32_t& cursor, std::uint32_t end);
  };

  void process_items(const std::byte* payload, const detail::wire_header& h, int source,
                     std::uint32_t& cursor) override;
  /// insert's appends, for items of Bytes bytes (0: the run-time size).
  template <std::size_t Bytes>
  void append_all(const int* dests, const std::byte* items, std::size_t count);

  transit_deliver_fn deliver_;
  void* user_;
};

}  // namespace transit::c_api
