#include "transit/detail/streamer/core.hpp"

#include <algorithm>
#include <cstddef>
#include <climits>
#include <cstdio>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "core/wire_error.hpp"
#include "model/tuner.hpp"
#include "runtime/context_state.hpp"
#include "streamer/wire.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "core/simulated_costs.hpp"
#include "trace/recorder.hpp"

namespace transit::detail {

namespace {

// Above this many unfinished sends (MPI backlog), a top-level insert stops to receive and
// forward until half have gone: memory stays bounded, and the PE never waits without receiving.
constexpr std::size_t max_pending_sends = 64;

// Items sent between two polls of the transport from insert (see after_send). Sends to peers
// only: a PE's own items are no send (own_capacity). With one item per message at 2 PEs,
// 32 polls as often as 64 did when own items were sends too (16 and 256 ran 0.85x and 0.88x of
// 64 then).
constexpr std::uint64_t poll_items = 32;

// Items inserted between two polls of the network from progress() in an insert loop; a call with
// nothing inserted since the previous one always polls (that PE waits for something). A failed
// probe and a scan of the sends cost as much as 15-30 inserts on mpi here. Histogram (2 ranks,
// progress() every 256 inserts) ran 1.04x, 1.07x, 1.10x, 1.12x faster at 256, 512, 1024, 2048;
// RandomAccess (progress() every 512 inserts, its look-ahead) lost 6% at 1024, nothing at 512.
constexpr std::uint64_t progress_poll_items = 512;

// In a dynamic step, automatic buffers are opened with room for this fraction of their capacity.
// The automatic size puts the per-message cost at 2% of the items' (docs/tuning.md), so here it
// is at most 16%; PHOLD on 8 local PEs went from 0.84-0.90 to 0.99 of the best fixed size.
constexpr std::uint32_t dynamic_fill_divisor = 8;

// Phases travel in one byte of the header.
constexpr int max_phases = 255;

virtual_grid grid_for(const context& ctx, const streamer_options& options) {
  if (!options.grid) return virtual_grid::node_pe(ctx.machine());
  if (options.grid->num_pes() != ctx.size())
    throw_invalid("streamer_options.grid", concat(options.grid->str(), " for ", options.grid->num_pes(), " PEs"),
                  concat("a grid for the job's ", ctx.size(), " PEs"));
  return *options.grid;
}

void check_capacity(const streamer_options& options) {
  // 0 is automatic (from the calibrated profile). Item counts travel in 32 bits; message size is
  // otherwise unbounded (the transport splits).
  if (options.buffer_items > UINT32_MAX)
    throw_invalid("streamer_options.buffer_items", options.buffer_items, concat("at most ", UINT32_MAX));
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 0xcbf29ce484222325ULL) {
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash;
}

}  // namespace

streamer_core::streamer_core(context& ctx, const streamer_options& options, std::size_t item_bytes,
                             std::string_view type_name, bool wants_sources, bool broadcasts)
    : ctx_(ctx),
      rank_(ctx.rank()),
      size_(ctx.size()),
      item_bytes_(item_bytes),
      wants_sources_(wants_sources),
      broadcasts_(broadcasts),
      capacity_(static_cast<std::uint32_t>(std::min<std::size_t>(options.buffer_items, UINT32_MAX))),
      max_buffered_(options.max_buffered_items),
      type_name_(type_name),
      channel_(context_access::mail(ctx).open_channel()),
      flush_period_(options.flush_period),
      last_flush_check_(steady_clock::now()),
      impl_(new impl) {
  try {
    construct(options);
  } catch (...) {
    delete impl_;  // the destructor does not run for a constructor that throws
    throw;
  }
}

void streamer_core::construct(const streamer_options& options) {
  context& ctx = ctx_;
  const std::size_t item_bytes = item_bytes_;
  impl_->group = net().make_group();
  // Receive events in the trace carry the dimension a message arrived on, which its header says:
  // from the first message on (the link announcements of discover_in_links).
  if (trace::recorder* t = net().tracer()) t->dimension_at(channel_, offsetof(wire_header, phase));
  // Bad options are found locally, but every PE first joins the check that all PEs built the same
  // streamer: a PE that failed alone must not leave the others waiting in a collective.
  std::exception_ptr local_error;
  std::string self;
  tuning_seed seed;
  const bool automatic = options.buffer_items == 0 || options.tune;
  tune_ = options.tune;
  try {
    check_capacity(options);
    impl_->plan = make_router(options.route, grid_for(ctx, options), ctx.machine());
    if (impl_->plan->num_phases() > max_phases)
      throw_invalid("number of routing phases", impl_->plan->num_phases(), concat("at most ", max_phases));
    if (automatic) seed = local_tuning_seed(ctx, item_bytes);  // reads the profile: may throw
    step_end_ = step_end_policy();                             // may throw
    self = describe_self();
  } catch (const std::exception& e) {
    local_error = std::current_exception();
    self = concat("streamer #", channel_, " of ", type_name_, " that failed locally (", e.what(), ")");
  }
  try {
    check_same_streamer_everywhere(self, seed);
    if (local_error) std::rethrow_exception(local_error);
    if (options.buffer_items == 0)
      capacity_ = static_cast<std::uint32_t>(std::min<std::size_t>(automatic_buffer_items(seed, item_bytes), UINT32_MAX));
    smaller_in_dynamic_steps_ = options.buffer_items == 0 && !tune_;
    build_routes();
    discover_in_links();
    if (tune_) impl_->tuner = make_step_tuner(ctx_, seed, configuration(), item_bytes_);
  } catch (...) {
    if (trace::recorder* t = net().tracer()) t->forget_channel(channel_);
    mail().close_channel(channel_);
    throw;
  }
  diagnostic_id_ = context_access::add_diagnostic(ctx_, [this] { return describe(); });
  step_started_ = steady_clock::now();
  trace_step_start();
}

transport& streamer_core::net() const noexcept { return context_access::net(ctx_); }
mailbox& streamer_core::mail() const noexcept { return context_access::mail(ctx_); }

streamer_group::streamer_group(context& ctx) : ctx_(ctx), group_(context_access::net(ctx).make_group().release()) {}

streamer_group::~streamer_group() { delete group_; }

const router& streamer_core::route_plan() const noexcept { return *impl_->plan; }

void streamer_core::trace_step_start() {
  if (net().tracer() == nullptr) return;
  traced_step_start_ = trace::recorder::now();
  traced_items_at_step_start_ = stats_.items_inserted;
}

void streamer_core::trace_step_end() {
  trace::recorder* t = net().tracer();
  if (t == nullptr) return;
  t->slice(t->label(concat("streamer<", type_name_, "> #", channel_, " step"), "step", "items inserted"),
           traced_step_start_, trace::recorder::now(), step_ - 1,  // end_step() has counted the step
           stats_.items_inserted - traced_items_at_step_start_);
}

std::string streamer_core::describe_self() const {
  const auto& grid = impl_->plan->grid();
  return concat("streamer #", channel_, " of ", type_name_, " (", item_bytes_, " bytes), grid ", grid.str(),
                ", routing ", to_string(impl_->plan->kind()), tune_ ? ", tuned" : "",
                wants_sources_ ? ", delivering sources" : "",
                step_end_ == step_end::markers            ? ", steps ending by final markers"
                : step_end_ == step_end::acknowledgements ? ", steps ending by acknowledgement"
                : step_end_ == step_end::adaptive         ? ", steps ending as chosen step by step"
                                                          : "");
}

void streamer_core::build_routes() {
  const int phases = impl_->plan->num_phases();
  links_.clear();
  impl_->out_index.clear();
  link own;  // items for this PE: aggregated like the others, delivered when full or flushed
  own.pe = rank_;
  links_.push_back(std::move(own));
  for (const hop& h : impl_->plan->out_links(rank_)) {
    impl_->out_index.emplace(std::int64_t{h.pe} * phases + h.phase, static_cast<int>(links_.size()));
    link l;
    l.pe = h.pe;
    l.phase = h.phase;
    // Items on phase 0 were all inserted by the sender; later phases may carry items of others.
    l.carries_sources = wants_sources_ && h.phase > 0;
    l.carries_destinations = !impl_->plan->ends_route(h.phase) || l.carries_sources;
    l.inter_node = ctx_.machine().node_of(h.pe) != ctx_.machine().node_of(rank_);
    // Where the transport confirms delivery (MPI's synchronous sends), a link without
    // destinations (its phase ends every route, no sources travel) needs no acknowledgement of
    // transit's: the receiver only delivers, never forwards, so a confirmed message is a delivered
    // one (docs/streamer.md, "Steps and termination"). Its largest message must go whole.
    const std::size_t largest = sizeof(wire_header) + std::size_t{capacity_} * item_bytes_;
    l.confirmed_by_transport = !l.carries_destinations && largest <= net().confirmable_bytes();
    links_.push_back(std::move(l));
  }
  // Nothing sent on the new links yet; tuning rebuilds them only between steps.
  // Adaptive: the first step ends by acknowledgement (a step with few items costs a message per
  // link carrying items, not one per link); then each step's traffic chooses for the next.
  adaptive_ends_ = chooses_step_by_step(step_end_, grid_links(*impl_->plan), grid_hops(*impl_->plan), cores_shared_,
                                        transport_confirms_);
  acknowledged_ends_ = adaptive_ends_ || step_end_ == step_end::acknowledgements;
  unacknowledged_ = 0;
  parent_in_link_ = -1;
  route_.assign(size_, &links_[self_link]);
  for (int dest = 0; dest < size_; ++dest) {
    if (dest == rank_) continue;
    const hop h = impl_->plan->next_hop(rank_, dest, -1);
    const int index = link_index(h.pe, h.phase);
    TRANSIT_ASSERT(index > 0, "router returned a hop that is not among its out_links");
    route_[dest] = &links_[static_cast<std::size_t>(index)];
  }
}

step_configuration streamer_core::configuration() const {
  return step_configuration{impl_->plan->grid(), impl_->plan->kind(), capacity_};
}

streamer_options streamer_core::current_options() const {
  streamer_options o;
  o.grid = impl_->plan->grid();
  o.route = impl_->plan->kind();
  o.buffer_items = capacity_;
  o.flush_period = flush_period_;
  o.max_buffered_items = max_buffered_;
  o.tune = tune_;
  return o;
}

// One allreduce of (signature, ~signature) under max gives the largest and the smallest signature:
// equal means every PE built the same streamer. Only on a mismatch do two more allreduces find
// one PE on each side and carry both descriptions to everyone, so every PE can name both.
void streamer_core::check_same_streamer_everywhere(const std::string& self, tuning_seed& seed) {
  std::uint64_t signature = fnv1a(self);
  if (impl_->plan) {  // the PE placement too: two grids of one shape may place PEs differently
    const auto& grid = impl_->plan->grid();
    for (int pe = 0; pe < grid.num_pes(); ++pe)
      signature = (signature ^ static_cast<std::uint64_t>(grid.slot_of(pe))) * 0x100000001b3ULL;
  }
  // Under max, PE 0's seed (others give 0) reaches every PE: the model's inputs then agree
  // even where hosts hold different profiles.
  // And whether any PE shares its core (the way steps end must be the same everywhere).
  // And whether every PE's transport confirms delivery (chooses_step_by_step).
  const bool shares = !simulated_build && context_access::state(ctx_).naps;
  const bool confirms = net().confirmable_bytes() > 0;
  constexpr int flags = 4;
  std::uint64_t extremes[flags + tuning_seed::size] = {signature, ~signature, shares ? 1u : 0u, confirms ? 0u : 1u};
  if (rank_ == 0) std::memcpy(extremes + flags, seed.values, sizeof seed.values);
  impl_->group->start_allreduce(extremes, flags + tuning_seed::size, scalar_type::u64, reduce_op::max);
  context_access::finish_collective(ctx_, *impl_->group, "streamer construction (same streamer on every PE)");
  std::memcpy(seed.values, extremes + flags, sizeof seed.values);
  cores_shared_ = extremes[2] != 0;
  transport_confirms_ = extremes[3] == 0;
  const std::uint64_t largest = extremes[0], smallest = ~extremes[1];
  if (largest == smallest) return;

  const auto pes = static_cast<std::uint64_t>(size_);
  const auto me = static_cast<std::uint64_t>(rank_);
  std::uint64_t sides[2] = {signature == largest ? pes - me : 0, signature == smallest ? pes - me : 0};
  impl_->group->start_allreduce(sides, 2, scalar_type::u64, reduce_op::max);
  context_access::finish_collective(ctx_, *impl_->group, "streamer construction (mismatch)");
  const int pe_a = static_cast<int>(pes - sides[1]), pe_b = static_cast<int>(pes - sides[0]);

  constexpr std::size_t words = 32;  // 256 bytes of description per side
  std::uint64_t text[2 * words] = {};
  const auto put = [&](std::uint64_t* into) {
    std::string shown = self;
    if (shown.size() >= words * 8) shown = shown.substr(0, words * 8 - 4) + "...";
    std::memcpy(into, shown.data(), shown.size());
  };
  if (rank_ == pe_a) put(text);
  if (rank_ == pe_b) put(text + words);
  impl_->group->start_allreduce(text, static_cast<int>(2 * words), scalar_type::u64, reduce_op::max);
  context_access::finish_collective(ctx_, *impl_->group, "streamer construction (mismatch)");
  const auto read = [&](const std::uint64_t* from) {
    const char* bytes = reinterpret_cast<const char*>(from);
    return std::string(bytes, strnlen(bytes, words * 8));
  };
  std::string a = read(text), b = read(text + words);
  if (a == b) b += " (its grid places the PEs differently)";
  throw std::logic_error(concat("streamers constructed differently across PEs: PE ", pe_a, " constructed ", a,
                                "; PE ", pe_b, " constructed ", b,
                                "; every PE must construct its streamers in the same order, with the same item "
                                "type, grid and routing"));
}

std::size_t streamer_core::undelivered_messages() {
  const auto data = [](const message& m) { return is_control(m) || is_acknowledgement(m) ? 0 : 1; };
  std::size_t n = mail().close_channel(channel_) + local_messages_.size();
  for (std::size_t i = batch_.next; i < batch_.messages.size(); ++i) n += data(batch_.messages[i]);
  for (std::size_t i = local_.next; i < local_.messages.size(); ++i) n += data(local_.messages[i]);
  for (const auto& m : deferred_) n += data(m);
  return n;
}

std::string streamer_core::loss_report() {
  const std::uint64_t left = buffered_items();
  const std::size_t undelivered = undelivered_messages();
  const bool mid_step = state_ != step_state::open || quiescing_ || left > 0 || undelivered > 0 ||
                        impl_->has_handed.load(std::memory_order_acquire) ||
                        activity() != activity_at_step_start_;
  if (!mid_step) return {};
  const char* state = quiescing_ ? "in quiesce()" : state_ == step_state::open ? "open" : "in wait()";
  return concat(name(), " destroyed mid-step (step ", step_, ", ", state, "): ", left,
                " items buffered and ", undelivered,
                " messages undelivered are lost; destroy a streamer only after finish() or quiesce() returned on "
                "every PE, with nothing inserted since");
}

std::string streamer_core::name() const { return concat("streamer<", type_name_, "> #", channel_); }

std::string streamer_core::release_reporting_loss() {
  TRANSIT_ASSERT(!released_, "release_reporting_loss called twice");
  released_ = true;
  return loss_report();
}

streamer_core::~streamer_core() {
  struct free_impl {
    impl* p;
    ~free_impl() { delete p; }
  } const freed_last{impl_};  // after whatever the body below still asks of it, on every return
  context_access::remove_diagnostic(ctx_, diagnostic_id_);
  if (trace::recorder* t = net().tracer()) t->forget_channel(channel_);
  // Released: the front end reported what was lost, so peers still in the step must not wait.
  const std::string lost = released_ ? std::string() : loss_report();
  if (lost.empty()) {
    announce_departure();
    return;
  }
  if (std::uncaught_exceptions() > 0) return;  // the job is failing already; that failure is reported
  context_access::end_job(ctx_, lost);
}

const std::vector<int>& streamer_core::broadcast_links(int root, int arrived_phase) {
  const std::int64_t key = std::int64_t{root} * 65536 + (arrived_phase + 1);
  auto it = impl_->broadcast_cache.find(key);
  if (it == impl_->broadcast_cache.end()) {
    std::vector<hop> children;
    impl_->plan->broadcast_children(rank_, root, arrived_phase, children);
    std::vector<int> indices;
    for (const auto& h : children) indices.push_back(link_index(h.pe, h.phase));
    it = impl_->broadcast_cache.emplace(key, std::move(indices)).first;
  }
  return it->second;
}

int streamer_core::link_index(int pe, int phase) const {
  const auto it = impl_->out_index.find(std::int64_t{pe} * impl_->plan->num_phases() + phase);
  return it == impl_->out_index.end() ? -1 : it->second;
}

void streamer_core::throw_bad_destination(int dest) const {
  throw std::out_of_range(concat("streamer::insert: destination PE ", dest, " is outside [0, ", size_,
                                 "): expected a PE of this job"));
}

void streamer_core::throw_closed_step(const char* call) const {
  throw std::logic_error(concat("streamer::", call,
                                " after done() and before wait() returned: this PE's step is closed; ", call,
                                " after wait() returns (or use quiesce() when deliveries insert)"));
}

void streamer_core::throw_corrupt(int source, std::string_view problem) const {
  corrupt_message(concat("streamer<", type_name_, ">"), concat("message on channel ", channel_), source, problem);
}

std::size_t streamer_core::buffer_bytes(const link& l) const noexcept { return buffer_bytes_for(l, l.capacity); }

void streamer_core::hand_over(std::vector<handed_buffer>& buffers, std::uint64_t items_inserted) {
  {
    std::lock_guard lock(impl_->handed_mutex);
    if (!impl_->accepting_handed)
      throw std::logic_error(
          "streamer::inserter: items handed over after the PE called done() in this step (flush or destroy "
          "every inserter before done, wait or finish)");
    for (auto& b : buffers) impl_->handed.push_back(std::move(b));
    impl_->handed_items += items_inserted;
  }
  buffers.clear();
  impl_->has_handed.store(true, std::memory_order_release);
}

// Each handed buffer goes out through send() as if it were the link's own: the link's open buffer
// (the PE's own items) steps aside for it and comes back after, so counts, flags, the partial
// buffer's compaction and the statistics are those of every other message.
bool streamer_core::send_handed_over() {
  if (!impl_->has_handed.load(std::memory_order_acquire)) return false;
  std::uint64_t items = 0;
  {
    std::lock_guard lock(impl_->handed_mutex);
    impl_->handed_scratch.swap(impl_->handed);
    items = impl_->handed_items;
    impl_->handed_items = 0;
    impl_->has_handed.store(false, std::memory_order_relaxed);
  }
  stats_.items_inserted += items;
  for (handed_buffer& h : impl_->handed_scratch) {
    link& l = links_[static_cast<std::size_t>(h.link)];
    link own;
    std::swap(own.buffer, l.buffer);
    own.next = l.next;
    own.end = l.end;
    own.next_dest = l.next_dest;
    own.next_source = l.next_source;
    own.capacity = l.capacity;
    l.buffer = std::move(h.buffer);
    l.capacity = h.capacity;
    std::byte* payload = l.buffer.payload();
    l.next = payload + sizeof(wire_header) + h.items * item_bytes_;
    l.end = payload + sizeof(wire_header) + h.capacity * item_bytes_;
    point_link_arrays(l, payload, h.capacity, h.items);
    ++buffers_allocated_;  // send() counts it out again
    buffer_bytes_allocated_ += buffer_bytes(l);
    if (max_buffered_ != 0) buffered_ += h.items;
    send(l, h.items == h.capacity ? flush_kind::full : flush_kind::final);
    l.buffer = std::move(own.buffer);
    l.next = own.next;
    l.end = own.end;
    l.next_dest = own.next_dest;
    l.next_source = own.next_source;
    l.capacity = own.capacity;
  }
  const bool sent = !impl_->handed_scratch.empty();
  impl_->handed_scratch.clear();
  return sent;
}

std::uint64_t streamer_core::buffered_items() const noexcept {
  std::uint64_t total = 0;
  for (const auto& l : links_) total += items_in(l);
  return total;
}

void streamer_core::open_buffer(link& l) {
  if (in_callback_) note_callback_inserts();  // a callback's insert opening it makes it smaller
  l.capacity = dynamic_step_ && smaller_in_dynamic_steps_ ? std::max<std::uint32_t>(1, capacity_ / dynamic_fill_divisor)
                                                          : capacity_;
  // Own items (own_capacity): with one item per message at 2 PEs, half the items each paid a
  // buffer, a send and a delivery of their own. Not in a dynamic step (deliveries insert), whose
  // deliveries stay as small as its messages (dynamic_fill_divisor).
  if (l.phase < 0) {
    const std::uint32_t own = dynamic_step_ ? l.capacity : own_capacity(l.capacity, item_bytes_);
    own_items_at_poll_ = own > l.capacity;
    l.capacity = own;
  }
  const std::size_t bytes = buffer_bytes(l);
  l.buffer = net().allocate(bytes);
  std::byte* payload = l.buffer.payload();
  l.next = payload + sizeof(wire_header);
  l.end = l.next + l.capacity * item_bytes_;
  point_link_arrays(l, payload, l.capacity, 0);
  ++buffers_allocated_;
  buffer_bytes_allocated_ += bytes;
  stats_.buffers_peak = std::max(stats_.buffers_peak, buffers_allocated_);
  stats_.buffer_bytes_peak = std::max(stats_.buffer_bytes_peak, buffer_bytes_allocated_);
}

void streamer_core::buffer_full(link& l) {
  if (max_buffered_ != 0) ++buffered_;  // the item that filled it, counted before send() takes all
  send(l, flush_kind::full);
}

void streamer_core::send(link& l, flush_kind kind, bool with_final_marker) {
  const std::uint32_t n = items_in(l);
  // A step ending by acknowledgement closes without markers, so a message that no link announced
  // can be counted by its confirmation alone (receiver: checked_header).
  if (kind == flush_kind::final && l.carries_destinations && n != 0 && n <= direct_items && acknowledged_ends_ &&
      transport_confirms_ && !quiescing_ && !with_final_marker && send_direct(l, n))
    return;
  if (!l.buffer) {
    if (!with_final_marker) return;
    l.buffer = net().allocate(sizeof(wire_header));  // a bare final marker
  } else {
    --buffers_allocated_;
    buffer_bytes_allocated_ -= buffer_bytes(l);
  }
  std::byte* payload = l.buffer.payload();
  std::size_t bytes = sizeof(wire_header) + n * item_bytes_;
  std::uint8_t flags = with_final_marker ? final_marker : 0;
  if (quiescing_) flags |= quiesce_flush;
  const bool confirmed = acknowledged_ends_ && l.confirmed_by_transport;
  if (confirmed) flags |= transport_confirmed;
  if (l.carries_destinations && n > 0) {
    // Close the gap after a partial item array so only used bytes travel (thesis spec 17).
    const std::size_t full = destinations_offset(l.capacity), used = destinations_offset(n);
    if (used != full) std::memmove(payload + used, payload + full, n * sizeof(std::int32_t));
    bytes = used + n * sizeof(std::int32_t);
    flags |= has_destinations;
    if (l.carries_sources) {  // the sources follow the (moved) destinations
      const std::size_t from = sources_offset(l.capacity);
      if (from != bytes) std::memmove(payload + bytes, payload + from, n * sizeof(std::int32_t));
      bytes += n * sizeof(std::int32_t);
      flags |= has_sources;
    }
  }
  const wire_header header{n, static_cast<std::uint8_t>(l.phase < 0 ? 0 : l.phase), flags, step_tag(step_),
                           with_final_marker ? l.sent + 1 : 0};
  std::memcpy(payload, &header, sizeof header);
  l.buffer.set_size(bytes);
  close_buffer(l, n);
  if (l.phase < 0) {  // this PE's own items: delivered at the next poll, never through the transport
    local_messages_.push_back(message{rank_, channel_, std::move(l.buffer)});
    l.buffer = message_buffer();
    return;
  }
  charge_items();  // the items' work comes before the message leaves
  if (trace::recorder* t = net().tracer()) [[unlikely]] {
    constexpr trace::send_cause causes[] = {trace::send_cause::full, trace::send_cause::timer, trace::send_cause::final,
                                            trace::send_cause::bound};
    t->note_send(l.phase, causes[static_cast<int>(kind)]);
  }
  if (confirmed) {
    net().send_confirmed(l.pe, channel_, std::move(l.buffer), impl_->confirmations);
  } else {
    net().send(l.pe, channel_, std::move(l.buffer));
  }
  l.buffer = message_buffer();
  ++l.sent;
  l.carried_items |= n > 0;
  if (confirmed) {
    l.acknowledged = l.sent;  // the peer never acknowledges it
    ++stats_.confirmed_messages;
  } else if (acknowledged_ends_) {
    ++unacknowledged_;
  }
  ++stats_.messages_sent;
  if (l.inter_node) ++stats_.inter_node_messages;
  stats_.bytes_sent += bytes;
  if (n == 0) {
    ++stats_.marker_messages;
    return;
  }
  switch (kind) {
    case flush_kind::full: ++stats_.flushes_full; break;
    case flush_kind::timer: ++stats_.flushes_timer; break;
    case flush_kind::final: ++stats_.flushes_final; break;
    case flush_kind::bound: ++stats_.flushes_bound; break;
  }
}

void streamer_core::close_buffer(link& l, std::uint32_t n) {
  l.next = l.end = nullptr;
  l.next_dest = nullptr;
  l.next_source = nullptr;
  if (max_buffered_ != 0) {
    // The most buffered at once: the count only falls here. The item over the bound that made
    // relieve_bound send was never held with all the others.
    stats_.items_buffered_peak = std::max(stats_.items_buffered_peak, std::min(buffered_, max_buffered_));
    buffered_ -= n;
  }
}

bool streamer_core::send_direct(link& l, std::uint32_t n) {
  std::byte* payload = l.buffer.payload();
  const std::byte* items = payload + sizeof(wire_header);
  const auto* dests = reinterpret_cast<const std::int32_t*>(payload + destinations_offset(l.capacity));
  const std::int32_t* sources =
      l.carries_sources ? reinterpret_cast<const std::int32_t*>(payload + sources_offset(l.capacity)) : nullptr;
  // Sources travel when the callback wants them (with destinations, as on a grid's later phases);
  // else the message's own source stands for every item's.
  const auto message_bytes = [&](std::size_t m) {
    return wants_sources_ ? sources_offset(m) + m * sizeof(std::int32_t) : sizeof(wire_header) + m * item_bytes_;
  };
  if (message_bytes(n) > net().confirmable_bytes()) return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (dests[i] < 0) return false;
  }
  const std::uint8_t flags = transport_confirmed | (wants_sources_ ? has_destinations | has_sources : 0);
  charge_items();  // the items' work comes before the messages leave
  bool taken[direct_items] = {};
  for (std::uint32_t i = 0; i < n; ++i) {
    if (taken[i]) continue;
    const std::int32_t dest = dests[i];
    std::uint32_t m = 0;
    for (std::uint32_t j = i; j < n; ++j) m += dests[j] == dest ? 1 : 0;
    const std::size_t bytes = message_bytes(m);
    message_buffer b = net().allocate(bytes);
    std::byte* out = b.payload();
    auto* out_dests = wants_sources_ ? reinterpret_cast<std::int32_t*>(out + destinations_offset(m)) : nullptr;
    auto* out_sources = wants_sources_ ? reinterpret_cast<std::int32_t*>(out + sources_offset(m)) : nullptr;
    std::uint32_t k = 0;
    for (std::uint32_t j = i; j < n; ++j) {
      if (dests[j] != dest) continue;
      taken[j] = true;
      std::memcpy(out + sizeof(wire_header) + std::size_t{k} * item_bytes_, items + std::size_t{j} * item_bytes_,
                  item_bytes_);
      if (wants_sources_) {
        out_dests[k] = dest;
        out_sources[k] = sources != nullptr ? sources[j] : rank_;
      }
      ++k;
    }
    const wire_header header{m, direct_phase, flags, step_tag(step_), 0};
    std::memcpy(out, &header, sizeof header);
    b.set_size(bytes);
    if (trace::recorder* t = net().tracer()) [[unlikely]]
      t->note_send(l.phase, trace::send_cause::direct);
    net().send_confirmed(dest, channel_, std::move(b), impl_->confirmations);
    ++stats_.messages_sent;
    ++stats_.confirmed_messages;
    ++stats_.direct_messages;
    ++stats_.flushes_final;
    if (ctx_.machine().node_of(dest) != ctx_.machine().node_of(rank_)) ++stats_.inter_node_messages;
    stats_.bytes_sent += bytes;
  }
  // The link's buffer goes back unsent; the link counts as having carried items (the adaptive
  // choice sees the same traffic either way).
  --buffers_allocated_;
  buffer_bytes_allocated_ -= buffer_bytes(l);
  close_buffer(l, n);
  net().recycle(std::move(l.buffer));
  l.buffer = message_buffer();
  l.carried_items = true;
  return true;
}

