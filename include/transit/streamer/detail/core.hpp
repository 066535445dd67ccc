#pragma once
// The item-type-independent half of a streamer: links (one aggregation buffer per (peer, phase),
// plus one for items to this PE), the route table, sending, both termination protocols, flushing
// and statistics. The typed streamer<T> on top copies items in and reads them out; everything
// here runs per message, not per item.
//
// Message layout (payload of one transport message):
//   wire_header | items: T[n] | pad to 4 | destinations: int32[n] (absent on links whose phase
//   ends every route). A destination d >= 0 is a PE; d < 0 is a broadcast from root -d-1.
//
// Termination, one protocol for the whole route (TRAM thesis 4.5, B.2.5): messages are counted
// per link, cumulatively and forever. done() walks the router's phases in order: phase k's links
// are flushed with a final marker carrying the link's cumulative count once every in-link of
// phases < k is complete (all its announced messages received), because only those can still
// feed phase k. A PE is locally complete when all its in-links are; wait() then ends with one
// non-blocking barrier, so that every item of the step is delivered everywhere before any PE
// starts the next step.
//
// quiesce() instead runs waves of non-blocking allreduces of (messages sent, messages received),
// each after flushing everything and delivering every local item; it ends when two consecutive
// waves agree and sent == received (four-counter method), which stays correct when deliveries
// insert new items and when an arriving item wakes an idle PE.
//
// Every message carries its step number. A PE can be at most one step ahead of another (each
// step ends collectively), so a message from the next step is set aside until this PE gets there:
// steps never mix, even though peers leave a step at slightly different times.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "transit/grid/router.hpp"
#include "transit/runtime/detail/context_access.hpp"
#include "transit/streamer/options.hpp"

namespace transit::detail {

struct wire_header {
  std::uint32_t items;
  std::uint16_t phase;
  std::uint16_t flags;
  std::uint32_t final_count;  // 0: not final; else cumulative messages on this link, this one included
  std::uint32_t step;
};
static_assert(sizeof(wire_header) == 16);

inline constexpr std::uint16_t has_destinations = 1;
inline constexpr std::uint16_t link_announcement = 2;  // construction only: "I send to you in this phase"

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

  /// An aggregation buffer towards one peer in one phase. The cursors make appending an item a
  /// copy and a compare; a link without an open buffer has next == end == nullptr.
  struct link {
    std::byte* next = nullptr;            // next free item slot
    std::byte* end = nullptr;             // one past the last item slot
    std::int32_t* next_dest = nullptr;    // next free destination slot; null when not carried
    message_buffer buffer;
    std::uint32_t sent = 0;               // cumulative messages sent on this link
    int pe = -1;
    int phase = -1;                       // -1: the link to this PE itself
    bool carries_destinations = false;
  };
  struct in_link {
    int pe = -1;
    int phase = -1;
    std::uint32_t received = 0;      // cumulative messages received
    std::uint32_t announced = 0;     // cumulative count in the last final marker
    std::uint32_t final_step = ~0u;  // step of the last final marker
  };
  enum class step_state { open, done };
  enum class flush_kind { full, timer, final, bound };
  static constexpr int self_link = 0;

  /// Link index for the next hop from this PE to `dest` (self_link for dest == rank).
  int link_to(int dest) const noexcept { return route_[dest]; }
  int link_index(int pe, int phase) const;
  [[noreturn]] void throw_bad_destination(int dest) const;  // std::out_of_range
  [[noreturn]] void throw_closed_step() const;              // std::logic_error
  void open_buffer(link& l);
  /// The buffer of `l` is full: send it (or queue it for local delivery) and keep receiving.
  void buffer_full(link& l);
  /// max_buffered_items accounting, only called when a bound is set.
  void count_bounded_item() {
    if (++buffered_ > max_buffered_) relieve_bound();
    if (buffered_ > stats_.items_buffered_peak) stats_.items_buffered_peak = buffered_;
  }
  std::size_t destinations_offset(std::size_t items) const noexcept {
    return (sizeof(wire_header) + items * item_bytes_ + 3) & ~std::size_t{3};
  }

  // ---- per-message hooks ----
  /// Delivers or forwards the items of one message (implemented by streamer<T>).
  virtual void process_items(const std::byte* payload, const wire_header& h) = 0;

  // ---- operations behind the public API ----
  bool progress_impl();
  void done_impl();
  void wait_impl();
  void quiesce_impl();

  context& ctx_;
  const int rank_;
  const int size_;
  const std::size_t item_bytes_;
  const std::uint32_t capacity_;
  const std::uint64_t max_buffered_;
  std::vector<link> links_;          // links_[self_link] is this PE's own; the rest sorted by phase
  std::vector<std::int32_t> route_;  // destination PE -> link index
  step_state state_ = step_state::open;
  bool in_callback_ = false;  // a deliver callback may be running: no nested polling
  streamer_stats stats_;

 private:
  std::uint32_t items_in(const link& l) const noexcept {
    return l.next == nullptr ? 0
                             : static_cast<std::uint32_t>(
                                   (l.next - (l.buffer.payload() + sizeof(wire_header))) / item_bytes_);
  }
  void send(link& l, flush_kind kind, bool final_marker = false);
  void relieve_bound();
  void flush_links(std::size_t first, std::size_t last, flush_kind kind, bool final_marker);
  std::size_t buffer_bytes(const link& l) const noexcept;
  std::uint64_t buffered_items() const noexcept;
  void discover_in_links();
  bool receive();
  bool deliver_local();
  bool poll_once();
  void after_send();
  bool advance_staged();
  bool in_links_complete(int below_phase) const;
  bool locally_idle() const noexcept { return local_messages_.empty() && links_[self_link].next == nullptr; }
  void maybe_timer_flush();
  std::uint64_t activity() const noexcept {
    return stats_.items_inserted + stats_.items_forwarded + stats_.messages_received;
  }
  std::string describe() const;
  transport& net() const noexcept { return context_access::net(ctx_); }
  mailbox& mail() const noexcept { return context_access::mail(ctx_); }

  std::unique_ptr<router> router_;
  const char* type_name_;
  std::uint32_t channel_;
  std::unique_ptr<collective_group> group_;
  std::vector<in_link> in_links_;                    // sorted by phase
  std::unordered_map<std::int64_t, int> in_index_;   // source * num_phases + phase -> in_links_
  std::unordered_map<std::int64_t, int> out_index_;  // pe * num_phases + phase -> links_
  std::vector<message> batch_;
  std::vector<message> deferred_;  // arrived early: from a peer already in step_ + 1, or during construction
  std::vector<message_buffer> local_messages_;       // full buffers of the self link, to deliver
  std::vector<message_buffer> local_batch_;
  std::uint64_t buffered_ = 0;                       // items in buffers, counted only with a bound
  std::uint32_t step_ = 0;
  int next_final_phase_ = 0;
  std::uint64_t buffers_allocated_ = 0;
  std::uint64_t buffer_bytes_allocated_ = 0;
  std::size_t flush_rotation_ = 0;
  std::chrono::microseconds flush_period_;
  std::chrono::steady_clock::time_point last_flush_check_;
  std::uint64_t activity_at_check_ = 0;
  int diagnostic_id_ = -1;
};

}  // namespace transit::detail
