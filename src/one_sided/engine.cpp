// What every one-sided engine shares: option names and checks, the node plan, the requesting half
// of the routed engines (routed_engine), teardown waves, and the per-context engine registry.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "grid/routers.hpp"
#include "routed_engine.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"
#include "transport/node_memory.hpp"

namespace transit {

std::string_view to_string(request_topology t) noexcept {
  switch (t) {
    case request_topology::fcg: return "fcg";
    case request_topology::mfcg: return "mfcg";
    case request_topology::cfcg: return "cfcg";
    case request_topology::hypercube: return "hypercube";
    case request_topology::mpi_rma: return "mpi-rma";
  }
  return "unknown";
}

std::string_view to_string(progress_mode p) noexcept {
  return p == progress_mode::polling ? "polling" : "helper";
}

request_topology parse_request_topology(std::string_view name) {
  for (const auto t : {request_topology::fcg, request_topology::mfcg, request_topology::cfcg,
                       request_topology::hypercube, request_topology::mpi_rma}) {
    if (name == to_string(t)) return t;
  }
  detail::throw_invalid("request topology", name, "'fcg', 'mfcg', 'cfcg', 'hypercube' or 'mpi-rma'");
}

progress_mode parse_progress_mode(std::string_view name) {
  if (name == "polling") return progress_mode::polling;
  if (name == "helper" || name == "helper-thread") return progress_mode::helper_thread;
  detail::throw_invalid("progress mode", name, "'polling' or 'helper'");
}

namespace detail {

namespace {

void check_options(const context& ctx, const engine_config& config) {
  const auto& o = config.options;
  constexpr std::size_t max_buffer = std::size_t{1} << 30;
  if (o.buffer_bytes < 256 || o.buffer_bytes > max_buffer)
    throw_invalid("one_sided_options.buffer_bytes", o.buffer_bytes, "between 256 and 2^30 bytes");
  if (!config.mutexes && 2 * config.element_size > max_piece_bytes(o.buffer_bytes))
    throw_invalid("one_sided_options.buffer_bytes", o.buffer_bytes,
                  concat("room for a request of two ", config.element_size, "-byte elements (at least ",
                         sizeof(message_header) + sizeof(request_record) + padded(2 * config.element_size),
                         " bytes)"));
  if (o.flush_period.count() < 0)
    throw_invalid("one_sided_options.flush_period", concat(o.flush_period.count(), " us"), "0 or more");
  const bool mpi_available = context_access::net(ctx).mpi() != nullptr;
  if (o.topology == request_topology::mpi_rma && !mpi_available)
    throw_invalid("one_sided_options.topology", "mpi-rma",
                  concat("fcg, mfcg, cfcg or hypercube on the ", ctx.backend(),
                         " backend (MPI windows need the mpi backend)"));
  const int threads = ctx.options().threads_per_rank;
  if (threads > 1 && mpi_available) {
    // mpi_rma's window holds one PE per rank.
    if (o.topology == request_topology::mpi_rma)
      throw_invalid("one_sided_options.topology", "mpi-rma",
                    concat("fcg, mfcg, cfcg or hypercube with ", threads,
                           " PE threads per rank (MPI windows here hold one PE per rank)"));
    // A node's helper is one rank's (its communication thread, or a thread of its own): it serves
    // whole ranks. Every PE checks every node, so that all refuse alike.
    const machine& m = ctx.machine();
    for (int node = 0; o.progress == progress_mode::helper_thread && node < m.num_nodes(); ++node) {
      const int first = m.pe_on_node(node, 0);
      const int pes = m.pes_on_node(node);
      if (first % threads != 0 || pes % threads != 0)
        throw_invalid("one_sided_options.progress", "helper",
                      concat("polling, or nodes of whole ranks: node ", node, " holds ", pes, " PE", pes == 1 ? "" : "s",
                             " from PE ", first, ", and a rank holds ", threads,
                             " PE threads (give --transit-pes-per-node a multiple of ", threads, ")"));
    }
  }
}

std::mutex registry_mutex;
std::map<const context*, std::vector<one_sided_engine*>>& registry() {
  static std::map<const context*, std::vector<one_sided_engine*>> engines;
  return engines;
}

}  // namespace

node_plan make_node_plan(request_topology topology, int nodes) {
  std::vector<int> dims;
  switch (topology) {
    case request_topology::fcg:
    case request_topology::mpi_rma:
      dims = {nodes};
      break;
    case request_topology::mfcg:
    case request_topology::cfcg: {
      const virtual_grid balanced = virtual_grid::balanced(nodes, topology == request_topology::mfcg ? 2 : 3);
      dims.assign(balanced.dims().begin(), balanced.dims().end());
      break;
    }
    case request_topology::hypercube:
      if ((nodes & (nodes - 1)) != 0)
        throw_invalid("number of nodes for request_topology::hypercube", nodes,
                      "a power of two (use fcg, mfcg or cfcg for other node counts)");
      for (int n = nodes; n > 1; n /= 2) dims.push_back(2);
      if (dims.empty()) dims.push_back(1);
      break;
  }
  virtual_grid grid(std::move(dims), nodes);
  // Lowest dimension first: not a public routing scheme, so not through make_router.
  std::unique_ptr<router> route = std::make_unique<detail::ldf_router>(grid);
  return node_plan{std::move(grid), std::move(route)};
}

void quiesce(context& ctx, collective_group& group, const std::function<bool()>& poll,
             const std::function<std::pair<std::uint64_t, std::uint64_t>()>& counts, std::string_view what) {
  std::uint64_t wave[2] = {0, 0};
  std::uint64_t previous[2] = {~std::uint64_t{0}, 0};
  bool in_flight = false;
  context_access::wait_until(
      ctx,
      [&] {
        const bool progressed = poll();
        if (in_flight) {
          if (!group.test()) return progressed ? step_result::progressed : step_result::idle;
          in_flight = false;
          if (wave[0] == wave[1] && wave[0] == previous[0] && wave[1] == previous[1]) return step_result::done;
          previous[0] = wave[0];
          previous[1] = wave[1];
          return step_result::progressed;
        }
        const auto [sent, received] = counts();
        wave[0] = sent;
        wave[1] = received;
        group.start_allreduce(wave, 2, scalar_type::u64, reduce_op::sum);
        in_flight = true;
        return step_result::progressed;
      },
      what);
}

engine_registration::engine_registration(context& ctx, one_sided_engine* engine) : ctx_(ctx), engine_(engine) {
  std::lock_guard lock(registry_mutex);
  registry()[&ctx_].push_back(engine_);
}

engine_registration::~engine_registration() {
  std::lock_guard lock(registry_mutex);
  auto& engines = registry()[&ctx_];
  std::erase(engines, engine_);
  if (engines.empty()) registry().erase(&ctx_);
}

void fence_all_engines(context& ctx) {
  std::vector<one_sided_engine*> engines;
  {
    std::lock_guard lock(registry_mutex);
    const auto it = registry().find(&ctx);
    if (it != registry().end()) engines = it->second;
  }
  for (auto* e : engines) e->fence();
}

std::unique_ptr<one_sided_engine> make_one_sided_engine(context& ctx, const engine_config& config) {
  check_options(ctx, config);
  if (config.options.topology == request_topology::mpi_rma) {
#ifdef TRANSIT_WITH_MPI
    return make_mpi_rma_engine(ctx, config);
#endif
  }
  if (config.options.progress == progress_mode::helper_thread) return make_helper_engine(ctx, config);
  return make_polling_engine(ctx, config);
}

// ---- routed_engine: the requesting half ----

namespace {

// Sets a flag for a scope and restores it, exceptions included.
class flag_scope {
 public:
  explicit flag_scope(bool& flag) : flag_(flag), saved_(flag) { flag_ = true; }
  ~flag_scope() { flag_ = saved_; }
  flag_scope(const flag_scope&) = delete;
  flag_scope& operator=(const flag_scope&) = delete;