bool streamer_core::relieve_bound() {
  // Send the fullest buffer: it frees the most room per message (thesis: keep messages large).
  link* fullest = &links_.front();
  for (auto& l : links_) {
    if (items_in(l) > items_in(*fullest)) fullest = &l;
  }
  send(*fullest, flush_kind::bound);
  return true;
}

void streamer_core::flush_links(std::size_t first, std::size_t last, flush_kind kind, bool with_final_marker) {
  // Start at a rotating position so that PEs flushing together do not all hit the same peer first.
  const std::size_t n = last - first;
  if (n == 0) return;
  const std::size_t start = (static_cast<std::size_t>(rank_) + flush_rotation_++) % n;
  for (std::size_t i = 0; i < n; ++i) send(links_[first + (start + i) % n], kind, with_final_marker);
}

// Checks everything about a received message that does not need its items (size, flags, step,
// phase and link) and returns its header; throws (throw_corrupt) when it is malformed.
wire_header streamer_core::checked_header(const message& m) const {
  wire_header h{};
  const std::size_t size = m.data.size();
  if (size < sizeof h) throw_corrupt(m.source, concat(size, " bytes, shorter than the 16-byte header"));
  std::memcpy(&h, m.data.payload(), sizeof h);
  if ((h.flags & ~known_flags) != 0)
    throw_corrupt(m.source, concat("unknown flags 0x", std::hex, static_cast<unsigned>(h.flags)));
  if (h.step != step_tag(step_) && h.step != step_tag(step_ + 1))
    throw_corrupt(m.source, concat("step ", h.step, " while this PE is in step ", step_tag(step_)));
  const bool control = is_control(m);
  const bool next_step = h.step != step_tag(step_);
  if (control != ((h.flags & peer_left) != 0)) throw_corrupt(m.source, "control flag and channel disagree");
  if ((h.flags & link_announcement) != 0) {
    // Only a peer that changed its links for the next step announces them now (tuning); those
    // announcements wait for this PE's own change (discover_in_links).
    if (!next_step || !tune_ || control) throw_corrupt(m.source, "a link announcement after construction");
    if (size != sizeof h || h.items != 0) throw_corrupt(m.source, "a malformed link announcement");
    return h;
  }
  if (control) {
    if (size != sizeof h || h.items != 0) throw_corrupt(m.source, "a malformed control message");
    return h;
  }
  const bool ack = (h.flags & acknowledgement) != 0;
  if (ack && (size != sizeof h || h.items != 0 || h.flags != acknowledgement))
    throw_corrupt(m.source, "a malformed acknowledgement");
  // A next-step message is checked against the links of that step when it begins (they may
  // change in between: tuning).
  if (next_step) return h;
  if (ack) {
    // It answers a link of this PE's: to that PE, in that phase, and counts no more than were sent.
    const int index = h.phase < impl_->plan->num_phases() ? link_index(m.source, h.phase) : -1;
    if (index <= 0)
      throw_corrupt(m.source, concat("an acknowledgement for phase ", static_cast<int>(h.phase),
                                     ", which is not a link to that PE"));
    if (!acknowledged_ends_) throw_corrupt(m.source, "an acknowledgement, which this streamer's steps never use");
    const std::uint64_t sent = links_[static_cast<std::size_t>(index)].sent;
    if (h.link_count > sent)
      throw_corrupt(m.source, concat("an acknowledgement of ", h.link_count, " messages where ", sent, " were sent"));
    return h;
  }
  if (h.phase == direct_phase) {
    // Around the grid, from any PE (send_direct): only where nothing counts a link's messages.
    if ((h.flags & transport_confirmed) == 0 || (h.flags & (final_marker | quiesce_flush)) != 0)
      throw_corrupt(m.source, "a message around the grid that the transport does not confirm, or that ends a link");
    if (!acknowledged_ends_)
      throw_corrupt(m.source, "a message around the grid in a step that ends by final markers");
    if (!transport_confirms_)
      throw_corrupt(m.source, "a message around the grid, which this job's transports cannot confirm");
    return h;
  }
  if (h.phase >= impl_->plan->num_phases() || impl_->in_link(m.source, h.phase) < 0)
    throw_corrupt(m.source, concat("phase ", static_cast<int>(h.phase), ", which is not a link from that PE"));
  // Unacknowledged, a confirmed message must be one this PE only delivers (it could not hold
  // back its sender's end of the step while it forwarded the items).
  if ((h.flags & transport_confirmed) != 0) {
    if (!acknowledged_ends_)
      throw_corrupt(m.source, "a message confirmed by the transport in a step that ends by final markers");
    if (!impl_->plan->ends_route(h.phase) || (h.flags & has_destinations) != 0)
      throw_corrupt(m.source, concat("a message confirmed by the transport on phase ", static_cast<int>(h.phase),
                                     ", whose items this PE forwards"));
  }
  return h;
}

