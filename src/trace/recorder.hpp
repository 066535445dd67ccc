#pragma once
// The timeline trace of one PE (--transit-trace=DIR, TRANSIT_TRACE; docs/trace.md): what the PE
// did, as events in a bounded ring, written when its context ends (and when the watchdog fires) as
// DIR/transit-trace-<PE>.json in the Chrome trace event format, which Perfetto and
// chrome://tracing open. Private to the library.
//
// Layering: a leaf, below the transport. The recorder knows no transport, mailbox or backend: it
// records what it is told, as plain integers and labels (a message sent or received with its peer,
// channel and bytes; slices, instants and counters). Its callers say the rest: the transport's
// hooks (src/transport/traced.cpp) record every message sent and received, on both backends,
// and say which endpoint a received channel belongs to (the mailbox decodes that); the runtime
// names the process ("local PEs", "rank 3"); the layers above add what only they know: the grid
// dimension of a send and why it left (the streamer calls note_send just before it sends) and
// where a received message says its dimension (dimension_at), their steps and runs as slices,
// termination waves and tuning decisions as instants; the wait loop records its waits and idle time.
//
// Cost. Off: no recorder exists, and each hook is one branch on a null pointer, per message sent,
// per poll and per wait round; nothing per item. On: per message a clock read or two and one
// 64-byte event in the ring; per sampled message also a lookup for its flow arrow.
//
// Bounded memory: `capacity` events per PE. When the ring is full the oldest event is overwritten;
// the file then says how many were lost (metadata event transit_dropped and otherData), so that a
// reader never mistakes a truncated timeline for a whole one.
//
// Flow arrows (send -> receive) without a byte on the wire: messages between two PEs on one
// channel arrive in the order sent (what the transport promises its callers), so the k-th message from A to B on channel c
// is the k-th on both sides; both compute the same id from (A, B, c, k), and the same sampling
// decision (k < 16 or k a multiple of 64), so arrows are drawn for a bounded share of the messages.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace transit::detail::trace {

/// Why a message left: the streamer's flush causes, its construction-time link announcements and
/// departure notes; `other` for sends no layer annotated (exchange, one-sided, collectives).
enum class send_cause : std::uint8_t { other, full, timer, final, bound, links, left, acknowledgement, direct };

class recorder {
 public:
  /// `dir` exists and is writable (parse_run_options checked). `process` and `pe` become the
  /// file's pid and tid: the process the PE runs in and the PE. `process_name` names the process
  /// in the file ("local PEs", "rank 3"); `backend` is written as the file's otherData.backend.
  /// Both are labels the caller chooses: the recorder never tests them.
  recorder(std::string dir, int pe, int pes, int process, std::string process_name, std::string backend,
           std::size_t capacity);
  /// The recorder of the communication thread of the process `rank` (docs/hybrid.md): a row of its
  /// own in that process (tid `pes` + rank, "comm thread"), written to
  /// DIR/transit-trace-comm-<rank>.json. It records hand-offs (relayed), nothing else.
  static recorder for_comm_thread(std::string dir, int rank, int pes, std::string process_name, std::string backend,
                                  std::size_t capacity);
  recorder(recorder&&) = default;
  recorder(const recorder&) = delete;
  recorder& operator=(const recorder&) = delete;

  /// Nanoseconds on transit's clock (simulated time under SimGrid).
  static std::int64_t now();

  /// The next send() is a message of grid dimension `dimension` (-1: none) that left for `cause`.
  void note_send(int dimension, send_cause cause) noexcept {
    next_dimension_ = static_cast<std::int16_t>(dimension);
    next_cause_ = cause;
  }
  /// A message of `bytes` to `dest` on `channel` was handed over in [start, end].
  void sent(int dest, std::uint32_t channel, std::size_t bytes, std::int64_t start, std::int64_t end);
  /// One message from `source` on `channel` among the `count` that one poll in [start, end] handed
  /// over; `index` is its position among them; `data` its `bytes` of payload. `endpoint` is whose
  /// message it is (the caller decodes the channel; several channels may share one endpoint): the
  /// key of dimension_at.
  void received(int source, std::uint32_t channel, std::uint32_t endpoint, const std::byte* data, std::size_t bytes,
                std::int64_t start, std::int64_t end, std::size_t index, std::size_t count);
  /// Every message received for `endpoint` begins with a header whose byte at `offset` is the
  /// message's grid dimension (the streamer's routing phase): its receive events carry it from now
  /// on, as sends do. The receiver knows the dimension only from the message, and the transport's
  /// hook, where receives are recorded, knows no layer's header: the layer says where to look.
  /// Until forget_channel(endpoint).
  void dimension_at(std::uint32_t endpoint, std::uint8_t offset) { dimension_offset_[endpoint] = offset; }
  void forget_channel(std::uint32_t endpoint) { dimension_offset_.erase(endpoint); }

