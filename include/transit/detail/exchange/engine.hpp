#pragma once
// The item-type-independent half of sparse_exchange<T>: it moves records of bytes, one per
// (source, destination) pair with data, by one of the methods, and chooses among them. The typed
// layer on top groups parcels into records and copies the arrived records into parcels.
//
// Records. A source concatenates its parcels to one destination, in the order given, into one
// record; parcels to itself never leave it. Sizes are 64-bit throughout; a message may exceed
// 2^31 bytes (the mpi transport splits what it cannot send at once).
//
// Message layout (payload of one transport message on the exchange's own channel):
//   wire_header | direct data (or confirmed data): the record's bytes
//               | stage / phase: records, each record_header | bytes | zero pad to 8
//   direct ack: wire_header only.
//
// Runs never mix: every message carries the run number, and a message of a later run (a peer that
// finished this run first) waits in a parking list until this PE gets there. A PE is at most one
// run ahead of another: no PE finishes a run before every PE has started it, since every method's
// end waits on each PE's contribution (a collective, or for the crystal router and grid a chain of
// messages from each PE, see Volume).
//
// direct (nonblocking consensus, Hoefler et al.): each record goes in one message; the receiver
// answers each with an ack, unless the transport confirms the message's delivery itself
// (transport::send_confirmed, the mpi transport's MPI_Issend: NBX proper; such messages are of kind
// confirmed and get no ack). A PE whose records are all acknowledged or confirmed joins a nonblocking allreduce
// on the exchange's own collective group and keeps receiving (and acking) until it completes.
// When it completes every PE has had all its records acknowledged, so every record has arrived:
// no PE needs to know its sources in advance, and memory and messages stay O(neighbours).
//
// crystal_router (Fox et al., gslib's crystal.c): the range [bl, bl+n) of PEs is split into a
// lower half of ceil(n/2) and an upper half of floor(n/2). Each PE sends the records bound for the
// other half to its mirror partner bl+n-1-(id-bl), keeps the rest, and recurses into its own half.
// For odd n the middle PE is its own mirror: it sends to the first PE of the upper half, which
// then receives twice (from its mirror and from the middle). ceil(log2 P) stages, one message per
// stage per PE (empty ones too, so every PE knows how many messages a stage brings).
//
// grid: records follow the grid router (include/transit/grid/router.hpp) phase by phase. In phase
// k a PE sends one message on each of its phase-k links (empty ones too) holding every record
// whose next hop is that link, then waits for one message on each of its phase-k in-links. Routes
// raise phases strictly, so a record received in phase k leaves in a later phase of this run.
//
// Volume, for automatic: every method also computes the largest per-PE volume of the run (bytes a
// PE sends to others) at no extra message: direct in its final allreduce, the collectives in their
// count exchanges, crystal router and grid in wire_header::volume, where each message carries the
// largest volume its sender has seen. Every pair of PEs is joined by a chain of messages, each
// sent after the previous one arrived, so every PE ends with the same maximum.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transit/detail/exchange/selection.hpp"
#include "transit/exchange/options.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace transit::detail {

struct exchange_wire_header {
  std::uint32_t run;
  std::uint16_t kind;      // exchange_message_kind
  std::uint16_t step;      // crystal router stage or grid phase
  std::uint64_t records;   // stage / phase: records that follow
  std::uint64_t volume;    // stage / phase: largest run volume the sender has seen
};
static_assert(sizeof(exchange_wire_header) == 24);

struct exchange_record_header {
  std::int32_t dest;
  std::int32_t source;
  std::uint64_t bytes;  // payload bytes, before the pad
};
static_assert(sizeof(exchange_record_header) == 16);

enum class exchange_message_kind : std::uint16_t { data = 1, ack = 2, stage = 3, phase = 4, confirmed = 5 };

/// Contiguous bytes of one parcel.
struct byte_span {
  const std::byte* data = nullptr;
  std::uint64_t bytes = 0;
};

