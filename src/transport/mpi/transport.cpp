#include "transport/mpi/transport.hpp"

#include "transport/mpi/comm_thread.hpp"
#include "transport/mpi/communicator.hpp"
#include "transport/mpi/environment.hpp"
#include "transport/mpi/wire.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include <unistd.h>

#include "core/backoff.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "core/simulated_costs.hpp"
#include "core/wire_error.hpp"

namespace transit::detail {

using namespace mpi_wire;  // NOLINT: this file speaks the wire format

namespace {
// The receiver named in reports of corrupt messages (core/wire_error.hpp).
constexpr std::string_view receiver = "mpi transport";

// Simulation build: a posted receive's flags until a message lands in it (post_receive). No
// message carries them: every bit outside known_flags is set.
constexpr std::uint32_t nothing_arrived_flags = ~std::uint32_t{0};
static_assert((nothing_arrived_flags & ~known_flags) != 0);

// Simulation build: at most this many sends in flight are left to complete by MPI_Waitany
// (complete_sends).
constexpr std::size_t simulated_sends_left_to_waits = 16;

bool arrived_in_buffer(const message_buffer& buffer) noexcept {
  std::uint32_t flags;
  std::memcpy(&flags, buffer.wire() + offsetof(wire_prefix, flags), sizeof flags);
  return flags != nothing_arrived_flags;
}
}  // namespace

mpi_transport::mpi_transport(MPI_Comm parent, receive_mode mode)
    : max_message_bytes_(max_message_bytes_from_environment()),
      mode_(mode),
      whole_message_bytes_(mode == receive_mode::posted ? std::min(posted_receive_bytes, max_message_bytes_)
                                                        : max_message_bytes_) {
  comm_ = duplicate_communicator(parent);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  mpi_rank_ = rank_;
  start_receiving();
}

mpi_transport::mpi_transport(std::shared_ptr<rank_lanes> lanes, int lane, receive_mode mode)
    : max_message_bytes_(max_message_bytes_from_environment()),
      mode_(mode),
      whole_message_bytes_(mode == receive_mode::posted ? std::min(posted_receive_bytes, max_message_bytes_)
                                                        : max_message_bytes_) {
  TRANSIT_ASSERT(lanes != nullptr && lane >= 0 && lane < lanes->lanes(), "a lane of the rank");
  lanes_ = std::move(lanes);
  lane_ = lane;
  lane_count_ = lanes_->lanes();
  mpi_rank_ = lanes_->mpi_rank();
  comm_ = lanes_->comm(lane);
  rank_ = mpi_rank_ * lane_count_ + lane;
  size_ = lanes_->mpi_size() * lane_count_;
  start_receiving();
}

mpi_transport::mpi_transport(MPI_Comm parent, int lanes, std::function<void(int)> sent, receive_mode mode)
    : max_message_bytes_(max_message_bytes_from_environment()),
      mode_(mode),
      whole_message_bytes_(mode == receive_mode::posted ? std::min(posted_receive_bytes, max_message_bytes_)
                                                        : max_message_bytes_) {
  TRANSIT_ASSERT(lanes >= 1 && lanes <= max_lanes, "lanes fit a prefix's 8 bits");
  comm_ = duplicate_communicator(parent);
  MPI_Comm_rank(comm_, &mpi_rank_);
  MPI_Comm_size(comm_, &size_);
  lane_count_ = lanes;
  rank_ = mpi_rank_ * lanes;  // its first PE, for reports; it sends only to other ranks
  size_ *= lanes;
  sent_ = std::move(sent);
  start_receiving();
}

int mpi_transport::destination_lane(const message& m) noexcept {
  wire_prefix prefix;
  std::memcpy(&prefix, m.data.payload() - message_buffer::prefix_bytes, sizeof prefix);
  return static_cast<int>((prefix.flags >> destination_lane_shift) & (max_lanes - 1));
}

std::unique_ptr<collective_group> mpi_transport::make_point_to_point_group(int tag) {
  TRANSIT_ASSERT(tag != data_tag && tag != piece_tag(0) && (tag < 4096 || tag >= 4096 + max_lanes),
                 "a group's tag is none of the transport's own");
  return make_p2p_group(*this, tag);
}

void mpi_transport::start_receiving() {
  if (mode_ == receive_mode::posted) {
    posted_.resize(posted_receives);
    for (std::size_t slot = 0; slot < posted_.size(); ++slot) post_receive(slot);
  }
}

void mpi_transport::post_receive(std::size_t slot) {
  posted_receive& r = posted_[slot];
  r.buffer = pool_.take(whole_message_bytes_ - message_buffer::prefix_bytes);
  r.complete = false;
  if constexpr (simulated_build) {
    // No message's flags have every bit set (known_flags): the bits say, unchanged, that nothing
    // has arrived yet (arrived_in_buffer).
    std::memcpy(r.buffer.wire() + offsetof(wire_prefix, flags), &nothing_arrived_flags, sizeof nothing_arrived_flags);
  }
  mpi_check(MPI_Irecv(r.buffer.wire(), static_cast<int>(whole_message_bytes_), MPI_BYTE, MPI_ANY_SOURCE, data_tag,
                      comm_, &r.request),
            "MPI_Irecv");
}

mpi_transport::~mpi_transport() {
  // Sends still in flight here are the last control messages of destroyed endpoints (a streamer
  // tells its peers it left), or the items of a program that dropped a streamer mid-step. Each PE
  // completes its own sends while receiving (and dropping) what still arrives, then joins a
  // non-blocking barrier and keeps receiving until it completes: once it has, every PE's sends
  // are matched, so no synchronous send waits for a peer that already left. Not while an
  // exception unwinds this PE (the job is failing: its report must not wait for peers). A job
  // whose sends can never complete gives up after 2 s rather than hang.
  const auto give_up = steady_clock::now() + std::chrono::seconds(2);
  std::vector<message> dropped;
  const auto drain_until = [&](auto&& done) {
    backoff pause;
    while (!done() && steady_clock::now() < give_up) {
      dropped.clear();
      if (poll(dropped, 64) > 0) {
        pause.reset();
      } else {
        pause.idle(pending_sends() > 0);
      }
    }
  };
  drain_until([&] { return in_flight_.empty() && backlogged_ == 0; });
  MPI_Request everyone_drained = MPI_REQUEST_NULL;
  if (lanes_ && std::uncaught_exceptions() == 0) {
    // Every PE of every rank: the lanes share their communicators, so one lane's barrier alone
    // would not say that the other lanes' sends to it were matched.
    const auto everyone = make_lane_group(lanes_->teardown_group(), lane_count_);
    everyone->start_barrier();
    drain_until([&] { return everyone->test(); });
  } else if (std::uncaught_exceptions() == 0 && MPI_Ibarrier(comm_, &everyone_drained) == MPI_SUCCESS) {
    // A barrier that does not complete in time is left to MPI (a collective's request cannot be
    // freed); the job is failing then.
    drain_until([&] {
      int complete = 0;
      MPI_Test(&everyone_drained, &complete, MPI_STATUS_IGNORE);
      return complete != 0;
    });
  }
  if (!in_flight_.empty() || backlogged_ > 0) {
    std::fprintf(stderr, "transit: PE %d: %zu messages were never received (an endpoint was dropped mid-step)\n",
                 rank_, in_flight_.size() + backlogged_);
    for (auto& r : requests_) MPI_Request_free(&r);
  }
  for (auto& r : posted_) {
    if (r.request == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r.request);
    MPI_Request_free(&r.request);
  }
  for (const int source : arriving_sources_) {
    for (auto& a : arriving_[source]) {
      for (auto& r : a.pieces) {
        if (r == MPI_REQUEST_NULL) continue;
        MPI_Cancel(&r);
        MPI_Request_free(&r);
      }
    }
  }
  if (!lanes_) MPI_Comm_free(&comm_);  // with lanes, rank_lanes frees the lanes' communicators
}

void mpi_transport::end_job(const std::string& why) {
  std::fprintf(stderr, "transit: PE %d: %s\n", rank_, why.c_str());
  std::fflush(stderr);
  abort_job();
}

void mpi_transport::send_message(int dest, std::uint32_t channel, message_buffer&& data) {
  send_from(lane_, dest, channel, std::move(data));
}

void mpi_transport::send_confirmed_message(int dest, std::uint32_t channel, message_buffer&& data,
                                           const std::shared_ptr<send_confirmations>& pending) {
  TRANSIT_ASSERT(dest != rank_ && data.size() <= confirmable_bytes() && pending != nullptr,
                 "a confirmed send to this PE, larger than confirmable_bytes() or without a count");
  send_from(lane_, dest, channel, std::move(data), pending);
}

void mpi_transport::send_from(int source_lane, int dest, std::uint32_t channel, message_buffer&& data,
                              std::shared_ptr<send_confirmations> confirm) {
  TRANSIT_ASSERT(dest >= 0 && dest < size_, "send to a rank outside the communicator");
  // Modelled simulation: transit's own cost of a message is the bytes it copied into it and its
  // own per-message cost above MPI's (where the calibration measured it); the MPI library's
  // per-message overheads are SMPI's, charged alike to every MPI message (core/simulated_costs.hpp).
  charge_bytes_copied(data.size());
  const std::uint32_t lanes = static_cast<std::uint32_t>(source_lane) << lane_shift |
                              static_cast<std::uint32_t>(dest % lane_count_) << destination_lane_shift;
  const wire_prefix prefix{channel, lanes, data.size()};
  std::memcpy(data.wire(), &prefix, sizeof prefix);
  if (dest == rank_) {
    to_self_.push_back(message{rank_, channel, std::move(data)});
    return;
  }
  if (lanes_ && mpi_rank_of(dest) == mpi_rank_) {  // a PE thread of this rank: a pointer hand-off
    lanes_->inboxes().deliver(dest % lane_count_, message{rank_, channel, std::move(data)});
    return;
  }
  ++network_messages_;
  charge_transit_message(data.size());  // an MPI message: transit's own cost above MPI's
  if (confirm) confirm->pending.fetch_add(1, std::memory_order_relaxed);
  flow_state& flow = flow_of(dest);
  if (flow.backlogged > 0 || flow.unacked >= max_unacked) {
    backlog_[dest].push_back(backlogged_message{std::move(data), source_lane, std::move(confirm)});
    ++flow.backlogged;
    ++backlogged_;
    return;
  }
  post(dest, flow, std::move(data), source_lane, std::move(confirm));
}

void mpi_transport::post(int dest, flow_state& flow, message_buffer&& data, int source_lane,
                         std::shared_ptr<send_confirmations> confirm) {
  flow.bytes_since_sync += data.wire_size();
  // A confirmed message is synchronous anyway: it serves the flow control too.
  const bool synchronous =
      ++flow.since_sync >= sync_interval || flow.bytes_since_sync >= sync_bytes || confirm != nullptr;
  if (synchronous) {
    flow.since_sync = 0;
    flow.bytes_since_sync = 0;
    ++flow.unacked;
  }
  if (data.wire_size() <= whole_message_bytes_) {
    const void* bytes = data.wire();
    const std::size_t size = data.wire_size();
    post_one(dest, bytes, size, data_tag, synchronous,
             in_flight{std::move(data), nullptr, dest, synchronous, source_lane, std::move(confirm), &flow});
    return;
  }
  TRANSIT_ASSERT(confirm == nullptr, "a confirmed message too large to go whole");
  // Too large for one MPI message (or a posted receive): an announcement with the total size,
  // then the pieces.
  wire_prefix prefix;
  std::memcpy(&prefix, data.wire(), sizeof prefix);
  prefix.flags |= announces_pieces;
  message_buffer announcement = pool_.take(0);
  std::memcpy(announcement.wire(), &prefix, sizeof prefix);
  const void* header = announcement.wire();
  post_one(dest, header, message_buffer::prefix_bytes, data_tag, synchronous,
           in_flight{std::move(announcement), nullptr, dest, synchronous, -1, nullptr, &flow});
  auto whole = std::make_shared<message_buffer>(std::move(data));
  const std::byte* at = whole->payload();
  for (std::size_t left = whole->size(); left > 0;) {
    const std::size_t piece = std::min(left, max_message_bytes_);
    // The lane is told when the last piece has left (pieces complete in about the order posted).
    const int tell = left == piece ? source_lane : -1;
    post_one(dest, at, piece, piece_tag(source_lane), false, in_flight{message_buffer(), whole, dest, false, tell});
    at += piece;
    left -= piece;
  }
}

void mpi_transport::post_one(int dest, const void* bytes, std::size_t size, int tag, bool synchronous,
                             in_flight&& entry) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int count = static_cast<int>(size);  // size <= max_message_bytes_ < INT_MAX
  if (synchronous) {
    mpi_check(MPI_Issend(bytes, count, MPI_BYTE, mpi_rank_of(dest), tag, comm_to(dest), &request), "MPI_Issend");
  } else {
    mpi_check(MPI_Isend(bytes, count, MPI_BYTE, mpi_rank_of(dest), tag, comm_to(dest), &request), "MPI_Isend");
  }
  requests_.push_back(request);
  in_flight_.push_back(std::move(entry));
}

