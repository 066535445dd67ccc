#pragma once
// PE threads in MPI ranks (--transit-threads-per-rank, docs/hybrid.md): what a rank's PE threads
// share, and their collective groups.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "transit/detail/transport/transport.hpp"
#include "transport/local/world.hpp"
#include "transport/node_memory.hpp"

namespace transit::detail {

class comm_thread_hub;

/// The state one collective group shares between the PE threads of a rank (rank_lanes::group).
struct lane_group_state {
  struct slot {
    int arrived = 0, departed = 0;
    bool started = false, done = false;
    std::vector<std::uint64_t> values;  // the lanes' values combined, then the rank's result
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::mutex mutex;
  MPI_Comm comm = MPI_COMM_NULL;  // every PE thread calls MPI: the group's communicator
  comm_thread_hub* hub = nullptr;  // or the communication thread runs the collective...
  int tag = 0;                     // ...on point-to-point messages with this tag
  std::unique_ptr<collective_group> on_hub;  // made by the communication thread when first used
  slot slots[2];
  lane_group_state() = default;
  lane_group_state(const lane_group_state&) = delete;
  lane_group_state& operator=(const lane_group_state&) = delete;
  ~lane_group_state() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

/// What the PE threads of one rank share when a rank runs several PEs (--transit-threads-per-rank,
/// docs/hybrid.md). The PEs of rank r are r x lanes + lane. A message to a PE of the same rank is a
/// pointer hand-off into its inbox (no MPI, no copy). Between ranks, two designs:
///  - every PE thread calls MPI (MPI_THREAD_MULTIPLE): a message to lane l of another rank goes
///    over comm(l), on which only lane l of each rank receives, so each PE thread receives its own
///    messages and sends on its own requests; the last lane to arrive at a collective runs the
///    rank's one MPI collective.
///  - a communication thread (comm_thread_hub, src/transport/mpi/comm_thread.hpp) owns MPI: the PE
///    threads hand it their messages and collectives, it delivers arrivals into their inboxes
///    (MPI_THREAD_FUNNELED is enough). Then the lanes have no communicators of their own.
/// Either way collective groups combine the lanes' values in the process first.
class rank_lanes {
 public:
  /// Collective over `parent`, called once per rank before its PE threads start: a communicator
  /// per lane (MPI_Comm_dup), and one group for the transports' teardown; with `hub`, neither
  /// (the hub's own communicator carries everything).
  rank_lanes(MPI_Comm parent, int lanes, comm_thread_hub* hub = nullptr);
  ~rank_lanes();
  rank_lanes(const rank_lanes&) = delete;
  rank_lanes& operator=(const rank_lanes&) = delete;

  int lanes() const noexcept { return lanes_; }
  int mpi_rank() const noexcept { return mpi_rank_; }
  int mpi_size() const noexcept { return mpi_size_; }
  MPI_Comm comm(int lane) const noexcept { return comms_[static_cast<std::size_t>(lane)]; }
  local_world& inboxes() noexcept { return inboxes_; }
  /// The communication thread, or null when every PE thread calls MPI.
  comm_thread_hub* hub() const noexcept { return hub_; }
  /// The k-th group made by the lanes of this rank (each lane makes its groups in the same order):
  /// made by the first lane that asks, which runs MPI_Comm_dup (collective over the ranks) under a
  /// lock, so the ranks make their groups' communicators in one order.
  std::shared_ptr<lane_group_state> group(std::size_t k);
  /// The group every lane's transport joins in its destructor (made with the lanes).
  const std::shared_ptr<lane_group_state>& teardown_group() const noexcept { return teardown_; }
  /// Where the rank's PE threads meet to share what they set up together (helper mode's memory).
  meeting_board& board() noexcept { return board_; }

 private:
  std::shared_ptr<lane_group_state> make_group_state();
  MPI_Comm parent_;
  int lanes_;
  comm_thread_hub* hub_;
  int mpi_rank_ = 0, mpi_size_ = 1;
  std::vector<MPI_Comm> comms_;
  local_world inboxes_;
  std::mutex groups_mutex_;
  std::vector<std::shared_ptr<lane_group_state>> groups_;
  std::shared_ptr<lane_group_state> teardown_;
  meeting_board board_;
};

/// A collective group of one PE thread of a rank, over the group state its lanes share: they
/// combine their values in the process, and the rank runs one collective.
std::unique_ptr<collective_group> make_lane_group(std::shared_ptr<lane_group_state> state, int lanes);

}  // namespace transit::detail