 private:
  bool& flag_;
  bool saved_;
};

}  // namespace

routed_engine::routed_engine(context& ctx, const engine_config& config)
    : ctx_(ctx),
      rank_(ctx.rank()),
      config_(config),
      piece_bytes_(max_piece_bytes(config.options.buffer_bytes)),
      channel_(context_access::mail(ctx).open_channel()),
      group_(context_access::net(ctx).make_group()),
      node_(ctx.machine().node_of(ctx.rank())),
      uncaught_at_start_(std::uncaught_exceptions()),
      registration_(ctx, this) {}

routed_engine::~routed_engine() = default;

hub::config routed_engine::hub_basics() const {
  hub::config c;
  c.buffer_bytes = config_.options.buffer_bytes;
  c.flush_period = config_.options.flush_period;
  c.combine = config_.options.combine;
  c.ops = config_.ops;
  c.element_size = config_.element_size;  // mutexes: mutex_bytes
  return c;
}

void routed_engine::place_block(std::byte* at) {
  block_ = {at, config_.local_elements * config_.element_size};
  if (config_.initialize != nullptr) {
    config_.initialize(block_.data(), config_.local_elements);
  } else {
    std::memset(block_.data(), 0, block_.size());
  }
}

void routed_engine::share_node_blocks(const node_memory& resources, std::size_t block_at) {
  node_blocks_.clear();
  for (int l = 0; l < ctx_.machine().pes_on_node(node_); ++l) node_blocks_.push_back(resources.part(l) + block_at);
}

std::uint32_t routed_engine::new_ticket(std::byte* out, std::size_t bytes, completion* done,
                                        std::shared_ptr<completion> keep) {
  if (free_tickets_.empty()) {
    TRANSIT_ASSERT(tickets_.size() < combined_ticket, "tickets fit in 31 bits");
    free_tickets_.push_back(static_cast<std::uint32_t>(tickets_.size()));
    tickets_.emplace_back();
  }
  const std::uint32_t ticket = free_tickets_.back();
  free_tickets_.pop_back();
  tickets_[ticket] = ticket_slot{out, bytes, done, std::move(keep)};
  ++live_tickets_;
  return ticket;
}

void routed_engine::on_reply(std::uint32_t ticket, const std::byte* data, std::size_t bytes) {
  TRANSIT_ASSERT(ticket < tickets_.size() && tickets_[ticket].done != nullptr, "reply for a live ticket");
  ticket_slot& slot = tickets_[ticket];
  TRANSIT_ASSERT(bytes == slot.bytes, "reply of the size requested");
  if (bytes > 0) std::memcpy(slot.out, data, bytes);
  --slot.done->pending;
  slot.done = nullptr;
  slot.keep.reset();
  free_tickets_.push_back(ticket);
  --live_tickets_;
}

std::string routed_engine::control_problem(const control_record& c) const {
  if (c.type == control_type::acks) {
    if (c.value > acks_expected_ - acks_received_)
      return concat(c.value, " acknowledgements for PE ", c.pe, ", which awaits ", acks_expected_ - acks_received_);
    return {};
  }
  if (c.value >= tickets_.size() || tickets_[c.value].done == nullptr)
    return concat("reply for ticket ", c.value, " of PE ", c.pe, ", which awaits none");
  if (c.payload_bytes != tickets_[c.value].bytes)
    return concat("reply of ", c.payload_bytes, " bytes for ticket ", c.value, " of PE ", c.pe, " (expected ",
                  tickets_[c.value].bytes, ")");
  return {};
}

void routed_engine::issue(const operation& op, completion* done, std::shared_ptr<completion> keep) {
  const std::size_t element = config_.mutexes ? 0 : config_.element_size;
  const bool region = op.code == op_code::put || op.code == op_code::get || op.code == op_code::accumulate;
  const bool packed = op.code == op_code::put_packed || op.code == op_code::get_packed;
  const bool ticketed = op.code == op_code::get || op.code == op_code::fetch_add ||
                        op.code == op_code::compare_exchange || op.code == op_code::lock ||
                        op.code == op_code::get_packed;
  // A packed request is one piece: its sender sized it to fit (max_packed_bytes()).
  const std::uint64_t per_piece = packed ? std::max<std::uint64_t>(1, op.count)
                                  : region ? std::max<std::uint64_t>(1, piece_bytes_ / element) : 1;
  TRANSIT_ASSERT(!packed || (op.code == op_code::put_packed ? op.packed_bytes
                                                            : std::max<std::uint64_t>(op.packed_bytes, op.count * sizeof(packed_region))) <= max_packed_bytes(),
                 "a packed request fits max_packed_bytes()");
  bool sent = false;  // some piece became a request
  const bool mutex_in_node = (op.code == op_code::lock || op.code == op_code::unlock) && take_in_node(op, done);
  for (std::uint64_t first = 0; !mutex_in_node && first < op.count;) {
    const std::uint64_t n = std::min(per_piece, op.count - first);
    std::size_t in_bytes = 0;
    std::size_t out_bytes = 0;
    const std::byte* payload = nullptr;
    std::byte* out = nullptr;
    switch (op.code) {
      case op_code::put:
      case op_code::accumulate:
        in_bytes = n * element;
        payload = op.in + first * element;
        break;
      case op_code::get:
        out_bytes = n * element;
        out = op.out + first * element;
        break;
      case op_code::fetch_add:
        in_bytes = out_bytes = element;
        payload = op.in;
        out = op.out;
        break;
      case op_code::compare_exchange:
        in_bytes = 2 * element;
        out_bytes = element;
        payload = op.in;
        out = op.out;
        break;
      case op_code::put_packed:
        in_bytes = static_cast<std::size_t>(op.packed_bytes);
        payload = op.in;
        break;
      case op_code::get_packed:
        in_bytes = static_cast<std::size_t>(op.count) * sizeof(packed_region);
        out_bytes = static_cast<std::size_t>(op.packed_bytes);
        payload = op.in;
        out = op.out;
        break;
      case op_code::lock:
      case op_code::unlock:
        break;
    }
    request_record r{op.code, static_cast<std::uint8_t>(op.reduce), 0, static_cast<std::uint32_t>(in_bytes), rank_, no_ticket,
                     op.owner, static_cast<std::uint32_t>(n), op.offset + first};
    first += n;
    if (apply_in_node(r, payload, out)) continue;
    sent = true;
    ++done->pending;
    ++requests_sent_;
    if (ticketed) {
      r.ticket = new_ticket(out, out_bytes, done, keep);
    } else {
      ++acks_expected_;
    }
    if (backlog_.empty() && submit(r, payload)) {
      if (!ticketed) --done->pending;
      continue;
    }
    pending p{r, payload, {}, ticketed ? nullptr : done};
    if (payload != nullptr && in_bytes <= p.small.size()) {  // atomics' operands may be temporaries
      std::memcpy(p.small.data(), payload, in_bytes);
      p.payload = nullptr;
    }
    backlog_.push_back(p);
  }
  if (sent ? ++issued_since_poll_ >= 32 || config_.options.flush_period.count() == 0
           : ++applied_since_serve_ >= applied_between_serves)
    serve_while_issuing();
}

bool routed_engine::apply_at_once(const operation& op) {
  if ((op.code != op_code::fetch_add && op.code != op_code::compare_exchange) || op.count != 1 || config_.mutexes)
    return false;
  const request_record r{op.code, static_cast<std::uint8_t>(op.reduce), 0,
                         static_cast<std::uint32_t>((op.code == op_code::compare_exchange ? 2 : 1) * config_.element_size),
                         rank_, no_ticket, op.owner, 1, op.offset};
  if (!apply_in_node(r, op.in, op.out)) return false;
  if (++applied_since_serve_ >= applied_between_serves) serve_while_issuing();  // as issue() does
  return true;
}

void routed_engine::serve_while_issuing() {
  issued_since_poll_ = 0;
  applied_since_serve_ = 0;
  poll(false);
  if (context_access::net(ctx_).aborted()) throw job_aborted();  // a PE spinning on its node's memory unwinds too
  flag_scope quiet(in_wait_);  // this engine has just polled without flushing: its hook stays quiet
  context_access::run_progress_hooks(ctx_);
}

// A mutex homed on this PE's node, where the node shares memory: its ticket lock, taken here. A
// lock whose ticket is not served yet completes in poll(), so the PE waiting for it keeps serving
// its peers (and the lock requests of other nodes' PEs, which take tickets of the same lock).
bool routed_engine::take_in_node(const operation& op, completion* done) {
  if (node_blocks_.empty() || ctx_.machine().node_of(op.owner) != node_) return false;
  std::byte* mutex = node_block(op.owner) + op.offset * mutex_bytes;
  ++applied_in_node_;
  if (op.code == op_code::unlock) {
    release_mutex(mutex);  // the caller completed this PE's operations first (fence_all_engines)
    return true;
  }
  const std::uint64_t ticket = take_ticket(mutex);
  if (!now_serving(mutex, ticket)) {
    ++done->pending;
    node_locks_.push_back(node_lock{mutex, ticket, done});
  }
  return true;
}

bool routed_engine::grant_node_locks() {
  const auto served = [](const node_lock& l) {
    if (!now_serving(l.mutex, l.ticket)) return false;
    --l.done->pending;
    return true;
  };
  return std::erase_if(node_locks_, served) > 0;
}

// The same-node path of both progress modes (docs/one_sided.md, "Inside a node").
bool routed_engine::apply_in_node(const request_record& r, const std::byte* payload, std::byte* out) {
  if (node_blocks_.empty() || ctx_.machine().node_of(r.owner) != node_) return false;
  const std::size_t size = config_.element_size;
  std::byte* block = node_block(r.owner);
  std::byte* word = block + r.offset * size;
  switch (r.op) {
    case op_code::put:
      copy_into_block(word, payload, r.count, size, true);
      break;
    case op_code::get:
      copy_from_block(out, word, r.count, size, true);
      break;
    case op_code::accumulate:
      config_.ops->accumulate(word, payload, r.count, static_cast<reduce_op>(r.reduce), true);
      break;
    case op_code::fetch_add:
      config_.ops->fetch_add(word, payload, out, true);
      break;
    case op_code::compare_exchange:
      config_.ops->compare_exchange(word, payload, out, true);
      break;
    case op_code::put_packed:
    case op_code::get_packed:
      apply_packed(r, payload, block, out, size, true);
      break;
    case op_code::lock:
    case op_code::unlock:
      return false;  // take_in_node's
  }
  ++applied_in_node_;
  return true;
}

void routed_engine::add_requester_counters(one_sided_stats& s) const noexcept {
  s.requests_sent = requests_sent_;
  s.applied_in_node = applied_in_node_;
  s.node_memory_shared = node_blocks_.empty() ? 0 : 1;
  // Mutexes: the lock and unlock operations applied to this PE's, wherever they were taken.
  if (config_.mutexes) s.requests_served = mutex_operations(block_.data(), config_.local_elements);
}

bool routed_engine::drain_backlog() {
  bool progressed = false;
  while (!backlog_.empty()) {
    pending& p = backlog_.front();
    if (!submit(p.record, p.payload != nullptr ? p.payload : p.small.data())) break;
    if (p.done != nullptr) --p.done->pending;
    backlog_.pop_front();
    progressed = true;
  }
  return progressed;
}

bool routed_engine::poll(bool waiting) {
  bool progressed = drain_backlog();
  progressed |= poll_endpoint(waiting);
  if (!node_locks_.empty()) progressed |= grant_node_locks();
  if (!backlog_.empty()) progressed |= drain_backlog();  // credits may have come back
  return progressed;
}

template <class Done>
void routed_engine::wait_for(Done&& finished, std::string_view what) {
  flag_scope scope(in_wait_);  // this engine polls itself here; its progress hook stays quiet
  context_access::wait_until(
      ctx_,
      [&] {
        const bool progressed = poll(true);
        if (finished()) return step_result::done;
        return progressed ? step_result::progressed : step_result::idle;
      },
      what);
}

void routed_engine::wait(completion& c, std::string_view what) {
  if (c.pending != 0) wait_for([&] { return c.pending == 0; }, what);
}

void routed_engine::fence() {
  // Nothing in flight (operations applied inside the node are complete): no wait, as wait().
  if (!settled()) wait_for([&] { return settled(); }, concat(config_.what, "::fence"));
}

void routed_engine::sync() {
  fence();
  group_->start_barrier();
  wait_for([&] { return group_->test(); }, concat(config_.what, "::sync"));
}

std::string routed_engine::describe_requests() const {
  std::ostringstream out;
  out << config_.what << " on PE " << rank_ << ": " << live_tickets_ << " requests awaiting replies, "
      << acks_received_ << " of " << acks_expected_ << " acknowledgements, " << backlog_.size()
      << " requests waiting for buffer room, " << node_locks_.size() << " locks waiting for their tickets";
  return out.str();
}

}  // namespace detail
}  // namespace transit
