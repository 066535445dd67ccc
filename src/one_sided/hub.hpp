#pragma once
// Private to src/one_sided: the wire records and the request hub, the part of an endpoint that
// aggregates, forwards, combines and serves requests (include/transit/detail/one_sided/engine.hpp
// sets out the protocol). A hub runs on one thread: the PE's own (polling) or its node's helper.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "transit/detail/core/clock.hpp"
#include "core/simulated_costs.hpp"
#include "transit/detail/one_sided/engine.hpp"
#include "transit/detail/transport/mailbox.hpp"
#include "transit/detail/transport/transport.hpp"

namespace transit::detail {

enum class message_kind : std::uint8_t { requests = 1, control = 2 };

struct message_header {
  message_kind kind;
  std::uint8_t reserved8;
  std::uint16_t reserved16;
  std::uint32_t records;
};
static_assert(sizeof(message_header) == 8);

/// One request; `payload_bytes` of payload follow, padded to 8.
struct request_record {
  op_code op;
  std::uint8_t reduce;  // reduce_op of an accumulate
  std::uint16_t reserved;
  std::uint32_t payload_bytes;
  std::int32_t requester;  // PE the reply or acknowledgement is for
  std::uint32_t ticket;    // the requester's; no_ticket: acknowledged by count
  std::int32_t owner;      // PE holding the elements (mutexes: the home PE)
  std::uint32_t count;     // elements
  std::uint64_t offset;    // element offset in the owner's block (mutexes: the mutex's index there)
};
static_assert(sizeof(request_record) == 32);

enum class control_type : std::uint8_t { reply = 1, acks = 2, credit = 3 };

/// One reply, acknowledgement count or credit; replies carry `payload_bytes` of data, padded to 8.
struct control_record {
  control_type type;
  std::uint8_t reserved8;
  std::uint16_t reserved16;
  std::uint32_t payload_bytes;
  std::int32_t pe;     // reply, acks: the requesting PE
  std::uint32_t value; // reply: ticket; acks: operations acknowledged; credit: messages processed
};
static_assert(sizeof(control_record) == 16);

inline constexpr std::uint32_t no_ticket = 0xffffffffu;
/// Tickets with this bit belong to a hub's combined requests, not to a PE.
inline constexpr std::uint32_t combined_ticket = 0x80000000u;
/// Buffers a link may have in flight before the receiver returns a credit.
inline constexpr int link_credits = 2;

constexpr std::size_t padded(std::size_t bytes) noexcept { return (bytes + 7) & ~std::size_t{7}; }

/// Most payload bytes one request piece may carry so that it fits an empty buffer.
inline std::size_t max_piece_bytes(std::size_t buffer_bytes) noexcept {
  return (buffer_bytes - sizeof(message_header) - sizeof(request_record)) & ~std::size_t{7};
}

/// Copies `count` elements of `size` bytes into (from) an array block. With `atomic` (other
/// threads touch the block: helper mode), elements of 1, 2, 4 or 8 bytes move as single atomic
/// words, so a word is never seen half-written (a flag polled with get, for instance).
void copy_into_block(std::byte* block, const std::byte* from, std::size_t count, std::size_t size, bool atomic) noexcept;
void copy_from_block(std::byte* to, const std::byte* block, std::size_t count, std::size_t size, bool atomic) noexcept;

/// Applies a put_packed or get_packed request to `block` (the owner's): unpacks the elements into
/// their regions, or gathers the regions into `out`. Returns the element bytes moved.
std::size_t apply_packed(const request_record& r, const std::byte* payload, std::byte* block, std::byte* out,
                         std::size_t element_size, bool atomic) noexcept;

/// A mutex is a ticket lock of two words in its home's block, (next ticket, now serving): taken
/// with atomics by the PEs of the home's node (where it shares memory) and by the endpoint that
/// serves the lock requests of other PEs, so all lockers queue in one ticket order (FIFO).
inline constexpr std::size_t mutex_bytes = 2 * sizeof(std::uint64_t);
/// Takes the next ticket of `mutex` (mutex_bytes).
std::uint64_t take_ticket(std::byte* mutex) noexcept;
/// Whether `ticket` holds `mutex` now (acquire: the previous holder's writes are visible).
bool now_serving(const std::byte* mutex, std::uint64_t ticket) noexcept;
/// Hands `mutex` to the next ticket (release: the holder's writes are published first).
void release_mutex(std::byte* mutex) noexcept;
/// Tickets taken plus tickets served on `count` mutexes at `mutexes`: the lock and unlock
/// operations applied to them.
std::uint64_t mutex_operations(const std::byte* mutexes, std::size_t count) noexcept;

/// Counters a hub keeps (its part of one_sided_stats) and the teardown wave counts.
struct hub_counters {
  std::uint64_t requests_forwarded = 0;
  std::uint64_t requests_combined = 0;
  std::uint64_t requests_served = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t request_messages_sent = 0;
  std::uint64_t request_messages_between_nodes = 0;
  std::uint64_t request_messages_received = 0;
  std::uint64_t credit_waits = 0;
  std::uint64_t replies_forwarded = 0;  // reply and acknowledgement records passed on toward their requesters
  std::uint64_t reply_peers = 0;        // distinct endpoints sent replies or acknowledgements
  std::uint64_t buffer_bytes = 0;       // request buffers held now (open and queued)
  std::uint64_t buffer_bytes_peak = 0;
};

/// Copies a hub's counters into the one_sided_stats fields they stand for.
void add_hub_counters(one_sided_stats& s, const hub_counters& c) noexcept;

class hub {
 public:
  /// What the hub serves and where replies for requesters on its own endpoint go.
  class host {
   public:
    virtual ~host() = default;
    /// Element memory of `pe`, a PE this endpoint serves.
    virtual std::byte* block_of(int pe) = 0;
    virtual void deliver_reply(int pe, std::uint32_t ticket, const std::byte* data, std::size_t bytes) = 0;
    virtual void deliver_acks(int pe, std::uint64_t count) = 0;
    /// Elements of `pe`'s block (a PE this endpoint serves): requests from the wire are checked
    /// against it before they touch the block.
    virtual std::uint64_t block_elements(int pe) = 0;
    /// Why a reply or acknowledgement record from the wire for a PE of this endpoint cannot be
    /// delivered (a ticket not live, a reply of another size, more acknowledgements than
    /// requests), or empty when it can. Default: the host cannot tell here.
    virtual std::string refuse(const control_record&) { return {}; }
  };