void streamer_core::check_items(const message& m, const wire_header& h) const {
  const std::size_t n = h.items;
  const bool destinations = (h.flags & has_destinations) != 0;
  const bool sources = (h.flags & has_sources) != 0;
  // What the sender's link carries (build_routes): every PE built the same streamer.
  // A message around the grid carries destinations only as sources need them (send_direct).
  const bool direct = h.phase == direct_phase;
  const bool phase_sources = wants_sources_ && h.phase > 0;
  const bool phase_destinations = direct ? phase_sources : !impl_->plan->ends_route(h.phase) || phase_sources;
  if (n > 0 && destinations != phase_destinations)
    throw_corrupt(m.source, destinations ? concat("destinations on phase ", static_cast<int>(h.phase),
                                                  ", which ends every route")
                                         : concat("no destinations on phase ", static_cast<int>(h.phase),
                                                  ", which needs them"));
  if (sources != (n > 0 && phase_sources))
    throw_corrupt(m.source, sources ? concat("sources on phase ", static_cast<int>(h.phase), ", where none travel")
                                    : concat("no sources on phase ", static_cast<int>(h.phase), ", which needs them"));
  const std::size_t expected = sources        ? sources_offset(n) + n * sizeof(std::int32_t)
                               : destinations ? destinations_offset(n) + n * sizeof(std::int32_t)
                                              : sizeof(wire_header) + n * item_bytes_;
  if (m.data.size() != expected)
    throw_corrupt(m.source, concat(m.data.size(), " bytes for ", n, " items: expected ", expected));
  if (sources) {
    const auto* from = reinterpret_cast<const std::int32_t*>(m.data.payload() + sources_offset(n));
    for (std::size_t i = 0; i < n; ++i) {
      if (from[i] < 0 || from[i] >= size_)
        throw_corrupt(m.source, concat("source ", from[i], " of item ", i, " is outside the job's ", size_, " PEs"));
    }
  }
  if (!destinations) return;
  // One pass over the destinations (in cache, a compare each) keeps a corrupt message from being
  // half processed: it is refused before any item moves or any count changes.
  // A broadcast (d < 0) only reaches a streamer whose front end broadcasts.
  const auto* dests = reinterpret_cast<const std::int32_t*>(m.data.payload() + destinations_offset(n));
  const std::int32_t lowest = broadcasts_ ? -size_ : 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t d = dests[i];
    if (direct && d != rank_)
      throw_corrupt(m.source, concat("destination ", d, " of item ", i, " in a message sent straight to this PE"));
    if (d >= size_ || d < lowest)
      throw_corrupt(m.source, d < 0 && d >= -size_
                                  ? concat("destination ", d, " of item ", i,
                                           " is a broadcast, which this streamer never sends")
                                  : concat("destination ", d, " of item ", i, " is outside the job's ", size_, " PEs"));
  }
}