void mpi_transport::complete_sends() {
  // Simulation build: a send that MPI_Test completes stays in SimGrid 3.32's list of its rank's
  // activities for good, and every wait's end scans that list (receive_posted). So while few are
  // in flight sends are left to wait_for_activity's MPI_Waitany, which completes them as waits
  // when the rank is idle: a wait on a finished send returns at once, and the simulated times are
  // the same. They are tested here when messages wait for the flow control (they need a
  // completion now), or when so many are in flight that a wait registering on each of them (and
  // completing one) would cost more than the scans (a direct all-to-all at 256 ranks: 185 s of
  // real time instead of 46 s, docs/simulation.md).
  const bool test_sends =
      !simulated_build || backlogged_ > 0 || requests_.size() > simulated_sends_left_to_waits;
  if (test_sends && !requests_.empty()) {
    completed_.resize(requests_.size());
    int count = 0;
    mpi_check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, completed_.data(),
                           MPI_STATUSES_IGNORE),
              "MPI_Testsome");
    if (count != MPI_UNDEFINED && count > 0) {
      // Remove the completed entries (their requests are now MPI_REQUEST_NULL) from the highest
      // index down, each replaced by the last entry: O(completed), where compacting the whole
      // list cost O(pending) per poll. The order of the list carries no meaning.
      std::sort(completed_.begin(), completed_.begin() + count);
      for (int k = count; k-- > 0;) send_completed(static_cast<std::size_t>(completed_[k]));
    }
  }
  if (backlogged_ == 0) return;
  backlog_.for_each([&](int dest, std::deque<backlogged_message>& queue) {
    flow_state& flow = flow_of(dest);
    while (!queue.empty() && flow.unacked < max_unacked) {
      post(dest, flow, std::move(queue.front().data), queue.front().source_lane, std::move(queue.front().confirm));
      queue.pop_front();
      --flow.backlogged;
      --backlogged_;
    }
  });
}

