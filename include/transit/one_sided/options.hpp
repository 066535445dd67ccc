#pragma once
// Options and counters of transit's one-sided layer (global_array, global_mutexes).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace transit {

/// How requests travel between nodes (HiCOO, Yu et al. 2012). Nodes sit on a virtual grid and a
/// request is forwarded and aggregated along it, lowest dimension first.
enum class request_topology {
  fcg,        ///< fully connected: straight to the target's node (1-D grid)
  mfcg,       ///< meshed FCG: nodes on a 2-D grid, O(sqrt(nodes)) request buffers per endpoint
  cfcg,       ///< cubic FCG: nodes on a 3-D grid, O(cbrt(nodes)) request buffers
  hypercube,  ///< log2(nodes) dimensions of 2; power-of-two node counts only
  mpi_rma     ///< MPI-3 RMA windows, no forwarding: the baseline (mpi backend only)
};

/// Who serves the requests that arrive for a PE.
enum class progress_mode {
  polling,       ///< the PE itself, inside any transit call it makes (barrier and allreduce too)
  helper_thread  ///< one helper thread per node, for every PE of the node, through shared memory
};

/// How a global_array places its elements on the PEs (chosen at construction).
enum class array_layout {
  block,  ///< contiguous blocks, the first size % P PEs holding one more (the default)
  cyclic  ///< round robin: element i on PE i mod P, at offset i / P there (bale's and UPC's shared arrays)
};

/// "fcg", "mfcg", "cfcg", "hypercube" or "mpi-rma". Local.
std::string_view to_string(request_topology t) noexcept;
/// "polling" or "helper". Local.
std::string_view to_string(progress_mode p) noexcept;
/// "fcg", "mfcg", "cfcg", "hypercube", "mpi-rma"; throws std::invalid_argument otherwise. Local.
request_topology parse_request_topology(std::string_view name);
/// "polling" or "helper" ("helper-thread" too); throws std::invalid_argument otherwise. Local.
progress_mode parse_progress_mode(std::string_view name);

/// How a global_array or global_mutexes forwards, aggregates and serves requests; equal on every
/// PE. Checked at construction: std::invalid_argument names the field and what it takes.
struct one_sided_options {
  /// The virtual topology of nodes requests are forwarded over; mpi_rma on the mpi backend only.
  request_topology topology = request_topology::mfcg;
  /// Who serves incoming requests (helper_thread needs MPI_THREAD_MULTIPLE on the mpi backend).
  progress_mode progress = progress_mode::polling;
  /// Request aggregation per link, in bytes: 256 to 2^30, with room for a request of two elements
  /// (global_array). Larger transfers travel in pieces.
  std::size_t buffer_bytes = 16384;
  /// A partial request buffer goes at the latest this long after its first request; sooner when
  /// its endpoint runs out of work (a PE waiting, an idle helper). 0: at the end of every poll.
  /// Not negative.
  std::chrono::microseconds flush_period{10};
  /// Combine fetch_add and accumulate requests for one word that meet in a forwarding buffer
  /// (integral element types; floating-point sums are not combined, their rounding would change).
  bool combine = true;
};

/// Counters of one PE (helper mode: the node's helper counters are reported by the node's first PE).
struct one_sided_stats {
  /// Request pieces this PE issued through its endpoint: not the operations it applied itself to
  /// its own node's memory (applied_in_node); mpi_rma: every MPI operation.
  std::uint64_t requests_sent = 0;
  /// Operation pieces on its own node's elements this PE applied itself, through the node's shared
  /// memory (loads, stores and atomics; global_mutexes: locks and unlocks of its node's mutexes):
  /// no request and no message (mpi_rma: 0).
  std::uint64_t applied_in_node = 0;
  /// 1 when this PE reaches its node's elements through shared memory, 0 when it sends them
  /// requests as to any other node's (its node could not share memory: `transit info` says so;
  /// mpi_rma).
  std::uint64_t node_memory_shared = 0;
  std::uint64_t requests_forwarded = 0;   ///< requests that passed through on their way elsewhere
  std::uint64_t requests_combined = 0;    ///< requests merged into another for the same word
  std::uint64_t requests_served = 0;      ///< requests applied to memory here (global_mutexes: see its stats())
  std::uint64_t messages_sent = 0;        ///< transport messages: request buffers, replies, credits
  std::uint64_t request_messages_sent = 0;      ///< request buffers sent
  /// Request buffers sent to an endpoint on another node (mpi_rma: MPI operations on another
  /// node's memory): the traffic between nodes that forwarding and aggregation cut.
  std::uint64_t request_messages_between_nodes = 0;
  std::uint64_t request_messages_received = 0;  ///< request buffers received (hot-spot pressure)
  std::uint64_t credit_waits = 0;         ///< times a full buffer waited for its link's credit
  /// Reply and acknowledgement records this PE's endpoint passed on toward their requesters:
  /// replies retrace their requests' route, hop by hop (mpi_rma: 0).
  std::uint64_t replies_forwarded = 0;
  /// Endpoints this PE's endpoint has sent replies or acknowledgements to: only those its requests
  /// come in from, not every requester behind them (mpi_rma: 0).
  std::uint64_t reply_peers = 0;
  /// Request buffers (outgoing links) of this PE's serving endpoint: its next-hop peers (mpi_rma:
  /// every other PE, MPI's own resources).
  std::uint64_t links = 0;
  /// Bound on this PE's share of request-buffer memory: one open buffer per outgoing link plus the
  /// credit window of every incoming link (helper mode: the helper's, divided over its PEs, plus
  /// the PE's request and reply rings).
  std::uint64_t request_buffer_bytes = 0;
  /// Most request-buffer bytes actually held at once by this PE's endpoint (helper mode: by the
  /// helper, reported by the node's first PE).
  std::uint64_t request_buffer_bytes_peak = 0;
};

}  // namespace transit
