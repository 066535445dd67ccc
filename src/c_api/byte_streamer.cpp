#include "c_api/byte_streamer.hpp"

#include <cstring>
#include <exception>
#include <stdexcept>

#include "c_api/handles.hpp"

namespace transit::c_api {

byte_streamer::byte_streamer(context& ctx, const streamer_options& options, std::size_t item_bytes,
                             transit_deliver_fn deliver, void* user)
    : detail::streamer_core(ctx, options, item_bytes, "C items"), deliver_(deliver), user_(user) {}

void byte_streamer::insert(const int* dests, const std::byte* items, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (static_cast<unsigned>(dests[i]) >= static_cast<unsigned>(size_)) [[unlikely]]
      throw std::out_of_range(detail::concat("transit_streamer_insert: dests[", i, "] = ", dests[i], " is outside [0, ",
                                             size_, "): expected a PE of the context; nothing was inserted"));
  }
  if (state_ != step_state::open) [[unlikely]]
    throw_closed_step("insert");
  stats_.items_inserted += count;
  dynamic_step_ |= in_callback_;
  switch (item_bytes_) {  // the common sizes copy with a constant size (inlined, no memcpy call)
    case 4: return append_all<4>(dests, items, count);
    case 8: return append_all<8>(dests, items, count);
    case 16: return append_all<16>(dests, items, count);
    default: return append_all<0>(dests, items, count);
  }
}

template <std::size_t Bytes>
void byte_streamer::append_all(const int* dests, const std::byte* items, std::size_t count) {
  const std::size_t bytes = Bytes != 0 ? Bytes : item_bytes_;
  // A callback's failure in a poll stops the polling, not the inserting: every item is buffered,
  // then the failure is reported (the items not yet delivered are delivered by later calls).
  std::exception_ptr failed;
  for (std::size_t i = 0; i < count; ++i) {
    const int dest = dests[i];
    const std::byte* item = items + i * bytes;
    auto copy = [&](std::byte* slot) { std::memcpy(slot, item, bytes); };
    if (append_item(links_[link_to(dest)], copy, bytes, dest, rank_) && !failed) [[unlikely]] {
      try {
        after_send();
      } catch (...) {
        failed = std::current_exception();
      }
    }
  }
  if (failed) std::rethrow_exception(failed);
}

bool byte_streamer::append(link& l, const std::byte* item, int dest) {
  auto copy = [&](std::byte* slot) { std::memcpy(slot, item, item_bytes_); };
  return append_item(l, copy, item_bytes_, dest, rank_);  // the C API delivers no sources
}

void byte_streamer::deliver_run(const std::byte* items, std::uint32_t first, std::uint32_t last,
                                std::uint32_t& cursor) {
  // The run counts as delivered before the callback runs: a failing callback never sees it again.
  cursor = last;
  stats_.items_delivered += last - first;
  const int code = deliver_(items + std::size_t{first} * item_bytes_, last - first, user_);
  if (code != 0)
    throw callback_error(detail::concat("the deliver callback returned ", code, " (on PE ", rank_, ", for a run of ",
                                        last - first, " items)"));
}

void byte_streamer::process_items(const std::byte* payload, const detail::wire_header& h, int /*source*/,
                                  std::uint32_t& cursor) {
  const std::byte* items = payload + sizeof(detail::wire_header);
  const std::uint32_t n = h.items;
  if (!(h.flags & detail::has_destinations)) {  // last hop: every item is for this PE
    if (cursor < n) deliver_run(items, cursor, n, cursor);
    return;
  }
  // Items for this PE are handed over in runs of consecutive ones; the others are forwarded.
  const auto* dests = reinterpret_cast<const std::int32_t*>(payload + destinations_offset(n));
  while (cursor < n) {
    const std::uint32_t i = cursor;
    const int dest = dests[i];
    if (dest == rank_) {
      std::uint32_t end = i + 1;
      while (end < n && dests[end] == rank_) ++end;
      deliver_run(items, i, end, cursor);
    } else if (dest >= 0) {  // destinations were checked against the job's size on arrival
      ++cursor;
      ++stats_.items_forwarded;
      append(links_[link_to(dest)], items + std::size_t{i} * item_bytes_, dest);
    } else {
      throw std::runtime_error(detail::concat("transit streamer: corrupt message: item ", i, " has destination ", dest,
                                              " (a broadcast), which a C-API streamer never sends"));
    }
  }
}

}  // namespace transit::c_api