void mpi_transport::send_completed(std::size_t i) {
  in_flight& done = in_flight_[i];
  if (done.synchronous) --done.flow->unacked;
  if (done.confirm) {
    done.confirm->pending.fetch_sub(1, std::memory_order_relaxed);
    done.confirm.reset();
  }
  if (sent_ && done.source_lane >= 0) sent_(done.source_lane);
  pool_.give(std::move(done.data));
  done.piece_of.reset();  // the last piece to complete frees the large buffer
  if (const std::size_t last = requests_.size() - 1; i != last) {
    requests_[i] = requests_[last];
    in_flight_[i] = std::move(in_flight_[last]);
  }
  requests_.pop_back();
  in_flight_.pop_back();
}

std::size_t mpi_transport::poll_messages(std::vector<message>& sink, std::size_t max) {
  complete_sends();
  std::size_t received = 0;
  if (!to_self_.empty()) {
    received = to_self_.size();
    for (auto& m : to_self_) sink.push_back(std::move(m));
    to_self_.clear();
  }
  if (lanes_) received += lanes_->inboxes().drain(lane_, sink);
  if (!arriving_sources_.empty()) received += hand_over_arrivals(sink);
  if (received < max)
    received += mode_ == receive_mode::posted ? receive_posted(sink, max - received) : receive_probed(sink, max - received);
  return received;
}