  /// The communication thread: the message of `bytes` from PE `source` to PE `dest` on `channel`
  /// was handed on in [start, end]: `outgoing`, taken from a PE thread's outbox and given to MPI;
  /// else taken from MPI and put into PE `dest`'s inbox. Sampled messages get a step on the flow
  /// arrow of their send (the same id: messages of one pair and channel keep their order).
  void relayed(bool outgoing, int source, int dest, std::uint32_t channel, std::size_t bytes, std::int64_t start,
               std::int64_t end);

  /// An id (never 0) for a name and the names of its two arguments (empty: not shown), for slice
  /// and instant. A lookup: callers on a frequent path keep the id.
  std::uint32_t label(std::string_view name, std::string_view arg_a = {}, std::string_view arg_b = {});
  /// A complete event: label `id` from start to end, with its two arguments.
  void slice(std::uint32_t id, std::int64_t start, std::int64_t end, std::uint64_t a = 0, std::uint64_t b = 0);
  /// A point event at `at`.
  void instant(std::uint32_t id, std::int64_t at, std::uint64_t a = 0, std::uint64_t b = 0);

  /// Writes the file (sorted by time; replaces an earlier one of this PE). `why`: "end" or
  /// "watchdog", recorded in the file. Never throws: a file that cannot be written whole is cut
  /// after its last whole event and still closed as valid JSON where the disk allows, and a
  /// warning on stderr says so; returns false then.
  bool write(std::string_view why) noexcept;

  std::uint64_t recorded() const noexcept { return recorded_; }
  std::uint64_t dropped() const noexcept { return recorded_ > capacity_ ? recorded_ - capacity_ : 0; }
  std::string path() const;

  enum class kind : std::uint8_t { slice, instant, send, receive, relay_out, relay_in };
  struct event {
    std::int64_t start = 0;
    std::int64_t duration = 0;
    std::uint64_t a = 0;     // send/receive: bytes
    std::uint64_t b = 0;     // relay: the PE of this rank (source or destination)
    std::uint64_t flow = 0;  // 0: no arrow
    std::uint32_t label = 0;
    std::uint32_t channel = 0;
    std::int32_t peer = -1;
    std::int16_t dimension = -1;
    kind type = kind::slice;
    send_cause cause = send_cause::other;
  };
  static_assert(sizeof(event) == 56);

 private:
  struct label_names {
    std::string name, a, b;
  };
  event& push();
  std::vector<std::string> render() const;

  std::string dir_;
  int pe_, pes_, process_;
  int tid_;                  // the row: the PE, or pes + rank for a communication thread
  std::string thread_name_;  // "PE 3", "comm thread"
  std::string file_name_;    // transit-trace-3.json, transit-trace-comm-1.json
  std::string who_;          // in warnings: "PE 3", "rank 1, communication thread"
  std::string process_name_;  // "local PEs", "rank 1"
  std::string backend_;
  std::vector<event> ring_;  // grows to capacity_, then event k is ring_[k % capacity_]
  std::size_t capacity_;
  std::uint64_t recorded_ = 0;
  std::vector<label_names> labels_;
  std::unordered_map<std::string, std::uint32_t> label_ids_;
  std::unordered_map<std::uint64_t, std::uint64_t> sent_on_, received_on_;  // (peer, channel) -> messages
  std::map<std::tuple<int, int, std::uint32_t>, std::uint64_t> relayed_on_;  // (source, dest, channel) -> messages
  std::unordered_map<std::uint32_t, std::uint8_t> dimension_offset_;  // endpoint -> header byte (dimension_at)
  std::int16_t next_dimension_ = -1;
  send_cause next_cause_ = send_cause::other;
};

/// The id both ends give the k-th message from `source` to `dest` on `channel`, or 0 when that
/// message gets no arrow (sampling). Below 2^53, so that JSON readers keep it exact.
std::uint64_t flow_id(int source, int dest, std::uint32_t channel, std::uint64_t k) noexcept;

/// Names of send_cause values as written in the file ("full", "timer", ...).
std::string_view to_string(send_cause cause) noexcept;

}  // namespace transit::detail::trace
