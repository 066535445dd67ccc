#include "c_api/byte_streamer.hpp"

#include <cstring>
#include <exception>
#include <stdexcept>

#include "c_api/handles.hpp"

namespace transit::c_api {

byte_streamer::byte_streamer(context& ctx, const streamer_options& options, std::size_t item_bytes,
                             transit_deliver_fn deliver, void* user)
    : detail::streamer_core(ctx, options, item_bytes, "C items", false, false), deliver_(deliver), user_(user) {}

void byte_streamer::insert(const int* dests, const std::byte* items, std::size_t count) {
  if (const std::size_t i = first_bad_destination(dests, count); i != count) [[unlikely]]
    throw std::out_of_range(detail::concat("transit_streamer_insert: dests[", i, "] = ", dests[i], " is outside [0, ",
                                           size_, "): expected a PE of the context; nothing was inserted"));
  begin_insert(count, "insert");
  switch (item_bytes_) {  // the common sizes copy with a constant size (inlined, no memcpy call)
    case 4: return append_all<4>(dests, items, count);
    case 8: return append_all<8>(dests, items, count);
    case 16: return append_all<16>(dests, items, count);
    default: return append_all<0>(dests, items, count);
  }
}

template <std::size_t Bytes>
void byte_streamer::append_all(const int* dests, const std::byte* items, std::size_t count) {
  const std::size_t bytes = item_size<Bytes>();
  // A callback's failure in a poll stops the polling, not the inserting: every item is buffered,
  // then the failure is reported (the items not yet delivered are delivered by later calls).
  std::exception_ptr failed;
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* item = items + i * bytes;
    auto copy = [item, bytes](std::byte* slot) { std::memcpy(slot, item, bytes); };
    if (append_for<Bytes>(dests[i], copy) && !failed) [[unlikely]] {
      try {
        after_send();
      } catch (...) {
        failed = std::current_exception();
      }
    }
  }
  if (failed) std::rethrow_exception(failed);
}

void byte_streamer::run_callback::operator()(const std::byte* items, const std::int32_t*, int, std::uint32_t& cursor,
                                             std::uint32_t end) {
  const std::uint32_t first = cursor;
  cursor = end;
  const int code = self->deliver_(items + std::size_t{first} * self->item_bytes_, end - first, self->user_);
  if (code != 0)
    throw callback_error(detail::concat("the deliver callback returned ", code, " (on PE ", self->rank_,
                                        ", for a run of ", end - first, " items)"));
}

void byte_streamer::process_items(const std::byte* payload, const detail::wire_header& h, int source,
                                  std::uint32_t& cursor) {
  run_callback run{this};
  switch (item_bytes_) {  // forwarded items copy with a constant size, as in insert
    case 4: return route_message<4>(payload, h, source, cursor, run);
    case 8: return route_message<8>(payload, h, source, cursor, run);
    case 16: return route_message<16>(payload, h, source, cursor, run);
    default: return route_message<0>(payload, h, source, cursor, run);
  }
}

}  // namespace transit::c_api
