#pragma once
// The one-sided engine behind global_array<T> and global_mutexes: HiCOO's forwarded, aggregated
// requests (Yu et al. 2012) on transit's transport. The typed front ends split transfers per
// owner and call issue(); everything below runs per request piece and is compiled once, in
// src/one_sided. The choices, and why:
//
// Inside a node. In both progress modes the node's elements live in memory the node shares (plain
// memory on the local backend, MPI_Win_allocate_shared on mpi), and a PE applies operations on its
// own node's elements itself, atomically where the contract says atomic (ARMCI's and MPI-3 osc
// sm's loads, stores and atomics): no request, no message. Only other nodes' elements become
// requests. Where a node cannot share memory (polling mode only: a simulation, a node holding part
// of a rank's PE threads, ranks on several hosts, MPI_Win_allocate_shared failing) its PEs send
// requests to their node's elements as to any other.
//
// Endpoints. A request is served by an *endpoint*: in progress_mode::polling every PE is one, and
// serves inside every transit call it makes (a progress hook in the context's waiting loop, so
// barrier, allreduce and other layers' waits serve too, and every 32 requests or 1024 operations
// applied in the node); in helper_thread mode one helper thread per node is the endpoint of all
// the node's PEs, which hand it their requests through a ring in shared memory, so the helper
// aggregates the requests of every PE of its node (HiCOO's multicore cooperation). Either serves a
// request for any element of its node.
//
// Routing. Nodes sit on a virtual grid: 1-D for fcg, virtual_grid::balanced(nodes, 2) for mfcg,
// balanced(nodes, 3) for cfcg, 2x2x..x2 for hypercube (power-of-two node counts only). Between
// nodes a request follows grid/'s lowest-dimension-first router (HiCOO Algorithm 1 with its
// partial-grid rule; any node count for fcg, mfcg, cfcg). In polling mode a hop to another node
// goes to the PE with this PE's local rank there (modulo that node's size), which serves the
// request if it is for its node (without shared memory: one last hop, straight to the owner). An
// endpoint keeps one link (one request buffer) per next-hop endpoint: sum(d_i - 1) node-grid
// peers (plus, in polling mode without shared memory, the other PEs of its node). Replies and
// acknowledgements retrace the route: each endpoint passes them to the endpoint the requests came
// in from (the same for every target: lowest-dimension-first routes from one node form a tree),
// re-aggregated per previous hop as requests are per next hop, so a hot spot's endpoint sends
// them to its neighbours only, not to every requester.
//
// Why not the streamer: requests vary in size (a put carries its data, a get none), replies
// retrace each request's route, forwarding endpoints rewrite requests (combining), there are no
// collective steps (an operation completes on its own; fence is local), and helper mode needs
// node-level endpoints on a thread of their own. The streamer moves fixed-size items along one
// grid in collective steps. What is shared: the router, the transport, channels, collective
// groups, the waiting loop, the buffer pool.
//
// Aggregation. Each link holds at most one open buffer of buffer_bytes. It goes when full, when
// flush_period has passed since its first request, or when its endpoint runs out of work (a PE
// that waits, an idle helper): aggregation costs latency only while there is other work to do.
// Transfers larger than a buffer travel in pieces that fit one. The exception is a packed request
// (protocols/: many regions gathered by the caller) larger than a buffer, in polling mode: it goes
// as one request message of its own size, in its place in the link's order and under the same
// credits, so a packed transfer is one message where its regions pipelined would be one per
// buffer (as active messages send a large call in a message of its own).
//
// Flow control and memory. A link may have `link_credits` buffers in flight; the receiver returns
// a credit when it has processed one (served or passed on every request in it). A full buffer
// without credit waits, and so does the request that did not fit: issue() then keeps it in a
// backlog, in order, and the PE keeps receiving, serving and forwarding in every wait; a
// forwarding endpoint leaves the message it cannot finish queued on its incoming link and carries
// on with everything else. So request-buffer memory per endpoint is at most one open buffer per
// outgoing link plus link_credits buffers per incoming link: O(sqrt(nodes)) for mfcg,
// O(cbrt(nodes)) for cfcg, against O(nodes) for fcg; a buffer counts at the size of the largest
// packed request message the endpoint has held, when that is larger (up to packed_message_buffers
// buffers). No deadlock: a message queued on link
// (u, v) waits only for credit on the next link (v, w) of its requests' routes; the graph of these
// waits is acyclic for lowest-dimension-first routes with the partial-grid rule
// (docs/one_sided.md proves it; tests/grid checks it on every grid shape up to 64 nodes), hops
// inside the target's node end routes, and replies and credits never wait for credit. By
// induction along that order every queued message is eventually processed. Queues are per
// incoming link: one stuck message never holds up another link's (that would add waits the
// graph does not have). Passing a reply on needs no credit either.
//
// Combining. While a buffer is open, a fetch_add or single-element accumulate for a word that
// already has a combinable request in that buffer is merged into it (integral types: sums wrap
// exactly; min with min, max with max), provided no other operation on that word was appended
// after it. The merged request is re-issued in this endpoint's name with the constituents
// remembered here (a combining network's wait buffer); when its reply comes, each constituent
// gets old + (deltas merged before it): exactly the value of the serial order in which they were
// merged.
//
// Order and completion. Requests from one PE to one owner always take the same route, links are
// FIFO (transport order per channel), every endpoint processes an incoming link in order, and a
// merge never moves a request past another operation on its word: operations from one PE to one
// element are applied in the order issued. A put is complete at the target when its
// acknowledgement (counted, not per request) comes back; fence() waits for every acknowledgement
// and reply of this PE.
//
// Wire format (payload of one transport message, 8-byte aligned records; the structs are in
// src/one_sided/hub.hpp):
//   message_header | records...
//   requests: request_record | payload (put, accumulate: values; fetch_add: delta;
//             compare_exchange: expected, desired; put_packed: packed_region records, then the
//             elements; get_packed: packed_region records), padded to 8 bytes
//   control:  control_record | payload (reply data), padded to 8 bytes
// A control message to an endpoint carries replies (per ticket), acknowledgements (a count per
// requesting PE) and credits (messages processed, for the link from this endpoint). In helper
// mode the same request records travel from a PE to its helper through a ring in shared memory,
// and replies and acknowledgements come back as control records through another.
//
// Teardown is collective: fence, then waves of non-blocking allreduces of (messages sent,
// messages received) over all endpoints until two agree and balance (the four-counter method, as
// the streamer's quiesce), so no credit or acknowledgement is still in flight when the channel or
// the helper closes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "transit/core/reduce.hpp"
#include "transit/detail/one_sided/element_ops.hpp"
#include "transit/one_sided/options.hpp"