bool streamer_core::receive(bool pump) {
  if (batch_.empty()) {
    batch_.reset();
    if (!deferred_.empty()) {  // messages of the next step: take them once this PE is there
      wire_header first{};
      const message& m = deferred_.front();
      if (m.data.size() >= sizeof first) std::memcpy(&first, m.data.payload(), sizeof first);
      if (m.data.size() < sizeof first || first.step == step_tag(step_)) batch_.messages.swap(deferred_);
    }
    if (pump) {
      mail().take(channel_, batch_.messages);
    } else {
      mail().take_queued(channel_, batch_.messages);
    }
    if (batch_.empty()) return false;
  }
  bool processed = false;
  callback_scope callbacks(*this);
  while (!batch_.empty()) {
    message& m = batch_.messages[batch_.next];
    wire_header h;
    if (!batch_.started) {
      try {
        h = checked_header(m);
        if (h.step == step_tag(step_) && !is_control(m) && (h.flags & acknowledgement) == 0) check_items(m, h);
      } catch (...) {
        net().recycle(std::move(m.data));  // a corrupt message is dropped whole
        ++batch_.next;
        throw;
      }
      if (h.step != step_tag(step_)) {
        deferred_.push_back(std::move(m));
        ++batch_.next;
        continue;
      }
      if (is_control(m)) {  // a peer's streamer is gone
        left_peer_ = m.source;
        net().recycle(std::move(m.data));
        ++batch_.next;
        continue;
      }
      if (h.flags & acknowledgement) {
        take_acknowledgement(m.source, h);
        net().recycle(std::move(m.data));
        ++batch_.next;
        continue;
      }
      count_arrival(m, h);
      batch_.started = true;
      batch_.cursor = 0;
    } else {
      std::memcpy(&h, m.data.payload(), sizeof h);
    }
    process_items(m.data.payload(), h, m.source, batch_.cursor);  // a callback's exception leaves the cursor right
    net().recycle(std::move(m.data));
    ++batch_.next;
    batch_.started = false;
    processed = true;
  }
  return processed;
}