std::size_t mpi_transport::receive_posted(std::vector<message>& sink, std::size_t max) {
  std::size_t received = 0;
  while (received < max) {
    posted_receive& slot = posted_[next_posted_];
    if (!slot.complete) {
      if constexpr (simulated_build) {
        // SimGrid 3.32 keeps every communication that MPI_Test completes in its rank's list of
        // activities, and scans that list at the end of every wait: real time grows with the square
        // of the messages (a 16-rank barrier took 60 ms after 200 of them). SMPI writes a
        // message into its buffer when the simulated transfer ends, so the buffer says whether it
        // is complete, and MPI_Wait completes it at once, as a wait, which leaves no trace.
        if (!arrived_in_buffer(slot.buffer)) break;
        mpi_check(MPI_Wait(&slot.request, &slot.status), "MPI_Wait");
      } else {
        int flag = 0;
        mpi_check(MPI_Test(&slot.request, &flag, &slot.status), "MPI_Test");
        if (!flag) break;
      }
    }
    int bytes = 0;
    MPI_Get_count(&slot.status, MPI_BYTE, &bytes);
    const int source = slot.status.MPI_SOURCE;
    message_buffer data = std::move(slot.buffer);
    post_receive(next_posted_);
    next_posted_ = (next_posted_ + 1) % posted_.size();
    received += take_arrival(source, bytes, std::move(data), sink) ? 1 : 0;
  }
  return received;
}

