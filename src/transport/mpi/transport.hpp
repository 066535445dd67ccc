#pragma once
// The mpi backend: one PE per rank, non-blocking point-to-point on a communicator of its own.
//
// Flow control, so no receiver's unexpected-message queue grows without bound: a message to a
// destination is sent synchronously (MPI_Issend) once `sync_interval` messages or
// `sync_bytes` bytes have gone there since the last synchronous one, and at most `max_unacked`
// such messages per destination may be unmatched; later messages wait in a per-destination
// backlog here, at the sender, drained as the receiver matches. MPI's non-overtaking rule then
// bounds the unmatched messages from one sender to sync_interval * (max_unacked + 1), and their
// bytes to about (sync_bytes + one message) * (max_unacked + 1). The bound is in bytes first: it
// is the receiver's memory that it protects. Counted in messages alone (every 16th synchronous),
// it held a sender of one-item messages to 64 unmatched messages (2.5 KiB): the sender then
// waited for the receiver at every 64th message, and its naps left the receiver idle
// (`--scheme none`, issue 13). send() itself never blocks, so a PE that is waiting can always
// keep receiving (no hold-and-wait).
//
// Large messages: MPI counts bytes in int, and one message of many GiB would hold the shared-memory
// pipe. A message above `max_message_bytes` (default 1 GiB; env TRANSIT_MAX_MESSAGE_BYTES lowers
// it, for tests) travels as a 16-byte announcement on the data tag, carrying its total size, and
// then as pieces of at most max_message_bytes on the piece tag, sent at once and received straight
// into the final buffer (Irecv posted when the announcement is matched; MPI's non-overtaking rule
// pairs pieces with announcements in order). Later messages from the same source are held back
// until the large one is complete, so order per source and channel is kept.
//
// Receiving, two ways (TRANSIT_MPI_RECEIVE, receive_mode below):
//  - probe: MPI_Improbe, then MPI_Mrecv into a buffer of the probed size (MPI_Iprobe and MPI_Recv
//    from the probed source under SimGrid, which has no matched probes). No buffer waits for a
//    message that has not come.
//  - posted: a ring of `posted_receives` receives from any source, each of posted_receive_bytes,
//    posted ahead and handled in the order posted (which keeps MPI's per-source order: a source's
//    messages match the posted receives in order). A message lands straight in its buffer, and an
//    idle rank can block inside MPI until something arrives (wait_for_activity): under SimGrid
//    that is one simulator call per wait instead of one per poll, which is what lets thousands of
//    simulated ranks finish (docs/simulation.md). A message larger than a posted receive goes as
//    an announcement and pieces, as a large message does.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "transit/detail/transport/transport.hpp"
#include "transport/mpi/collective_groups.hpp"
#include "transport/mpi/lanes.hpp"
#include "transport/mpi/queues.hpp"
#include "transport/mpi_access.hpp"
#include "transport/node_memory.hpp"

namespace transit::detail {

namespace mpi_wire {
struct wire_prefix;  // transport/mpi/wire.hpp
}  // namespace mpi_wire

class mpi_transport final : public transport, public mpi_access {
 public:
  static constexpr int sync_interval = 256;
  static constexpr std::size_t sync_bytes = std::size_t{64} << 10;
  static constexpr int max_unacked = 4;
  static constexpr std::size_t default_max_message_bytes = std::size_t{1} << 30;
  /// Receives posted ahead in `posted` mode, and the bytes of each (prefix included): above Open
  /// MPI's 32 KiB eager limit, so every aggregated message of transit's default sizes fits.
  static constexpr int posted_receives = 4;
  static constexpr std::size_t posted_receive_bytes = std::size_t{64} << 10;
  enum class receive_mode { probe, posted };
  /// How make_group runs a group's collectives (TRANSIT_MPI_COLLECTIVES).
  enum class collectives_mode {
    automatic,       // point_to_point unless some host runs more ranks than it has CPUs
    point_to_point,  // p2p_group: recursive doubling on a tag of comm() per group
    mpi,             // mpi_group: MPI_Iallreduce and MPI_Ibarrier on a communicator per group
  };