bool streamer_core::deliver_local() {
  if (local_.empty()) {
    // A buffer of own items larger than the peers' goes at every poll, however full
    // (own_capacity); a callback's inserts to this PE then fill a new one.
    if (own_items_at_poll_ && local_messages_.empty() && items_in(links_[self_link]) > 0)
      send(links_[self_link], flush_kind::full);
    if (local_messages_.empty()) return false;
    local_.reset();
    local_.messages.swap(local_messages_);  // callbacks may insert to this PE again: next round
  }
  callback_scope callbacks(*this);
  while (!local_.empty()) {
    message& m = local_.messages[local_.next];
    wire_header h;
    std::memcpy(&h, m.data.payload(), sizeof h);
    process_items(m.data.payload(), h, rank_, local_.cursor);
    net().recycle(std::move(m.data));
    ++local_.next;
    local_.cursor = 0;
  }
  return true;
}

bool streamer_core::poll_once(bool pump) {
  bool progressed = send_handed_over();
  progressed |= receive(pump);
  progressed |= deliver_local();
  charge_items();
  maybe_timer_flush();
  return progressed;
}

void streamer_core::charge_items_now() {
  const std::uint64_t hops = stats_.items_inserted + stats_.items_forwarded + stats_.items_delivered;
  charge_item_hops(hops - items_charged_);
  items_charged_ = hops;
}