std::size_t mpi_transport::receive_probed(std::vector<message>& sink, std::size_t max) {
  std::size_t received = 0;
  while (received < max) {
    int flag = 0;
    MPI_Status status;
    MPI_Message handle = MPI_MESSAGE_NULL;
    if constexpr (simulated_build) {
      // SMPI has no matched probes. A probe and then a receive from the probed source get the same
      // message: MPI does not let messages of one source and tag overtake, and only this PE's
      // thread receives on comm_ (SMPI runs MPI_THREAD_SINGLE).
      mpi_check(MPI_Iprobe(MPI_ANY_SOURCE, data_tag, comm_, &flag, &status), "MPI_Iprobe");
    } else {
      mpi_check(MPI_Improbe(MPI_ANY_SOURCE, data_tag, comm_, &flag, &handle, &status), "MPI_Improbe");
    }
    if (!flag) break;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    // A message shorter than its prefix still fits the prefix's room (take_arrival reports it).
    const auto wire_bytes = static_cast<std::size_t>(bytes);
    message_buffer data = pool_.take(wire_bytes - std::min(wire_bytes, message_buffer::prefix_bytes));
    if constexpr (simulated_build) {
      mpi_check(MPI_Recv(data.wire(), bytes, MPI_BYTE, status.MPI_SOURCE, data_tag, comm_, MPI_STATUS_IGNORE),
                "MPI_Recv");
    } else {
      mpi_check(MPI_Mrecv(data.wire(), bytes, MPI_BYTE, &handle, MPI_STATUS_IGNORE), "MPI_Mrecv");
    }
    received += take_arrival(status.MPI_SOURCE, bytes, std::move(data), sink) ? 1 : 0;
  }
  return received;
}

bool mpi_transport::take_arrival(int source_rank, int bytes, message_buffer&& data, std::vector<message>& sink) {
  // The prefix is checked before it is used (core/wire_error.hpp); until its lane bits are known
  // good, the sender is named by its rank's first PE.
  const int first_pe = source_rank * lane_count_;
  const auto wire_bytes = static_cast<std::uint64_t>(bytes);
  if (wire_bytes < message_buffer::prefix_bytes)
    corrupt_message(receiver, "message", first_pe,
                    concat(bytes, " bytes, shorter than the ", message_buffer::prefix_bytes, "-byte wire prefix"));
  wire_prefix prefix;
  std::memcpy(&prefix, data.wire(), sizeof prefix);
  if ((prefix.flags & ~known_flags) != 0)
    corrupt_message(receiver, "wire prefix", first_pe, concat("unknown flag bits ", prefix.flags & ~known_flags));
  if (source_lane_of(prefix.flags) >= lane_count_)
    corrupt_message(receiver, "wire prefix", first_pe,
                    concat("its sender's lane is ", source_lane_of(prefix.flags), ", a rank runs ", lane_count_,
                           " PE thread(s)"));
  const int source = first_pe + source_lane_of(prefix.flags);  // the sending PE
  // Modelled simulation: SMPI charges no receiver's overhead for a send that is not detached;
  // transit's own cost above MPI's comes on top.
  charge_receive_overhead(static_cast<std::size_t>(bytes));
  charge_transit_message(static_cast<std::size_t>(bytes));
  if (prefix.flags & announces_pieces) {
    if (wire_bytes != message_buffer::prefix_bytes)
      corrupt_message(receiver, "announcement of a large message", source,
                      concat(bytes, " bytes, expected ", message_buffer::prefix_bytes));
    if (prefix.payload_bytes == 0)
      corrupt_message(receiver, "announcement of a large message", source, "it announces 0 bytes");
    pool_.give(std::move(data));
    receive_announced(source, prefix);
    return false;
  }
  if (prefix.payload_bytes != wire_bytes - message_buffer::prefix_bytes)
    corrupt_message(receiver, concat("message on channel ", prefix.channel), source,
                    concat("its prefix says ", prefix.payload_bytes, " payload bytes, ",
                           wire_bytes - message_buffer::prefix_bytes, " arrived"));
  data.set_size(prefix.payload_bytes);
  if (!arriving_.empty(source)) {  // behind a large message still arriving: keep the order
    arriving_[source].push_back(arriving{message{source, prefix.channel, std::move(data)}, {}});
    return false;
  }
  sink.push_back(message{source, prefix.channel, std::move(data)});
  return true;
}

