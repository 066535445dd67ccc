// progress_mode::helper_thread: one helper thread per node is the endpoint of every PE of the
// node (ARMCI's communication helper, HiCOO's per-node server). Each PE's part of the node's
// shared memory holds, 64-byte aligned:
//   elements (u64) | request ring (PE -> helper) | reply ring (helper -> PE) | the PE's block of elements
// (the helper checks requests from the wire against a block's elements before it touches them).
// A PE applies operations on its own node's elements itself (routed_engine's same-node path, as in
// polling mode) and pushes the rest into its request ring; the helper aggregates the rings of all
// its PEs into its links, forwards and serves like any endpoint, and pushes replies and
// acknowledgements into the reply rings (into a private overflow queue when a ring is full: it
// never waits for a PE).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <set>
#include <vector>

#include "node_resources.hpp"
#include "ring.hpp"
#include "routed_engine.hpp"
#include "core/backoff.hpp"
#include "core/wire_error.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/runtime/context.hpp"

namespace transit::detail {

namespace {

std::size_t ring_capacity(std::size_t buffer_bytes) {
  std::size_t capacity = std::size_t{1} << 16;
  while (capacity < 4 * buffer_bytes) capacity *= 2;  // a record (at most a buffer) fits twice
  return capacity;
}

/// Where the rings and the block sit in a PE's shared part.
struct part_layout {
  std::size_t ring_bytes;
  std::size_t elements = 0;
  std::size_t requests = 64;
  std::size_t replies;
  std::size_t block;
  std::size_t total;
  part_layout(std::size_t capacity, std::size_t block_bytes)
      : ring_bytes(capacity),
        replies(requests + byte_ring::control_bytes + capacity),
        block(requests + 2 * (byte_ring::control_bytes + capacity)),
        total(block + align64(block_bytes)) {}
};

/// The helper of one node: a hub on a transport of its own, serving the node's PEs, in rounds
/// that its driver (node_memory::start_helper) calls: a thread of its own, or the rank's
/// communication thread, which then also builds and destroys the hub's transport.
class node_helper final : private hub::host {
 public:
  struct pe_side {
    int pe;
    byte_ring requests;  // consumer side
    byte_ring replies;   // producer side
    std::byte* block;
    const std::byte* elements;  // the u64 count of the block's elements, written by its PE
    std::deque<std::vector<std::byte>> overflow;  // replies waiting for ring room
  };

  node_helper(context& ctx, node_memory& resources, hub::config c, std::vector<pe_side> pes)
      : ctx_(ctx), resources_(resources), node_(c.self), pes_(std::move(pes)) {
    resources_.on_helper_side([&] {
      net_ = resources_.make_helper_transport();
      hub_ = std::make_unique<hub>(std::move(c), *net_, nullptr, 0, static_cast<hub::host&>(*this));
    });
  }
  ~node_helper() override {
    stop();
    if (abandoned_) {
      // A failing job: another PE may hold the helper side; the process ends soon anyway.
      static_cast<void>(hub_.release());
      static_cast<void>(net_.release());
      return;
    }
    try {
      resources_.on_helper_side([&] {
        hub_.reset();
        net_.reset();
      });
    } catch (...) {
      // A destructor does not throw: MPI's failure here ends the job anyway.
    }
  }
  node_helper(const node_helper&) = delete;
  node_helper& operator=(const node_helper&) = delete;

  void start() {
    resources_.start_helper([this] { return round(); },
                            [this](const std::exception& e) {
                              context_access::end_job(ctx_, concat("helper thread of node ", node_, ": ", e.what()));
                            });
  }
  void stop() { resources_.stop_helper(); }  // stop_helper is idempotent
  /// Stops the helper and leaves its transport alone: the job is failing.
  void abandon() {
    abandoned_ = true;
    stop();
  }

  /// (messages sent, messages received) at a point between two rounds of the helper: a
  /// consistent pair for the teardown waves. Blocks the caller briefly (one helper round).
  std::pair<std::uint64_t, std::uint64_t> snapshot() {
    const std::uint64_t asked = snapshot_asked_.fetch_add(1, std::memory_order_acq_rel) + 1;
    backoff pause;
    while (snapshot_answered_.load(std::memory_order_acquire) < asked) pause.idle();
    return {snapshot_sent_.load(std::memory_order_relaxed), snapshot_received_.load(std::memory_order_relaxed)};
  }