bool streamer_core::progress_impl() {
  if (in_callback_) return false;  // nested call from a deliver callback: the outer loop polls
  const bool progressed = poll_once(network_poll_due(ctx_, pacing_, stats_.items_inserted));
  // After the callbacks: items they inserted are not the caller's, and the next call polls.
  pacing_.inserted_at_progress = stats_.items_inserted;
  return progressed;
}

bool streamer_core::network_poll_due(context& ctx, poll_pacing& pacing, std::uint64_t inserted) {
  const bool sends_back_up = context_access::net(ctx).pending_sends() > max_pending_sends / 2;
  const bool paced = inserted != pacing.inserted_at_progress &&
                     inserted - pacing.inserted_at_network_poll < progress_poll_items;
  if (!sends_back_up && (paced || !context_access::mail(ctx).pump_due())) return false;
  pacing.inserted_at_network_poll = inserted;
  return true;
}

void streamer_core::after_send() {
  if (in_callback_) return;
  // A poll costs a failed probe of the network and a scan of the pending sends: per message of
  // one item that was half of --scheme none's time. So a PE polls once at least poll_items items
  // left in the sends since its last poll (after every send of a buffer that large), or sooner
  // when its sends back up.
  items_since_poll_ += capacity_;
  if ((items_since_poll_ < poll_items || !mail().pump_due()) && net().pending_sends() <= max_pending_sends) return;
  items_since_poll_ = 0;
  pacing_.inserted_at_network_poll = stats_.items_inserted;
  receive();
  deliver_local();
  if (net().pending_sends() <= max_pending_sends) return;
  context_access::wait_until(
      ctx_,
      [&] {
        const bool progressed = poll_once();
        if (net().pending_sends() <= max_pending_sends / 2) return step_result::done;
        return progressed ? step_result::progressed : step_result::idle;
      },
      "streamer insert (waiting for sends to drain)");
}