  struct config {
    int self = -1;            // this endpoint (transport rank)
    int self_requester = -1;  // a PE whose replies come to this endpoint: names combined requests
    std::size_t buffer_bytes = 0;
    std::chrono::microseconds flush_period{0};
    bool combine = false;
    const element_ops* ops = nullptr;
    std::size_t element_size = 1;
    bool atomic = false;                    // other threads touch the memory served here
    std::vector<std::int32_t> route;        // owner PE -> index in links, -1: served here
    std::vector<int> links;                 // outgoing links: next-hop endpoints, one link each
    std::vector<bool> links_between_nodes;  // by link: its next hop is on another node (counted)
    std::vector<std::int32_t> endpoint_of;  // requesting PE -> its endpoint (replies end there)
    // Requesting PE -> the endpoint its replies and acknowledgements go to next from here: the one
    // its requests came in from, so they retrace the route (self: its endpoint is this one; -1: its
    // requests never pass here).
    std::vector<std::int32_t> reply_via;
    std::size_t in_links = 0;               // incoming links, for the memory bound
    std::vector<std::int32_t> pe_of_endpoint;  // endpoint -> PE its reports name; empty: the same
  };

  /// `mail` null: the hub owns `net` and takes every message from it.
  hub(config c, transport& net, mailbox* mail, std::uint32_t channel, host& h);
  ~hub();
  hub(const hub&) = delete;
  hub& operator=(const hub&) = delete;

  /// A request issued at this endpoint (payload: payload_bytes). Served at once when its owner
  /// is served here. False when its link has no room: the caller keeps it and retries after polls.
  bool submit(const request_record& r, const std::byte* payload);
  /// Receives, serves, forwards; then sends every open buffer when `may_flush_idle` (the caller
  /// has nothing else to do), else those whose flush period passed. Never waits. Returns whether
  /// anything happened.
  bool poll(bool may_flush_idle);
  /// Sends every open buffer its link has credit for.
  void flush_all();

  const hub_counters& counters() const noexcept { return counters_; }
  std::size_t num_links() const noexcept { return links_.size(); }
  /// One open buffer per outgoing link plus link_credits per incoming link, each of buffer_bytes
  /// or of the largest request message this hub has held (a packed request above a buffer).
  std::uint64_t buffer_bound() const noexcept;
  /// Requests held anywhere in this hub (open buffers, queued messages, combined requests).
  bool idle() const noexcept;
  std::string describe() const;