  /// The helper's counters as last published (relaxed reads: a report, not a synchronisation).
  hub_counters published() const {
    hub_counters c;
    c.requests_forwarded = published_[0].load(std::memory_order_relaxed);
    c.requests_combined = published_[1].load(std::memory_order_relaxed);
    c.requests_served = published_[2].load(std::memory_order_relaxed);
    c.messages_sent = published_[3].load(std::memory_order_relaxed);
    c.request_messages_sent = published_[4].load(std::memory_order_relaxed);
    c.request_messages_received = published_[5].load(std::memory_order_relaxed);
    c.credit_waits = published_[6].load(std::memory_order_relaxed);
    c.buffer_bytes_peak = published_[7].load(std::memory_order_relaxed);
    c.request_messages_between_nodes = published_[8].load(std::memory_order_relaxed);
    c.replies_forwarded = published_[9].load(std::memory_order_relaxed);
    c.reply_peers = published_[10].load(std::memory_order_relaxed);
    return c;
  }
  std::uint64_t buffer_bound() const noexcept { return hub_->buffer_bound(); }
  std::size_t num_links() const noexcept { return hub_->num_links(); }

 private:
  // One round: the PEs' rings, the links, the replies that waited for room.
  bool round() {
    try {
      answer_snapshot();
      const bool from_rings = serve_rings();
      bool progressed = hub_->poll(!from_rings) || from_rings;  // flush partial buffers once idle
      progressed |= flush_overflow();
      if (progressed) publish();
      return progressed;
    } catch (...) {
      snapshot_answered_.store(~std::uint64_t{0}, std::memory_order_release);  // nobody waits on a dead helper
      throw;
    }
  }

  void answer_snapshot() {
    const std::uint64_t asked = snapshot_asked_.load(std::memory_order_acquire);
    if (asked == snapshot_answered_.load(std::memory_order_relaxed)) return;
    snapshot_sent_.store(hub_->counters().messages_sent, std::memory_order_relaxed);
    snapshot_received_.store(hub_->counters().messages_received, std::memory_order_relaxed);
    snapshot_answered_.store(asked, std::memory_order_release);
  }

  void publish() {
    const hub_counters& c = hub_->counters();
    const std::uint64_t values[published_count] = {
        c.requests_forwarded, c.requests_combined, c.requests_served,   c.messages_sent,
        c.request_messages_sent, c.request_messages_received, c.credit_waits, c.buffer_bytes_peak,
        c.request_messages_between_nodes, c.replies_forwarded, c.reply_peers};
    for (std::size_t i = 0; i < published_count; ++i) published_[i].store(values[i], std::memory_order_relaxed);
  }

  // Each PE's requests go in ring order; one that finds no room stays at the head of its ring.
  bool serve_rings() {
    bool any = false;
    for (auto& side : pes_) {
      any |= side.requests.drain([&](const std::byte* record, std::size_t) {
        request_record r;
        std::memcpy(&r, record, sizeof r);
        return hub_->submit(r, record + sizeof r);
      });
    }
    return any;
  }

  bool flush_overflow() {
    bool any = false;
    for (auto& side : pes_) {
      while (!side.overflow.empty()) {
        const auto& record = side.overflow.front();
        if (!side.replies.push(record.data(), record.size(), nullptr, 0)) break;
        side.overflow.pop_front();
        any = true;
      }
    }
    return any;
  }

  pe_side& side_of(int pe) { return pes_[static_cast<std::size_t>(ctx_.machine().local_rank(pe))]; }

  void to_ring(int pe, const control_record& c, const std::byte* data, std::size_t bytes) {
    pe_side& side = side_of(pe);
    if (side.overflow.empty() && side.replies.push(&c, sizeof c, data, bytes)) return;
    std::vector<std::byte> record(sizeof c + bytes);
    std::memcpy(record.data(), &c, sizeof c);
    if (bytes > 0) std::memcpy(record.data() + sizeof c, data, bytes);
    side.overflow.push_back(std::move(record));
  }

  std::byte* block_of(int pe) override { return side_of(pe).block; }
  std::uint64_t block_elements(int pe) override {
    std::uint64_t n = 0;
    std::memcpy(&n, side_of(pe).elements, sizeof n);  // written before the set-up barrier
    return n;
  }
  void deliver_reply(int pe, std::uint32_t ticket, const std::byte* data, std::size_t bytes) override {
    to_ring(pe, control_record{control_type::reply, 0, 0, static_cast<std::uint32_t>(bytes), pe, ticket}, data, bytes);
  }
  void deliver_acks(int pe, std::uint64_t count) override {
    TRANSIT_ASSERT(count <= 0xffffffffu, "acknowledgements of one poll fit 32 bits");
    to_ring(pe, control_record{control_type::acks, 0, 0, 0, pe, static_cast<std::uint32_t>(count)}, nullptr, 0);
  }