void streamer_core::maybe_timer_flush() {
  if (flush_period_.count() == 0) return;
  const auto now = steady_clock::now();
  if (now - last_flush_check_ < flush_period_) return;
  const std::uint64_t activity_now = activity();
  if (activity_now == activity_at_check_) flush_links(0, links_.size(), flush_kind::timer, false);
  last_flush_check_ = now;
  activity_at_check_ = activity_now;
}

void streamer_core::retune() {
  const auto now = steady_clock::now();
  // The step's time is the longest PE's: the step ends for all when it ends for the last. (The
  // mean over PEs ran 2-3x below the steps' wall time on 8 PEs sharing 2 cores, where a PE that
  // was scheduled late has little left to wait for, and it chose buffers that ran slower.)
  std::uint64_t longest =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - step_started_).count());
  impl_->group->start_allreduce(&longest, 1, scalar_type::u64, reduce_op::max);
  context_access::finish_collective(ctx_, *impl_->group, "streamer tuning (the step's time)");
  std::uint64_t sums[2] = {stats_.items_inserted - items_at_step_start_, stats_.messages_sent - messages_at_step_start_};
  impl_->group->start_allreduce(sums, 2, scalar_type::u64, reduce_op::sum);
  context_access::finish_collective(ctx_, *impl_->group, "streamer tuning (the step's outcome)");
  const step_outcome outcome{step_ - 1, longest, sums[0], sums[1], size_};
  const step_configuration current = configuration();
  stats_.tuning.push_back(tuning_step{outcome.step, current.grid.ndims() == 1 ? "direct" : current.grid.str(),
                                      current.route, current.buffer_items,
                                      static_cast<double>(longest) * 1e-9, sums[0], exploring_});
  const step_configuration next = impl_->tuner->next(outcome, current);
  exploring_ = impl_->tuner->explored();
  if (trace::recorder* t = net().tracer()) {
    t->instant(t->label(concat("tuning: next grid ", next.grid.ndims() == 1 ? "direct" : next.grid.str(), ", routing ",
                               to_string(next.route), exploring_ ? " (exploring)" : " (settled or best)"),
                        "after step", "buffer items"),
               trace::recorder::now(), outcome.step, next.buffer_items);
  }
  reconfigure(next);
  step_started_ = steady_clock::now();
  items_at_step_start_ = stats_.items_inserted;
  messages_at_step_start_ = stats_.messages_sent;
}