void mpi_transport::receive_announced(int source, const wire_prefix& announced) {
  const std::uint64_t payload_bytes = announced.payload_bytes;
  arriving a{message{source, announced.channel, pool_.take(payload_bytes)}, {}};
  a.m.data.set_size(payload_bytes);
  // The message keeps its prefix, as a whole one does: the communication thread reads the
  // destination lane there (destination_lane).
  wire_prefix kept = announced;
  kept.flags &= ~announces_pieces;
  std::memcpy(a.m.data.wire(), &kept, sizeof kept);
  std::byte* at = a.m.data.payload();
  for (std::uint64_t left = payload_bytes; left > 0;) {
    const std::size_t piece = std::min<std::uint64_t>(left, max_message_bytes_);
    MPI_Request request = MPI_REQUEST_NULL;
    mpi_check(MPI_Irecv(at, static_cast<int>(piece), MPI_BYTE, mpi_rank_of(source), piece_tag(source % lane_count_),
                        comm_, &request),
              "MPI_Irecv");
    a.pieces.push_back(request);
    at += piece;
    left -= piece;
  }
  if (arriving_.empty(source)) arriving_sources_.push_back(source);
  arriving_[source].push_back(std::move(a));
}

void mpi_transport::charge_pieces_received(std::uint64_t payload_bytes) const {
  if constexpr (simulated_build) {
    for (std::uint64_t left = payload_bytes; left > 0;) {
      const std::size_t piece = std::min<std::uint64_t>(left, max_message_bytes_);
      charge_receive_overhead(piece);
      left -= piece;
    }
  }
}

// Hands over, per source, the large messages whose pieces have all arrived and the messages
// queued behind them, in order; stops at a large message still arriving.
std::size_t mpi_transport::hand_over_arrivals(std::vector<message>& sink) {
  std::size_t handed = 0;
  std::size_t kept = 0;
  for (const int source : arriving_sources_) {
    auto& queue = arriving_[source];
    while (!queue.empty()) {
      auto& front = queue.front();
      if (!front.pieces.empty()) {
        int done = 0;
        mpi_check(MPI_Testall(static_cast<int>(front.pieces.size()), front.pieces.data(), &done,
                              MPI_STATUSES_IGNORE),
                  "MPI_Testall");
        if (!done) break;
        charge_pieces_received(front.m.data.size());
        front.pieces.clear();
      }
      sink.push_back(std::move(front.m));
      queue.pop_front();
      ++handed;
    }
    if (!queue.empty()) arriving_sources_[kept++] = source;
  }
  arriving_sources_.resize(kept);
  return handed;
}

