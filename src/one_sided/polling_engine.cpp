// progress_mode::polling: every PE is an endpoint of its own and serves inside its transit calls.
// Where the node shares memory (node_resources: always on the local backend, an
// MPI_Win_allocate_shared window on mpi), each PE's part of it holds, 64-byte aligned:
//   elements (u64) | the PE's block of elements
// and every PE of the node applies operations on the node's elements itself (routed_engine's
// same-node path, as in helper mode); only other nodes' elements become requests, and a request
// that reaches its target's node is served by the PE it reaches there, through the same memory.
// Where it does not, the block is private memory and the last hop goes to the owner.
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <new>
#include <string>

#include "node_resources.hpp"
#include "routed_engine.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/runtime/context.hpp"

namespace transit::detail {

namespace {

struct free_deleter {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};

class polling_engine final : public routed_engine, private hub::host {
 public:
  polling_engine(context& ctx, const engine_config& config);
  ~polling_engine() override;
  one_sided_stats stats() const override;

 private:
  /// A packed request larger than one buffer travels as a request message of its own size (the
  /// hub sizes it), up to packed_message_buffers buffers of payload: see engine.hpp.
  std::size_t max_packed_bytes() const noexcept override {
    return packed_message_buffers * config_.options.buffer_bytes;
  }
  bool submit(const request_record& r, const std::byte* payload) override { return hub_->submit(r, payload); }
  bool poll_endpoint(bool waiting) override { return hub_->poll(waiting); }
  std::byte* block_of(int pe) override { return node_shared() ? node_block(pe) : block_.data(); }
  void deliver_reply(int, std::uint32_t ticket, const std::byte* data, std::size_t bytes) override {
    on_reply(ticket, data, bytes);
  }
  void deliver_acks(int, std::uint64_t count) override { on_acks(count); }
  std::uint64_t block_elements(int pe) override {
    if (!node_shared()) return block_.size() / config_.element_size;
    std::uint64_t n = 0;
    std::memcpy(&n, resources_->part(ctx_.machine().local_rank(pe)), sizeof n);  // written before the set-up barrier
    return n;
  }
  std::string refuse(const control_record& c) override { return control_problem(c); }
  hub::config plan_routes() const;