void streamer_core::reconfigure(const step_configuration& next) {
  // Between steps every buffer is empty and every message of the ended step has been handled.
  TRANSIT_ASSERT(buffered_items() == 0 && local_messages_.empty() && batch_.empty() && local_.empty(),
                 "reconfiguring a streamer that still holds items");
  TRANSIT_ASSERT(next.buffer_items >= 1 && next.buffer_items <= UINT32_MAX, "tuner chose a bad buffer size");
  capacity_ = static_cast<std::uint32_t>(next.buffer_items);
  if (next.grid == impl_->plan->grid() && next.route == impl_->plan->kind()) return;
  impl_->plan = make_router(next.route, next.grid, ctx_.machine());
  build_routes();
  discover_in_links();
  impl_->broadcast_cache.clear();
}

std::string streamer_core::describe() const {
  std::ostringstream out;
  out << "streamer<" << type_name_ << "> step " << step_ << ", "
      << (quiescing_ ? "quiescing" : state_ == step_state::open ? "open" : state_ == step_state::done ? "done" : "ending")
      << ", next final phase "
      << next_final_phase_ << " of " << impl_->plan->num_phases() << ", " << buffered_items() << " items buffered, "
      << local_messages_.size() << " local messages pending";
  if (acknowledged_ends_) {
    out << ", steps ending by acknowledgement: " << unacknowledged_ << " messages sent and not yet acknowledged, "
        << impl_->confirmations->pending.load() << " not yet confirmed by the transport";
    if (parent_in_link_ >= 0) out << ", owes PE " << in_links_[static_cast<std::size_t>(parent_in_link_)].pe
                                 << " the acknowledgement that releases it";
  }
  for (const auto& l : links_) {
    if (items_in(l) > 0)
      out << "\n    buffer to PE " << l.pe << " (phase " << l.phase << "): " << items_in(l) << " items";
  }
  for (const auto& il : in_links_) {
    if (acknowledged_ends_) break;  // no final markers to wait for
    if (!il.final_received || il.received != il.announced) {
      out << "\n    from PE " << il.pe << " (phase " << il.phase << "): " << il.received << " messages received";
      if (il.final_received) {
        out << ", " << il.announced << " announced";
      } else {
        out << ", final count not yet received";
      }
    }
  }
  return out.str();
}

}  // namespace transit::detail
