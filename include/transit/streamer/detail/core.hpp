#pragma once
// The item-type-independent half of a streamer: links (one aggregation buffer per (peer, phase)),
// the route table, sending, both termination protocols, flushing and statistics. The typed
// streamer<T> on top copies items in and reads them out; everything here runs per message.
//
// Message layout (payload of one transport message):
//   wire_header | items: T[n] | pad to 4 | destinations: int32[n] (absent on last-phase links)
// A destination d >= 0 is a PE; d < 0 is a broadcast from root -d-1.
//
// Termination, one protocol for the whole route (TRAM thesis 4.5, B.2.5): messages are counted
// per link, cumulatively and forever. done() walks the router's phases in order: phase k's links
// are flushed with a final marker carrying the link's cumulative count once every in-link of
// phases < k is complete (all its announced messages received), because only those can still
// feed phase k. A PE is locally complete when all its in-links are; wait() then ends with one
// non-blocking barrier, so no step's items mix with the next step's. Counts never reset, so a
// message of the next step that arrives early cannot spoil them.
//
// quiesce() instead runs waves of non-blocking allreduces of (messages sent, messages received),
// each after flushing everything and delivering every local item; it ends when two consecutive
// waves agree and sent == received (four-counter method), which stays correct when deliveries
// insert new items and when an arriving item wakes an idle PE.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "transit/grid/router.hpp"
#include "transit/runtime/context.hpp"
#include "transit/streamer/options.hpp"

namespace transit::detail {

struct wire_header {
  std::uint32_t items;
  std::uint16_t phase;
  std::uint16_t flags;
  std::uint32_t final_count;  // 0: not final; else cumulative messages on this link, this one included
  std::uint32_t step;         // the sender's step, for final markers
};
static_assert(sizeof(wire_header) == 16);

inline constexpr std::uint16_t has_destinations = 1;

class streamer_core {
 public:
  streamer_core(const streamer_core&) = delete;
  streamer_core& operator=(const streamer_core&) = delete;

  streamer_stats stats() const noexcept { return stats_; }
  const router& route_plan() const noexcept { return *router_; }

 protected:
  /// Collective. `item_bytes` is sizeof(T); the item array starts right after the header.
  streamer_core(context& ctx, const streamer_options& options, std::size_t item_bytes, const char* type_name);
  virtual ~streamer_core();

  struct link {
    message_buffer buffer;      // empty until the first item (lazy allocation)
    std::uint32_t count = 0;    // items in buffer
    std::uint32_t sent = 0;     // cumulative messages sent on this link
    int pe = -1;
    int phase = -1;
    bool last_phase = false;    // items sent here are at their destination: no destination array
  };
  struct in_link {
    int pe = -1;
    int phase = -1;
    std::uint32_t received = 0;      // cumulative messages received
    std::uint32_t announced = 0;     // cumulative count in the last final marker
    std::uint32_t final_step = ~0u;  // step of the last final marker
  };
  enum class step_state { open, done, completing };
  enum class flush_kind { full, timer, final, bound };

  // ---- per-item helpers for streamer<T> ----
  std::byte* item_slot(link& l) noexcept { return l.buffer.payload() + sizeof(wire_header) + l.count * item_bytes_; }
  std::int32_t* destination_slots(link& l) noexcept {
    return reinterpret_cast<std::int32_t*>(l.buffer.payload() + destinations_offset(capacity_));
  }
  std::size_t destinations_offset(std::size_t items) const noexcept {
    return (sizeof(wire_header) + items * item_bytes_ + 3) & ~std::size_t{3};
  }
  void open_buffer(link& l);
  /// After an item was appended to `l`: send when full, honour the bound.
  void appended(link& l) {
    ++l.count;
    ++buffered_;
    ++activity_;
    if (l.count == capacity_) [[unlikely]] {
      send(l, flush_kind::full);
    } else if (max_buffered_ != 0 && buffered_ > max_buffered_) [[unlikely]] {
      relieve_bound();
    }
  }
  /// Link index for the next hop from this PE to `dest` (dest != rank).
  int link_to(int dest) const noexcept { return route_[dest]; }
  int link_index(int pe, int phase) const;
  [[noreturn]] void check_destination(int dest) const;  // throws std::out_of_range
  [[noreturn]] void check_open() const;                 // throws std::logic_error

  // ---- per-message hooks ----
  /// Parses and delivers or forwards the items of one message (implemented by streamer<T>).
  virtual void process_items(const std::byte* payload, const wire_header& h) = 0;
  /// Delivers the items queued for this PE itself; returns whether any were.
  virtual bool deliver_local() = 0;
  virtual std::size_t local_pending() const noexcept = 0;

  // ---- operations behind the public API ----
  bool progress_impl();
  void done_impl();
  void wait_impl();
  void quiesce_impl();
  /// Called by insert paths after a message went out: keep receiving while sending.
  void after_send();

  context& ctx_;
  const int rank_;
  const int size_;
  const std::size_t item_bytes_;
  const std::uint32_t capacity_;
  std::vector<link> links_;
  std::vector<std::int32_t> route_;  // destination PE -> link index (-1: this PE)
  std::uint64_t buffered_ = 0;
  const std::uint64_t max_buffered_;
  step_state state_ = step_state::open;
  bool in_callback_ = false;  // a deliver callback is running: no nested polling
  streamer_stats stats_;
  std::uint64_t activity_ = 0;  // items appended or messages received, for the flush timer

 private:
  void send(link& l, flush_kind kind, bool final_marker = false);
  void relieve_bound();
  void flush_links(std::size_t first, std::size_t last, flush_kind kind, bool final_marker);
  std::size_t buffer_bytes(const link& l) const noexcept;
  int link_index_checked(const hop& h) const;
  bool receive();
  bool poll_once();
  bool advance_staged();
  bool in_links_complete(int below_phase) const;
  void maybe_timer_flush();
  std::string describe() const;

  std::unique_ptr<router> router_;
  const char* type_name_;
  std::uint32_t channel_;
  std::unique_ptr<collective_group> group_;
  std::vector<in_link> in_links_;
  std::unordered_map<std::int64_t, int> in_index_;  // source * num_phases + phase -> in_links_
  std::unordered_map<std::int64_t, int> out_index_; // pe * num_phases + phase -> links_
  std::vector<message> batch_;
  std::uint32_t step_ = 0;
  int next_final_phase_ = 0;
  std::uint64_t buffers_allocated_ = 0;
  std::uint64_t buffer_bytes_allocated_ = 0;
  std::size_t flush_rotation_ = 0;
  std::uint64_t received_messages_ = 0;
  std::chrono::microseconds flush_period_;
  std::chrono::steady_clock::time_point last_flush_check_;
  std::uint64_t activity_at_check_ = 0;
  int diagnostic_id_ = -1;
};

}  // namespace transit::detail