  std::unique_ptr<node_memory> resources_;  // null: the node shares no memory (why: unshared_)
  std::string unshared_;
  std::unique_ptr<std::byte, free_deleter> storage_;  // the block when the node shares no memory
  std::unique_ptr<hub> hub_;
  int hook_ = -1;
  int diagnostic_ = -1;
};

// Between nodes: the node router's hop, to the PE with this PE's local rank on the next node
// (modulo its size). Inside the target's node: served by the PE the request reaches there when
// the node shares memory, else straight to the owner. One link per next-hop PE, so a PE's links
// are its node-grid peers (plus the other PEs of its node when it shares no memory).
hub::config polling_engine::plan_routes() const {
  const machine& m = ctx_.machine();
  const node_plan plan = make_node_plan(config_.options.topology, m.num_nodes());
  const int node = m.node_of(rank_);
  const int local = m.local_rank(rank_);
  const auto on_node = [&](int n, int local_rank) { return m.pe_on_node(n, local_rank % m.pes_on_node(n)); };
  hub::config c = hub_basics();
  c.self = rank_;
  c.self_requester = rank_;
  const bool shared = node_shared();
  c.atomic = shared;  // the node's PEs touch each other's blocks; without sharing, only the owner
  c.route.assign(static_cast<std::size_t>(ctx_.size()), -1);
  c.endpoint_of.resize(static_cast<std::size_t>(ctx_.size()));
  std::map<int, int> link_of;  // next PE -> link
  for (int owner = 0; owner < ctx_.size(); ++owner) {
    c.endpoint_of[static_cast<std::size_t>(owner)] = owner;
    if (owner == rank_) continue;
    const int target = m.node_of(owner);
    if (target == node && shared) continue;  // served here, through the node's memory
    const int next = target == node ? owner : on_node(plan.route->next_hop(node, target, -1).pe, local);
    const auto [it, added] = link_of.emplace(next, static_cast<int>(c.links.size()));
    if (added) {
      c.links.push_back(next);
      c.links_between_nodes.push_back(target != node);
    }
    c.route[static_cast<std::size_t>(owner)] = it->second;
  }
  // Incoming links: the node's other PEs (without sharing), and the PEs of upstream nodes that
  // map onto this one.
  std::set<int> senders;
  for (const int q : m.node_pes(node)) {
    if (q != rank_ && !shared) senders.insert(q);
  }
  for (const hop& in : plan.route->in_links(node)) {
    for (const int q : m.node_pes(in.pe)) {
      if (on_node(node, m.local_rank(q)) == rank_) senders.insert(q);
    }
  }
  c.in_links = senders.size();
  // Replies retrace the route: a requesting PE's go back to the endpoint its requests come in from
  // (the same for every owner they go on to: lowest-dimension-first routes from one node form a
  // tree, tests/grid checks it), found by following its route to this PE.
  c.reply_via.assign(static_cast<std::size_t>(ctx_.size()), -1);
  for (int q = 0; q < ctx_.size(); ++q) {
    int previous = q;
    int at = q;
    while (m.node_of(at) != node) {
      previous = at;
      at = on_node(plan.route->next_hop(m.node_of(at), node, -1).pe, m.local_rank(at));
    }
    if (at != rank_) {
      if (shared) continue;  // q's requests for this node are served at `at`, through the node's memory
      previous = at;         // the last hop, inside the node, goes straight to the owner
    }
    c.reply_via[static_cast<std::size_t>(q)] = previous;
  }
  return c;
}

polling_engine::polling_engine(context& ctx, const engine_config& config) : routed_engine(ctx, config) {
  const std::size_t bytes = config.local_elements * config.element_size;
  constexpr std::size_t block_at = 64;  // after the part's element count
  resources_ = make_node_resources(ctx, block_at + bytes, false, &unshared_);
  if (resources_) {
    const machine& m = ctx.machine();
    std::byte* mine = resources_->part(m.local_rank(rank_));
    const std::uint64_t elements = config.local_elements;
    std::memcpy(mine, &elements, sizeof elements);
    place_block(mine + block_at);
    share_node_blocks(*resources_, block_at);
  } else {
    storage_.reset(static_cast<std::byte*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64)));
    if (!storage_) throw std::bad_alloc();
    place_block(storage_.get());
  }
  hub_ = std::make_unique<hub>(plan_routes(), context_access::net(ctx), &context_access::mail(ctx), channel_,
                               static_cast<hub::host&>(*this));
  // Every block (mutexes: ticket locks) is placed everywhere before a PE touches another's (every
  // PE, shared or not: nodes may differ).
  group_->start_barrier();
  context_access::finish_collective(ctx, *group_, "one-sided set-up (barrier)");
  // Serve whenever this PE waits anywhere in transit (collectives, other layers, other engines).
  hook_ = context_access::add_progress_hook(ctx, [this] { return in_wait_ ? false : poll(true); });
  diagnostic_ = context_access::add_diagnostic(ctx, [this] {
    const std::string path = unshared_.empty() ? "" : "; its node shares no memory: " + unshared_;
    return describe_requests() + path + "; " + hub_->describe();
  });
}

polling_engine::~polling_engine() {
  if (!abandoning()) {
    try {
      // Collective: this PE's operations complete, then everyone serves until no message of this
      // engine (credits and acknowledgements included) is in flight anywhere.
      fence();
      quiesce(
          ctx_, *group_, [this] { return poll(true); },
          [this] {
            const auto& c = hub_->counters();
            return std::make_pair(c.messages_sent, c.messages_received);
          },
          std::string(config_.what) + " teardown");
    } catch (...) {
      // Another PE failed while this one was tearing down; the job is ending.
      if (resources_) resources_->abandon();
    }
  } else if (resources_) {
    resources_->abandon();  // the node's other PEs may still touch this memory
  }
  context_access::remove_progress_hook(ctx_, hook_);
  context_access::remove_diagnostic(ctx_, diagnostic_);
  context_access::mail(ctx_).close_channel(channel_);
}

one_sided_stats polling_engine::stats() const {
  one_sided_stats s;
  add_hub_counters(s, hub_->counters());
  add_requester_counters(s);
  s.links = hub_->num_links();
  s.request_buffer_bytes = hub_->buffer_bound();
  return s;
}

}  // namespace

std::unique_ptr<one_sided_engine> make_polling_engine(context& ctx, const engine_config& config) {
  return std::make_unique<polling_engine>(ctx, config);
}

}  // namespace transit::detail