  context& ctx_;
  node_memory& resources_;
  int node_;
  std::vector<pe_side> pes_;
  std::unique_ptr<transport> net_;  // made and destroyed on the helper side (on_helper_side)
  std::unique_ptr<hub> hub_;
  bool abandoned_ = false;
  std::atomic<std::uint64_t> snapshot_asked_{0};
  std::atomic<std::uint64_t> snapshot_answered_{0};
  std::atomic<std::uint64_t> snapshot_sent_{0};
  std::atomic<std::uint64_t> snapshot_received_{0};
  static constexpr std::size_t published_count = 11;
  std::atomic<std::uint64_t> published_[published_count] = {};
};

class helper_engine final : public routed_engine {
 public:
  helper_engine(context& ctx, const engine_config& config);
  ~helper_engine() override;
  one_sided_stats stats() const override;

 private:
  bool submit(const request_record& r, const std::byte* payload) override {
    return requests_.push(&r, sizeof r, payload, r.payload_bytes);
  }
  bool poll_endpoint(bool) override {
    context_access::mail(ctx_).pump();  // keep the context's transport moving for other layers
    return replies_.drain([&](const std::byte* record, std::size_t) {
      control_record c;
      std::memcpy(&c, record, sizeof c);
      // The helper relays replies and acknowledgements that came over the wire; it cannot see this
      // PE's tickets, so this PE checks them before use, as the hub does in polling mode.
      if (const std::string problem = control_problem(c); !problem.empty()) {
        const int helper_pe = ctx_.machine().pe_on_node(ctx_.machine().node_of(rank_), 0);
        corrupt_message(concat("one-sided requests of PE ", rank_), "record relayed by the node's helper", helper_pe,
                        problem);
      }
      if (c.type == control_type::acks) {
        on_acks(c.value);
      } else {
        on_reply(c.value, record + sizeof c, c.payload_bytes);
      }
      return true;
    });
  }
  hub::config plan_routes(const node_plan& plan) const;
  void abandon() noexcept;