  /// Collective over `parent`: duplicates it, so transit's traffic never meets the program's.
  explicit mpi_transport(MPI_Comm parent, receive_mode mode = receive_mode_from_environment());
  /// PE `lane` of a rank that runs lanes->lanes() PEs (rank_lanes); one per PE thread, used by
  /// that thread only. Local: the communicators are the lanes'.
  mpi_transport(std::shared_ptr<rank_lanes> lanes, int lane, receive_mode mode = receive_mode_from_environment());
  /// The communication thread's endpoint (comm_thread_hub): collective over `parent`; sends for
  /// the `lanes` PE threads of its rank (send_from) and receives for all of them, each arrival's
  /// destination lane in its prefix (destination_lane). `sent(lane)` is called when a message
  /// that lane handed over has left (its buffer is free). Used by the communication thread only.
  mpi_transport(MPI_Comm parent, int lanes, std::function<void(int)> sent,
                receive_mode mode = receive_mode_from_environment());
  ~mpi_transport() override;
  /// send() on behalf of PE thread `source_lane` of this rank (the communication thread's endpoint).
  void send_from(int source_lane, int dest, std::uint32_t channel, message_buffer&& data,
                 std::shared_ptr<send_confirmations> confirm = nullptr);
  /// The lane of the PE a received message is for (its prefix says: send_from wrote it).
  static int destination_lane(const message& m) noexcept;
  /// A collective group of this endpoint that runs on point-to-point messages with `tag` (a tag of
  /// its own per group) of comm(): no communicator per group. Collective in the order of `tag`.
  std::unique_ptr<collective_group> make_point_to_point_group(int tag);

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string_view backend() const noexcept override { return "mpi"; }
  int process() const noexcept override { return mpi_rank_; }
  bool idle_poll_may_yield() const noexcept override { return true; }  // MPI_Improbe, MPI_Testsome
  std::size_t pending_sends() const noexcept override { return in_flight_.size() + backlogged_; }
  /// Whole messages, by MPI_Issend: its completion means the receiver matched the message, and
  /// it matches only in its own improbe, whose MPI_Mrecv follows at once (probe mode), or in
  /// SimGrid, where a posted receive completes when the synchronous send does. Not with lanes
  /// (a message to a lane of this rank is a pointer hand-off) nor in posted mode on real MPI
  /// (a posted receive that matched a rendezvous may still be receiving when the send completes).
  std::size_t confirmable_bytes() const noexcept override {
    if (lanes_ || (mode_ == receive_mode::posted && !simulated_build)) return 0;
    return whole_message_bytes_ - message_buffer::prefix_bytes;
  }
  bool confirms_before_hand_over() const noexcept override {
    return mode_ == receive_mode::posted && confirmable_bytes() > 0;  // a simulated rank
  }
  std::unique_ptr<collective_group> make_group() override;
  bool wait_for_activity() override;
  bool aborted() const noexcept override { return false; }
  [[noreturn]] void end_job(const std::string& why) override;
  mpi_access* mpi() noexcept override { return this; }
  /// Helper mode's node memory (src/transport/mpi/node_memory.cpp).
  std::unique_ptr<node_memory> make_node_memory(const node_memory_setup& setup) override;
  MPI_Comm comm() const noexcept override { return comm_; }
  int lanes() const noexcept override { return lane_count_; }
  int lane() const noexcept override { return lane_; }
  std::size_t max_message_bytes() const noexcept override { return max_message_bytes_; }
  /// This thread calls MPI for this PE.
  void on_mpi_thread(const std::function<void()>& work) override { work(); }
  /// Largest message (prefix included) sent whole; larger ones go as an announcement and pieces.
  std::size_t whole_message_bytes() const noexcept { return whole_message_bytes_; }
  receive_mode receiving() const noexcept { return mode_; }
  void add_group(collective_requests* g) { live_groups_.push_back(g); }
  void remove_group(collective_requests* g) { std::erase(live_groups_, g); }
  /// A group made by make_group on point-to-point messages gives its tag back when destroyed.
  void release_group_tag(int tag) { std::erase(group_tags_in_use_, tag); }
  /// TRANSIT_MPI_RECEIVE: `probe` or `posted`; unset: posted under SimGrid, else probe. Throws
  /// std::invalid_argument naming the value otherwise.
  static receive_mode receive_mode_from_environment();
  /// TRANSIT_MPI_COLLECTIVES: `point-to-point`, `mpi` or `automatic`; unset: automatic. Throws
  /// std::invalid_argument naming the value otherwise.
  static collectives_mode collectives_from_environment();