 private:
  struct combine_entry {
    std::uint32_t offset;  // of the request_record in the link's buffer payload
    std::uint8_t kind;     // combine_kind
  };
  struct link {
    int endpoint = -1;
    bool between_nodes = false;
    message_buffer buffer;  // open buffer, or empty
    std::size_t capacity = 0;  // of the open buffer: buffer_bytes, or a large packed request's own size
    std::size_t used = 0;   // payload bytes written, header included
    std::uint32_t records = 0;
    int credits = link_credits;
    bool waiting = false;   // a full buffer waits for credit
    steady_clock::time_point opened;
    std::unordered_map<std::uint64_t, combine_entry> combinable;  // word -> latest combinable request
  };
  struct in_link {
    int endpoint = -1;
    std::deque<message_buffer> queue;  // request messages not yet fully processed, in order
    std::size_t cursor = 0;            // next record in queue.front()
    std::uint32_t done_records = 0;
    bool listed = false;               // in busy_
  };
  struct constituent {
    std::int32_t requester;
    std::uint32_t ticket;
    bool wants_value;
    std::uint64_t prefix;  // deltas merged before this one (an element's bytes)
  };
  struct combined {
    std::uint8_t kind = 0;
    std::vector<constituent> parts;
  };

  bool append(std::size_t link_index, const request_record& r, const std::byte* payload);
  bool try_combine(link& l, const request_record& r, const std::byte* payload);
  void note_for_combining(link& l, const request_record& r, std::uint32_t offset);
  bool send_link(link& l);
  void open_buffer(link& l, std::size_t bytes);
  bool route_or_serve(const request_record& r, const std::byte* payload);
  void serve(const request_record& r, const std::byte* payload);
  void serve_mutex(const request_record& r);
  void reply(std::int32_t pe, std::uint32_t ticket, const std::byte* data, std::size_t bytes);
  void acknowledge(std::int32_t pe, std::uint64_t count);
  void complete_combined(std::uint32_t ticket, const std::byte* data, std::size_t bytes);
  control_record* control_slot(int endpoint, std::size_t payload_bytes);
  /// A control slot for a reply or acknowledgement record for `pe`, at the next endpoint back
  /// along its requests' route.
  control_record* reply_slot(std::int32_t pe, std::size_t payload_bytes);
  void flush_control();
  bool receive();
  /// The checks of core/wire_error.hpp: a received message is reported (wire_error) before any
  /// of it is used, so process() and process_control() read only checked records.
  std::string receiver() const;
  [[noreturn]] void corrupt(int source, std::string_view message, std::string_view problem) const;
  void check_requests(int source, const message_buffer& m) const;
  std::string request_problem(const request_record& r, const std::byte* payload) const;
  void check_control(int source, const std::byte* payload, std::size_t bytes) const;
  std::string control_problem(int source, const control_record& c);
  void process_control(int source, const std::byte* payload, std::size_t bytes);
  bool process_in_links();
  bool process(in_link& in);
  void flush_due(steady_clock::time_point now);
  void hold_bytes(std::int64_t delta) noexcept;
  /// What a received request message counts for while queued: a buffer, or its own size when it
  /// is a larger packed request (the same when it arrives and when it is released).
  std::size_t held_bytes(const message_buffer& m) const noexcept { return std::max(config_.buffer_bytes, m.size()); }

  config config_;
  transport& net_;
  mailbox* mail_;
  std::uint32_t channel_;
  host& host_;
  std::size_t element_size_;
  std::vector<link> links_;
  std::unordered_map<int, std::size_t> link_of_;  // endpoint -> links_
  std::deque<in_link> in_links_;  // a deque: entries never move
  std::unordered_map<int, std::size_t> in_link_of_;  // source endpoint -> in_links_
  std::vector<std::size_t> busy_;  // in_links_ with queued messages
  std::vector<message_buffer> control_;  // by endpoint: replies, acks, credits to send
  std::vector<int> control_dirty_;
  std::unordered_map<std::int32_t, std::uint64_t> acks_;  // requesting PE -> count, this poll
  std::vector<bool> replied_to_;  // by endpoint: sent a reply or acknowledgement (reply_peers)
  std::vector<combined> combined_;  // by ticket & ~combined_ticket
  std::vector<std::uint32_t> free_combined_;
  std::size_t combined_live_ = 0;
  struct mutex_waiter {
    std::byte* mutex;
    std::uint64_t ticket;      // of the ticket lock
    std::int32_t requester;
    std::uint32_t reply_ticket;
    std::uint64_t key;         // word_key of the mutex
  };
  /// Grants the lock requests whose tickets are now served (their mutexes released, here or by a
  /// PE of the node).
  bool grant_waiting_locks();
  std::vector<mutex_waiter> lock_waiters_;  // lock requests served here that hold a ticket, in order
  std::unordered_map<std::uint64_t, std::int32_t> lock_holders_;  // word_key -> PE granted here
  std::size_t open_buffers_ = 0;
  std::size_t largest_message_ = 0;  // bytes of the largest request message held, at least buffer_bytes
  std::vector<message> batch_;
  std::vector<std::byte> scratch_;
  hub_counters counters_;
  // Request and reply records copied into messages and requests served, charged in modelled
  // simulations once per message sent and per poll (core/simulated_costs.hpp).
  item_hop_counter hops_;
};

}  // namespace transit::detail