  std::unique_ptr<node_memory> resources_;
  byte_ring requests_;  // producer side
  byte_ring replies_;   // consumer side
  std::unique_ptr<node_helper> helper_;  // on the node's first PE
  std::size_t links_ = 0;
  std::uint64_t share_bytes_ = 0;
  int diagnostic_ = -1;
};

// The helper of node n routes between nodes only: owners on its own node are served here.
hub::config helper_engine::plan_routes(const node_plan& plan) const {
  const machine& m = ctx_.machine();
  const int node = m.node_of(rank_);
  hub::config c = hub_basics();
  c.self = node;
  c.self_requester = m.pe_on_node(node, 0);
  c.atomic = true;  // the node's PEs touch the same memory
  std::set<int> in_links;
  for (const hop& h : plan.route->out_links(node)) {
    if (std::find(c.links.begin(), c.links.end(), h.pe) == c.links.end()) {
      c.links.push_back(h.pe);
      c.links_between_nodes.push_back(true);  // helpers are the endpoints of whole nodes
    }
  }
  for (const hop& h : plan.route->in_links(node)) in_links.insert(h.pe);
  c.in_links = in_links.size();
  c.route.resize(static_cast<std::size_t>(ctx_.size()));
  c.endpoint_of.resize(static_cast<std::size_t>(ctx_.size()));
  for (int n = 0; n < m.num_nodes(); ++n) c.pe_of_endpoint.push_back(m.pe_on_node(n, 0));  // the helper's rank
  for (int owner = 0; owner < ctx_.size(); ++owner) {
    const int target = m.node_of(owner);
    c.endpoint_of[static_cast<std::size_t>(owner)] = target;
    if (target == node) {
      c.route[static_cast<std::size_t>(owner)] = -1;
      continue;
    }
    const int next = plan.route->next_hop(node, target, -1).pe;
    const auto it = std::find(c.links.begin(), c.links.end(), next);
    TRANSIT_ASSERT(it != c.links.end(), "a next hop is among the router's out_links");
    c.route[static_cast<std::size_t>(owner)] = static_cast<std::int32_t>(it - c.links.begin());
  }
  // Replies retrace the route: a requesting node's go back to the node its requests come in from
  // (the same for every target they go on to: lowest-dimension-first routes from one node form a
  // tree, tests/grid checks it).
  std::vector<std::int32_t> via(static_cast<std::size_t>(m.num_nodes()), node);
  for (int source = 0; source < m.num_nodes(); ++source) {
    for (int at = source; at != node; at = plan.route->next_hop(at, node, -1).pe) via[static_cast<std::size_t>(source)] = at;
  }
  c.reply_via.resize(static_cast<std::size_t>(ctx_.size()));
  for (int pe = 0; pe < ctx_.size(); ++pe) c.reply_via[static_cast<std::size_t>(pe)] = via[static_cast<std::size_t>(m.node_of(pe))];
  return c;
}

helper_engine::helper_engine(context& ctx, const engine_config& config) : routed_engine(ctx, config) {
  const machine& m = ctx.machine();
  const int node = m.node_of(rank_);
  const int local = m.local_rank(rank_);
  const node_plan plan = make_node_plan(config.options.topology, m.num_nodes());
  const std::size_t block_bytes = config.local_elements * config.element_size;
  const part_layout layout(ring_capacity(config.options.buffer_bytes), block_bytes);
  resources_ = make_node_resources(ctx, layout.total);

  // This PE's part: rings constructed, elements initialised, before anyone may use them.
  std::byte* mine = resources_->part(local);
  const std::uint64_t elements = config.local_elements;
  std::memcpy(mine + layout.elements, &elements, sizeof elements);
  byte_ring::create(mine + layout.requests);
  byte_ring::create(mine + layout.replies);
  place_block(mine + layout.block);
  requests_ = byte_ring(mine + layout.requests, layout.ring_bytes);
  replies_ = byte_ring(mine + layout.replies, layout.ring_bytes);
  share_node_blocks(*resources_, layout.block);  // mutexes: their ticket locks

  hub::config routes = plan_routes(plan);
  links_ = routes.links.size();
  const std::uint64_t helper_bound = (routes.links.size() + routes.in_links * link_credits) * config.options.buffer_bytes;
  share_bytes_ = helper_bound / static_cast<std::uint64_t>(m.pes_on_node(node)) + 2 * layout.ring_bytes;
  if (local == 0) {
    std::vector<node_helper::pe_side> sides;
    for (int l = 0; l < m.pes_on_node(node); ++l) {
      std::byte* part = resources_->part(l);
      sides.push_back(node_helper::pe_side{m.pe_on_node(node, l), byte_ring(part + layout.requests, layout.ring_bytes),
                                           byte_ring(part + layout.replies, layout.ring_bytes), part + layout.block,
                                           part + layout.elements, {}});
    }
    helper_ = std::make_unique<node_helper>(ctx, *resources_, std::move(routes), std::move(sides));
  }
  // Every part is ready everywhere before a helper starts or a PE touches another's block.
  group_->start_barrier();
  context_access::finish_collective(ctx, *group_, "helper-mode set-up (barrier)");
  if (helper_) helper_->start();
  diagnostic_ = context_access::add_diagnostic(ctx, [this] { return describe_requests(); });
}

void helper_engine::abandon() noexcept {
  try {
    if (helper_) helper_->abandon();  // it must not outlive this PE's memory
  } catch (...) {
    // The job is ending; the communication thread may already be ending it.
  }
  resources_->abandon();
}

helper_engine::~helper_engine() {
  context_access::remove_diagnostic(ctx_, diagnostic_);
  if (abandoning()) {
    abandon();
    return;
  }
  try {
    // Collective: every PE's operations complete; then no PE pushes requests any more, and the
    // helpers keep running until no message between them (credits included) is in flight.
    sync();
    quiesce(
        ctx_, *group_, [this] { return poll(true); },
        [this] { return helper_ ? helper_->snapshot() : std::pair<std::uint64_t, std::uint64_t>{0, 0}; },
        std::string(config_.what) + " teardown");
    if (helper_) helper_->stop();
    helper_.reset();
    group_->start_barrier();  // no helper runs anywhere before the shared memory goes
    context_access::finish_collective(ctx_, *group_, "helper-mode teardown (barrier)");
  } catch (...) {
    abandon();  // another PE failed meanwhile; the job is ending
    return;
  }
  context_access::mail(ctx_).close_channel(channel_);
}

one_sided_stats helper_engine::stats() const {
  one_sided_stats s;
  if (helper_) add_hub_counters(s, helper_->published());  // reported by the node's first PE
  add_requester_counters(s);
  s.links = links_;
  s.request_buffer_bytes = share_bytes_;
  return s;
}

}  // namespace

std::unique_ptr<one_sided_engine> make_helper_engine(context& ctx, const engine_config& config) {
  return std::make_unique<helper_engine>(ctx, config);
}

}  // namespace transit::detail