/// Everything one PE sends to one other PE in a run: its parcels there, in order.
struct outgoing_record {
  int dest = -1;
  std::uint64_t bytes = 0;
  std::size_t first_span = 0;  // into outgoing_plan::spans
  std::size_t span_count = 0;
};

/// One run's outgoing records, sorted by destination, destination != this PE, bytes > 0.
struct outgoing_plan {
  std::vector<outgoing_record> records;
  std::vector<byte_span> spans;
  /// Copies bytes [offset, offset + n) of `r` to `out`.
  void copy(const outgoing_record& r, std::uint64_t offset, std::uint64_t n, std::byte* out) const;
};

/// A record that arrived for this PE; its bytes stay valid until exchange_engine::release().
struct incoming_record {
  int source = -1;
  const std::byte* data = nullptr;
  std::uint64_t bytes = 0;
};

class exchange_method_impl;  // src/exchange/methods.hpp


/// Messaging shared by the methods that use the transport: the exchange's channel, the parking
/// list for later runs, held buffers and counters.
class exchange_port {
 public:
  exchange_port(context& ctx, exchange_stats& stats);
  ~exchange_port();
  exchange_port(const exchange_port&) = delete;
  exchange_port& operator=(const exchange_port&) = delete;

  context& ctx() noexcept { return ctx_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  /// The exchange's channel (its messages, and a test's forged ones).
  std::uint32_t channel() const noexcept { return channel_; }
  exchange_stats& stats() noexcept { return stats_; }
  collective_group& group() noexcept { return *group_; }

  /// A buffer with room for a wire header and `body_bytes`, the header filled in.
  message_buffer make_message(exchange_message_kind kind, std::uint16_t step, std::uint64_t body_bytes);
  /// Sends (and counts) a message made by make_message.
  void send(int dest, message_buffer&& m);
  /// Whether send_confirmed takes a message of `bytes` payload bytes (header included) to `dest`.
  bool confirmable(int dest, std::uint64_t bytes) const noexcept;
  /// As send(), through transport::send_confirmed: counted in unconfirmed() until the transport
  /// confirms it. Requires confirmable().
  void send_confirmed(int dest, message_buffer&& m);
  std::uint64_t unconfirmed() const noexcept;
  /// Whether a confirmed message may have left the network here before a poll of this PE handed it
  /// over (transport::confirms_before_hand_over): then receive() again after the consensus.
  bool confirms_before_hand_over() const noexcept;
  /// Moves what arrived on the channel for the current run into inbox(), parking later runs.
  /// Returns whether anything arrived for the current run.
  bool receive();
  std::vector<message>& inbox() noexcept { return inbox_; }
  /// Hands every inbox message of `kind` and `step` to each(message&, const exchange_wire_header&)
  /// and removes it from the inbox; returns how many.
  template <class Each>
  std::size_t take(exchange_message_kind kind, std::uint16_t step, Each&& each);
  /// Keeps a received buffer alive until release() (records point into it).
  void hold(message_buffer&& b) { held_.push_back(std::move(b)); }

  /// Lets messages of any later run park, not only the next run's: a fixed pattern's direct method
  /// runs without consensus, so a sender may be runs ahead of a receiver that sends it nothing.
  void allow_runs_ahead() noexcept { runs_ahead_ = true; }
  /// Starts run `run`: parked messages of that run enter the inbox.
  void begin_run(std::uint32_t run);
  std::uint32_t run() const noexcept { return run_; }
  /// Recycles held buffers.
  void release();
  /// Lines for watchdog reports.
  std::string describe() const;
  /// Reports a received message that fails a check (core/wire_error.hpp): throws wire_error
  /// "sparse_exchange #<channel>: corrupt <message> from PE <source>: <problem>".
  [[noreturn]] void corrupt(int source, std::string_view message, std::string_view problem) const;

 private:
  void check_header(const message& m, const exchange_wire_header& h) const;
  /// A message about to leave, by send() or send_confirmed(): counted, and charged in simulation.
  void count_sent(const message_buffer& m);

  context& ctx_;
  exchange_stats& stats_;
  const int rank_;
  const int size_;
  const std::uint32_t channel_;
  std::unique_ptr<collective_group> group_;
  std::shared_ptr<send_confirmations> confirmations_ = std::make_shared<send_confirmations>();
  std::uint32_t run_ = 0;
  bool runs_ahead_ = false;
  std::vector<message> arrivals_;
  std::vector<message> inbox_;
  std::vector<message> parked_;
  std::vector<message_buffer> held_;
};

template <class Each>
std::size_t exchange_port::take(exchange_message_kind kind, std::uint16_t step, Each&& each) {
  std::size_t taken = 0, kept = 0;
  for (std::size_t i = 0; i < inbox_.size(); ++i) {
    exchange_wire_header h;
    std::memcpy(&h, inbox_[i].data.payload(), sizeof h);
    if (h.kind == static_cast<std::uint16_t>(kind) && h.step == step) {
      each(inbox_[i], h);
      ++taken;
    } else {
      if (kept != i) inbox_[kept] = std::move(inbox_[i]);
      ++kept;
    }
  }
  inbox_.resize(kept);
  return taken;
}

class exchange_engine {
 public:
  /// Collective. Throws std::invalid_argument for an MPI method without the mpi backend, a grid
  /// for another PE count, or a bad TRANSIT_EXCHANGE_METHOD.
  exchange_engine(context& ctx, const exchange_options& options, std::size_t item_bytes);
  ~exchange_engine();
  exchange_engine(const exchange_engine&) = delete;
  exchange_engine& operator=(const exchange_engine&) = delete;