namespace transit {
class context;
}

namespace transit::detail {

enum class op_code : std::uint8_t { put, get, accumulate, fetch_add, compare_exchange, lock, unlock, put_packed, get_packed };

/// One region of a packed request (put_packed, get_packed: protocols/, Iancu and Hofmeyr's packed
/// protocol): `count` elements from `offset` in the owner's block. A packed request carries
/// `regions` of these, then (put_packed) their elements concatenated in the same order; the owner
/// unpacks it (get_packed: replies with the elements concatenated). It travels as one request
/// piece, so its payload never exceeds max_packed_bytes().
struct packed_region {
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
};

/// Pieces of an operation not yet complete; the engine decrements, the waiter watches.
struct completion {
  std::uint64_t pending = 0;
};

/// One operation on one owner, as the typed front ends describe it.
struct operation {
  op_code code = op_code::put;
  reduce_op reduce = reduce_op::sum;
  int owner = -1;             ///< PE holding the elements (mutexes: the home PE)
  std::uint64_t offset = 0;   ///< element offset in the owner's block (mutexes: the mutex)
  std::uint64_t count = 0;    ///< elements (1 for fetch_add, compare_exchange and mutexes)
  const std::byte* in = nullptr;  ///< put, accumulate: values; fetch_add: delta; compare_exchange:
                                  ///< expected then desired
  std::byte* out = nullptr;       ///< get: destination; fetch_add, compare_exchange: old value
                                  ///< get_packed: the regions' elements, concatenated
  /// put_packed: payload bytes at `in` (count packed_region records, then the elements);
  /// get_packed: bytes of the reply (`in` holds count packed_region records). count: regions.
  std::uint64_t packed_bytes = 0;
};

class one_sided_engine {
 public:
  virtual ~one_sided_engine() = default;
  /// This PE's block of elements (empty for mutexes).
  virtual std::span<std::byte> local_block() noexcept = 0;
  /// Starts `op`, adding its pieces to done->pending; each piece completes when its values have
  /// been copied out (put, accumulate, unlock) or its result is in place (the others). `keep`
  /// holds `done` alive for a nonblocking request the caller may drop. Never waits: pieces that
  /// find no buffer room wait in a backlog, in order (put values are read from the caller then).
  virtual void issue(const operation& op, completion* done, std::shared_ptr<completion> keep) = 0;
  /// Applies a one-element fetch_add or compare_exchange at once, its result written to op.out,
  /// when issue() would apply it without a message (its owner's memory is shared with this PE);
  /// false, doing nothing, otherwise. Lets a non-blocking call skip the state a request in
  /// flight needs.
  virtual bool apply_at_once(const operation& op) {
    static_cast<void>(op);
    return false;
  }
  /// Non-blocking: moves this PE's traffic; returns whether anything happened.
  virtual bool progress() = 0;
  /// Waits (serving meanwhile) until c.pending == 0.
  virtual void wait(completion& c, std::string_view what) = 0;
  /// Waits until every operation this PE issued is complete at its target.
  virtual void fence() = 0;
  /// Collective: fence everywhere, then a barrier.
  virtual void sync() = 0;
  virtual one_sided_stats stats() const = 0;
  /// Most payload bytes of one put_packed or get_packed request (records and elements; for
  /// get_packed, the reply's elements too): polling mode, packed_message_buffers x buffer_bytes
  /// (a packed request larger than a buffer goes as a request message of its own size); helper
  /// mode (its rings hold one buffer's piece), one request buffer's piece; mpi_rma, no limit
  /// that matters (a packed request is one MPI call per region there).
  virtual std::size_t max_packed_bytes() const noexcept = 0;
};

/// How many request buffers of payload one packed request may carry in polling mode (16: 256 KiB
/// with the default 16 KiB buffers; protocols/ packs regions up to a quarter of it, 64 KiB;
/// docs/protocols.md says why).
inline constexpr std::size_t packed_message_buffers = 16;

struct engine_config {
  one_sided_options options;
  std::size_t local_elements = 0;       ///< elements of this PE's block
  const element_ops* ops = nullptr;     ///< null: no arithmetic (put and get only)
  std::size_t element_size = 1;
  /// Value-initialises `elements` elements at `block` (null: zero bytes). The engine calls it
  /// before any request can reach the block.
  void (*initialize)(std::byte* block, std::size_t elements) = nullptr;
  bool mutexes = false;                 ///< serves lock/unlock instead of memory
  const char* what = "global_array";    ///< for messages
};

/// Collective. Throws std::invalid_argument for bad options, hypercube on a node count that is
/// not a power of two, mpi_rma on the local backend, helper mode on mpi without
/// MPI_THREAD_MULTIPLE.
std::unique_ptr<one_sided_engine> make_one_sided_engine(context& ctx, const engine_config& config);

/// Completes (fence) every operation this PE issued through any engine of `ctx`: a mutex's
/// release must follow the writes made under it.
void fence_all_engines(context& ctx);

}  // namespace transit::detail