 private:
  void send_message(int dest, std::uint32_t channel, message_buffer&& data) override;
  std::size_t poll_messages(std::vector<message>& sink, std::size_t max) override;
  void send_confirmed_message(int dest, std::uint32_t channel, message_buffer&& data,
                              const std::shared_ptr<send_confirmations>& pending) override;
  // Flow control per destination, for the destinations sent to so far (a hash map for the reason
  // per_peer_queues gives; its entries never move, so a pointer to one stays valid).
  struct flow_state {
    int since_sync = 0;                // messages since the last synchronous one
    std::size_t bytes_since_sync = 0;  // their bytes
    int unacked = 0;                   // synchronous messages not yet matched
    std::size_t backlogged = 0;        // messages waiting in backlog_[dest]
  };
  struct in_flight {
    message_buffer data;                   // whole messages
    std::shared_ptr<message_buffer> piece_of;  // pieces of a large message share its buffer
    int dest;
    bool synchronous;
    int source_lane = -1;  // comm-thread endpoint: the lane told when this message has left
    std::shared_ptr<send_confirmations> confirm = nullptr;  // send_confirmed's, counted down on completion
    flow_state* flow = nullptr;  // dest's, when synchronous: its unacked count drops on completion
  };
  /// A large message being received in pieces, or a whole one held back behind it.
  struct arriving {
    message m;
    std::vector<MPI_Request> pieces;  // empty when complete
  };
  void post(int dest, flow_state& flow, message_buffer&& data, int source_lane,
            std::shared_ptr<send_confirmations> confirm);
  void post_one(int dest, const void* bytes, std::size_t size, int tag, bool synchronous, in_flight&& entry);
  void complete_sends();
  void send_completed(std::size_t index);  // in_flight_[index]'s request has completed
  void post_receive(std::size_t slot);
  std::size_t receive_posted(std::vector<message>& sink, std::size_t max);
  std::size_t receive_probed(std::vector<message>& sink, std::size_t max);
  // A message taken from the network (its wire bytes in `data`); false when it was held back or
  // was an announcement (nothing for the sink yet).
  bool take_arrival(int source, int bytes, message_buffer&& data, std::vector<message>& sink);
  void receive_announced(int source, const mpi_wire::wire_prefix& announced);
  // Modelled simulation: the receiver's overhead of each piece of a large message.
  void charge_pieces_received(std::uint64_t payload_bytes) const;
  std::size_t hand_over_arrivals(std::vector<message>& sink);
  void start_receiving();
  // Where a message to PE `dest` goes: its rank, and the communicator its lane receives on.
  int mpi_rank_of(int dest) const noexcept { return dest / lane_count_; }
  MPI_Comm comm_to(int dest) const noexcept { return lanes_ ? lanes_->comm(dest % lane_count_) : comm_; }

  MPI_Comm comm_ = MPI_COMM_NULL;  // this PE receives on it (its lane's, with lanes)
  int rank_ = 0;   // this PE
  int size_ = 0;   // PEs of the job
  std::shared_ptr<rank_lanes> lanes_;  // null: one PE per rank
  int lane_ = 0, lane_count_ = 1;
  std::size_t lane_groups_made_ = 0;
  std::uint64_t node_memories_made_ = 0;
  std::function<void(int)> sent_;  // the comm-thread endpoint's: a lane's message has left
  int mpi_rank_ = 0;
  std::vector<MPI_Request> requests_;  // parallel to in_flight_
  std::vector<in_flight> in_flight_;
  /// The flow state of `dest`, made when first sent to. Remembers the last destination: a PE that
  /// sends one-item messages sends many in a row to the same peer, and four hash lookups per
  /// message (with the backlog's) held `--scheme none` about 15% below its rate (issue 53).
  flow_state& flow_of(int dest) {
    if (dest != last_flow_dest_) {
      last_flow_ = &flow_[dest];
      last_flow_dest_ = dest;
    }
    return *last_flow_;
  }
  std::unordered_map<int, flow_state> flow_;
  int last_flow_dest_ = -1;
  flow_state* last_flow_ = nullptr;
  struct backlogged_message {
    message_buffer data;
    int source_lane;
    std::shared_ptr<send_confirmations> confirm;
  };
  per_peer_queues<backlogged_message> backlog_;  // per destination
  std::size_t backlogged_ = 0;
  std::vector<message> to_self_;
  std::vector<int> completed_;         // scratch for MPI_Testsome
  std::size_t max_message_bytes_ = default_max_message_bytes;
  per_peer_queues<arriving> arriving_;  // per source: a large message and what follows it
  std::vector<int> arriving_sources_;           // sources whose arriving_ queue is not empty
  receive_mode mode_;
  std::size_t whole_message_bytes_;
  struct posted_receive {
    message_buffer buffer;
    MPI_Request request = MPI_REQUEST_NULL;
    bool complete = false;  // completed by wait_for_activity; `status` holds its status
    MPI_Status status{};
  };
  std::vector<posted_receive> posted_;  // the ring (posted mode)
  std::size_t next_posted_ = 0;         // the oldest: handled first
  // wait_for_activity's scratch: the requests waited for, and what each is.
  std::vector<MPI_Request> waited_;
  struct waited_entry {
    enum kind { receive, send, piece, collective } what;
    std::size_t index;
    MPI_Request* where;  // pieces and collectives: the request to clear
  };
  std::vector<waited_entry> waited_entries_;
  std::vector<collective_requests*> live_groups_;  // their requests are waited on too
  // Groups on point-to-point messages (p2p_group in collective_groups.cpp) are tags of comm_ from
  // first_group_tag, below the lanes' piece tags (4096 up), taken in turn and skipping the tags of
  // groups still alive. Every rank makes and destroys its groups in the same order, so every rank
  // skips the same ones and they agree on each group's tag.
  static constexpr int first_group_tag = 16;
  static constexpr int group_tags = 4096 - first_group_tag;
  /// The tag of a new group (collective); throws std::runtime_error when all are in use.
  int take_group_tag();
  /// Whether make_group's groups run on point-to-point messages: decided at the first group
  /// (collective), the same on every rank.
  bool groups_on_point_to_point();
  collectives_mode collectives_ = collectives_from_environment();
  std::optional<bool> groups_on_point_to_point_;
  int group_tags_taken_ = 0;
  std::vector<int> group_tags_in_use_;
};

}  // namespace transit::detail