  /// Collective. Moves `out`'s records; appends the arrived ones to `in`, sorted by source. With
  /// exchange_options::fixed_pattern, throws std::invalid_argument before communicating when `out`
  /// sends other byte counts or to other PEs than this PE's first run did.
  void run(const outgoing_plan& out, std::vector<incoming_record>& in);
  /// Local: lets go of the memory incoming records of the last run point into.
  void release();
  /// Local: counts item bytes handed to the caller (the typed layer adds self-sends).
  void count_delivered(std::uint64_t bytes) noexcept { stats_.bytes_delivered += bytes; }
  exchange_method method() const noexcept { return last_; }
  const exchange_stats& stats() const noexcept { return stats_; }
  int rank() const noexcept { return port_.rank(); }
  int size() const noexcept { return port_.size(); }

 private:
  exchange_method_impl& impl(exchange_method m);
  exchange_method next_method() const;
  void after_automatic_run(std::uint64_t volume, double seconds);
  /// Reports a message of this run left unread, or a record that is no whole number of items.
  void check_arrived(exchange_method m, const std::vector<incoming_record>& in);
  /// fixed_pattern: records the first run's (destination, bytes), checks every later run's.
  void check_fixed(const outgoing_plan& out);
  void start_choice();
  void start_phase();
  void choose();

  // Checked before port_ opens a channel and a group: a bad option throws before any collective.
  context& ctx_;
  exchange_stats stats_;
  virtual_grid grid_;
  std::size_t item_bytes_;
  exchange_method requested_;
  const bool fixed_pattern_;
  std::vector<std::pair<int, std::uint64_t>> fixed_records_;  // fixed_pattern: the first run's
  exchange_port port_;
  std::vector<exchange_method> candidates_;            // automatic only
  std::vector<std::unique_ptr<exchange_method_impl>> impls_;  // by exchange_method value
  exchange_method last_ = exchange_method::automatic;  // before the first run: what will run
  bool last_used_transport_ = false;
  // automatic (the schedule: selection.hpp): the choice being made, where in its current plan
  // this PE is, and each batch's time on this PE; settled once chosen.
  bool settled_ = false;
  std::unique_ptr<exchange_selection> selection_;
  std::size_t batch_ = 0;
  std::size_t run_in_batch_ = 0;
  std::vector<double> batch_seconds_;
  std::uint64_t settled_volume_ = 0;
  int diagnostic_id_ = -1;
};

}  // namespace transit::detail