bool mpi_transport::wait_for_activity() {
  if constexpr (!simulated_build) return false;  // a real rank shares its core: MPI's waits would spin
  if (mode_ != receive_mode::posted || polling_held() || !to_self_.empty()) return false;
  if (posted_[next_posted_].complete) return false;  // a message is in already: poll it
  waited_.clear();
  waited_entries_.clear();
  const auto wait_for = [&](MPI_Request& r, waited_entry::kind what, std::size_t index) {
    if (r == MPI_REQUEST_NULL) return;
    waited_.push_back(r);
    waited_entries_.push_back(waited_entry{what, index, &r});
  };
  // The oldest posted receive only: messages are handled in the order posted, and a later one
  // cannot complete before the oldest is matched (they match in order).
  wait_for(posted_[next_posted_].request, waited_entry::receive, next_posted_);
  for (std::size_t i = 0; i < requests_.size(); ++i) wait_for(requests_[i], waited_entry::send, i);
  for (const int source : arriving_sources_) {
    for (auto& a : arriving_[source])
      for (auto& piece : a.pieces) wait_for(piece, waited_entry::piece, 0);
  }
  for (collective_requests* g : live_groups_)
    for (MPI_Request& r : g->requests()) wait_for(r, waited_entry::collective, 0);
  int index = MPI_UNDEFINED;
  MPI_Status status;
  mpi_check(MPI_Waitany(static_cast<int>(waited_.size()), waited_.data(), &index, &status), "MPI_Waitany");
  if (index == MPI_UNDEFINED) return false;
  // MPI_Waitany completed and freed that request: record it where it belongs.
  const waited_entry& e = waited_entries_[static_cast<std::size_t>(index)];
  *e.where = MPI_REQUEST_NULL;
  switch (e.what) {
    case waited_entry::receive:
      posted_[e.index].complete = true;
      posted_[e.index].status = status;
      break;
    case waited_entry::send: send_completed(e.index); break;
    case waited_entry::piece:       // MPI_Testall counts a null request complete
    case waited_entry::collective: break;
  }
  return true;
}

std::unique_ptr<collective_group> mpi_transport::make_group() {
  if (lanes_) return make_lane_group(lanes_->group(lane_groups_made_++), lane_count_);
  if (groups_on_point_to_point()) return make_p2p_group(*this, take_group_tag());
  return make_mpi_group(*this);
}

// Point-to-point groups under SimGrid (SMPI's own non-blocking collectives cost P^2 messages or run
// through rank 0: docs/simulation.md). On real MPI too when every rank has a CPU of its own: a
// 2-rank step's end, whose closing barrier is one round, took 0.88 us against 1.10 us on Open
// MPI's MPI_Ibarrier (BENCHMARKS.md, issue 53). With more ranks than CPUs on a host, Open MPI's
// own ran 4 ranks' step ends on 2 cores in 16.5 us against 24 us on point-to-point rounds, which
// advance only when their rank runs to test them; so there the groups are MPI's.
bool mpi_transport::groups_on_point_to_point() {
  if (groups_on_point_to_point_) return *groups_on_point_to_point_;
  bool chosen = true;
  if constexpr (simulated_build) {
    // The census (docs/simulation.md) charges every message of these; SMPI's own it would not.
  } else if (collectives_ == collectives_mode::mpi) {
    chosen = false;
  } else if (collectives_ == collectives_mode::automatic) {
    MPI_Comm host = MPI_COMM_NULL;
    mpi_check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, mpi_rank_, MPI_INFO_NULL, &host),
              "MPI_Comm_split_type");
    int ranks_on_host = 1;
    MPI_Comm_size(host, &ranks_on_host);
    MPI_Comm_free(&host);
    int every_rank_has_a_cpu = ranks_on_host <= sysconf(_SC_NPROCESSORS_ONLN) ? 1 : 0;
    mpi_check(MPI_Allreduce(MPI_IN_PLACE, &every_rank_has_a_cpu, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
    chosen = every_rank_has_a_cpu != 0;
  }
  groups_on_point_to_point_ = chosen;
  return chosen;
}

int mpi_transport::take_group_tag() {
  for (int tried = 0; tried < group_tags; ++tried) {
    const int tag = first_group_tag + group_tags_taken_++ % group_tags;
    if (std::find(group_tags_in_use_.begin(), group_tags_in_use_.end(), tag) != group_tags_in_use_.end()) continue;
    group_tags_in_use_.push_back(tag);
    return tag;
  }
  throw std::runtime_error(concat("transit: ", group_tags,
                                  " collective groups are alive at once on one MPI communicator, as many as the "
                                  "mpi backend has tags for (each streamer, active_messages and global array "
                                  "holds one); destroy some before making more"));
}

}  // namespace transit::detail

