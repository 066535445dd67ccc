#include "transit/streamer/detail/core.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "transit/core/error.hpp"

namespace transit::detail {

namespace {

// Above this many unfinished sends (MPI backlog), a top-level insert stops to receive and
// forward until half have gone: memory stays bounded, and the PE never waits without receiving.
constexpr std::size_t max_pending_sends = 64;

virtual_grid grid_for(const context& ctx, const streamer_options& options) {
  if (!options.grid) return virtual_grid::node_pe(ctx.machine());
  if (options.grid->num_pes() != ctx.size())
    throw_invalid("streamer_options.grid", concat(options.grid->str(), " for ", options.grid->num_pes(), " PEs"),
                  concat("a grid for the job's ", ctx.size(), " PEs"));
  return *options.grid;
}

std::uint32_t checked_capacity(const streamer_options& options, std::size_t item_bytes) {
  constexpr std::size_t max_message_bytes = std::size_t{1} << 30;
  const std::size_t limit = max_message_bytes / (item_bytes + sizeof(std::int32_t));
  if (options.buffer_items == 0) throw_invalid("streamer_options.buffer_items", 0, "at least 1");
  if (options.buffer_items > limit)
    throw_invalid("streamer_options.buffer_items", options.buffer_items,
                  concat("at most ", limit, " (messages are limited to 1 GiB)"));
  return static_cast<std::uint32_t>(options.buffer_items);
}

// Clears a flag on every exit, exceptions included.
class flag_guard {
 public:
  explicit flag_guard(bool& flag) : flag_(flag) { flag_ = true; }
  ~flag_guard() { flag_ = false; }
  flag_guard(const flag_guard&) = delete;
  flag_guard& operator=(const flag_guard&) = delete;

 private:
  bool& flag_;
};

}  // namespace

streamer_core::streamer_core(context& ctx, const streamer_options& options, std::size_t item_bytes,
                             const char* type_name)
    : ctx_(ctx),
      rank_(ctx.rank()),
      size_(ctx.size()),
      item_bytes_(item_bytes),
      capacity_(checked_capacity(options, item_bytes)),
      max_buffered_(options.max_buffered_items),
      router_(make_router(options.route, grid_for(ctx, options), ctx.machine())),
      type_name_(type_name),
      channel_(context_access::mail(ctx).open_channel()),
      group_(context_access::net(ctx).make_group()),
      flush_period_(options.flush_period),
      last_flush_check_(std::chrono::steady_clock::now()) {
  const int phases = router_->num_phases();
  link own;  // items for this PE: aggregated like the others, delivered when full or flushed
  own.pe = rank_;
  links_.push_back(std::move(own));
  for (const hop& h : router_->out_links(rank_)) {
    out_index_.emplace(std::int64_t{h.pe} * phases + h.phase, static_cast<int>(links_.size()));
    link l;
    l.pe = h.pe;
    l.phase = h.phase;
    l.carries_destinations = !router_->ends_route(h.phase);
    links_.push_back(std::move(l));
  }
  route_.resize(size_);
  for (int dest = 0; dest < size_; ++dest) {
    if (dest == rank_) {
      route_[dest] = self_link;
      continue;
    }
    const hop h = router_->next_hop(rank_, dest, -1);
    route_[dest] = link_index(h.pe, h.phase);
    TRANSIT_ASSERT(route_[dest] > 0, "router returned a hop that is not among its out_links");
  }
  discover_in_links();
  diagnostic_id_ = context_access::add_diagnostic(ctx_, [this] { return describe(); });
}

// Every PE knows the links it sends on (O(P) from the route table). Who sends to it follows from
// one allreduce of per-PE link counts and one announcement per link: O(P) per PE, where asking
// the router (router::in_links) costs O(P^2) on large node grids (7 s per PE at 16384 PEs).
void streamer_core::discover_in_links() {
  std::vector<std::uint64_t> counts(size_, 0);
  for (std::size_t i = 1; i < links_.size(); ++i) ++counts[links_[i].pe];
  group_->start_allreduce(counts.data(), size_, scalar_type::u64, reduce_op::sum);
  context_access::finish_collective(ctx_, *group_, "streamer construction (link counts)");
  for (std::size_t i = 1; i < links_.size(); ++i) {
    message_buffer b = net().allocate(sizeof(wire_header));
    const wire_header h{0, static_cast<std::uint16_t>(links_[i].phase), link_announcement, 0, 0};
    std::memcpy(b.payload(), &h, sizeof h);
    b.set_size(sizeof h);
    net().send(links_[i].pe, channel_, std::move(b));
  }
  const std::uint64_t expected = counts[rank_];
  context_access::wait_until(
      ctx_, [&] {
        batch_.clear();
        if (!mail().take(channel_, batch_))
          return in_links_.size() == expected ? step_result::done : step_result::idle;
        for (auto& m : batch_) {
          wire_header h;
          std::memcpy(&h, m.data.payload(), sizeof h);
          if (h.flags & link_announcement) {
            in_links_.push_back(in_link{m.source, h.phase});
            net().recycle(std::move(m.data));
          } else {
            deferred_.push_back(std::move(m));  // data from a peer that finished constructing first
          }
        }
        return in_links_.size() == expected ? step_result::done : step_result::progressed;
      },
      "streamer construction (link announcements)");
  std::sort(in_links_.begin(), in_links_.end(),
            [](const in_link& a, const in_link& b) { return std::tie(a.phase, a.pe) < std::tie(b.phase, b.pe); });
  const int phases = router_->num_phases();
  for (std::size_t i = 0; i < in_links_.size(); ++i)
    in_index_.emplace(std::int64_t{in_links_[i].pe} * phases + in_links_[i].phase, static_cast<int>(i));
}

streamer_core::~streamer_core() {
  context_access::remove_diagnostic(ctx_, diagnostic_id_);
  // Nothing is dropped silently: say what a streamer destroyed mid-step leaves behind.
  const std::uint64_t left = buffered_items();
  const std::size_t undelivered = local_messages_.size() + deferred_.size() + mail().close_channel(channel_);
  if (left > 0 || undelivered > 0) {
    std::fprintf(stderr,
                 "transit: PE %d: streamer<%s> destroyed with %llu items buffered and %zu messages "
                 "undelivered (they are lost; call finish() or quiesce() before destroying a streamer)\n",
                 rank_, type_name_, static_cast<unsigned long long>(left), undelivered);
  }
}

int streamer_core::link_index(int pe, int phase) const {
  const auto it = out_index_.find(std::int64_t{pe} * router_->num_phases() + phase);
  return it == out_index_.end() ? -1 : it->second;
}

void streamer_core::throw_bad_destination(int dest) const {
  throw std::out_of_range(concat("streamer::insert: destination PE ", dest, " is outside [0, ", size_,
                                 "): expected a PE of this job"));
}

void streamer_core::throw_closed_step() const {
  throw std::logic_error(
      "streamer::insert after done() and before wait() returned: this PE's step is closed; "
      "insert after wait() returns (or use quiesce() when deliveries insert)");
}

std::size_t streamer_core::buffer_bytes(const link& l) const noexcept {
  return l.carries_destinations ? destinations_offset(capacity_) + capacity_ * sizeof(std::int32_t)
                                : sizeof(wire_header) + capacity_ * item_bytes_;
}

std::uint64_t streamer_core::buffered_items() const noexcept {
  std::uint64_t total = 0;
  for (const auto& l : links_) total += items_in(l);
  return total;
}

void streamer_core::open_buffer(link& l) {
  const std::size_t bytes = buffer_bytes(l);
  l.buffer = net().allocate(bytes);
  std::byte* payload = l.buffer.payload();
  l.next = payload + sizeof(wire_header);
  l.end = l.next + capacity_ * item_bytes_;
  l.next_dest =
      l.carries_destinations ? reinterpret_cast<std::int32_t*>(payload + destinations_offset(capacity_)) : nullptr;
  ++buffers_allocated_;
  buffer_bytes_allocated_ += bytes;
  stats_.buffers_peak = std::max(stats_.buffers_peak, buffers_allocated_);
  stats_.buffer_bytes_peak = std::max(stats_.buffer_bytes_peak, buffer_bytes_allocated_);
}

void streamer_core::buffer_full(link& l) {
  if (max_buffered_ != 0) ++buffered_;  // the item that filled it, counted before send() takes all
  send(l, flush_kind::full);
  after_send();
}

void streamer_core::send(link& l, flush_kind kind, bool final_marker) {
  const std::uint32_t n = items_in(l);
  if (!l.buffer) {
    if (!final_marker) return;
    l.buffer = net().allocate(sizeof(wire_header));  // a bare final marker
  } else {
    --buffers_allocated_;
    buffer_bytes_allocated_ -= buffer_bytes(l);
  }
  std::byte* payload = l.buffer.payload();
  std::size_t bytes = sizeof(wire_header) + n * item_bytes_;
  std::uint16_t flags = 0;
  if (l.carries_destinations && n > 0) {
    // Close the gap after a partial item array so only used bytes travel (thesis spec 17).
    const std::size_t full = destinations_offset(capacity_), used = destinations_offset(n);
    if (used != full) std::memmove(payload + used, payload + full, n * sizeof(std::int32_t));
    bytes = used + n * sizeof(std::int32_t);
    flags = has_destinations;
  }
  const wire_header header{n, static_cast<std::uint16_t>(l.phase < 0 ? 0 : l.phase), flags,
                           final_marker ? l.sent + 1 : 0, step_};
  std::memcpy(payload, &header, sizeof header);
  l.buffer.set_size(bytes);
  l.next = l.end = nullptr;
  l.next_dest = nullptr;
  if (max_buffered_ != 0) buffered_ -= n;
  if (l.phase < 0) {  // this PE's own items: delivered at the next poll, never through the transport
    local_messages_.push_back(std::move(l.buffer));
    l.buffer = message_buffer();
    return;
  }
  net().send(l.pe, channel_, std::move(l.buffer));
  l.buffer = message_buffer();
  ++l.sent;
  ++stats_.messages_sent;
  stats_.bytes_sent += bytes;
  if (n == 0) return;
  switch (kind) {
    case flush_kind::full: ++stats_.flushes_full; break;
    case flush_kind::timer: ++stats_.flushes_timer; break;
    case flush_kind::final: ++stats_.flushes_final; break;
    case flush_kind::bound: ++stats_.flushes_bound; break;
  }
}

void streamer_core::relieve_bound() {
  // Send the fullest buffer: it frees the most room per message (thesis: keep messages large).
  link* fullest = &links_.front();
  for (auto& l : links_) {
    if (items_in(l) > items_in(*fullest)) fullest = &l;
  }
  send(*fullest, flush_kind::bound);
  after_send();
}

void streamer_core::flush_links(std::size_t first, std::size_t last, flush_kind kind, bool final_marker) {
  // Start at a rotating position so that PEs flushing together do not all hit the same peer first.
  const std::size_t n = last - first;
  if (n == 0) return;
  const std::size_t start = (static_cast<std::size_t>(rank_) + flush_rotation_++) % n;
  for (std::size_t i = 0; i < n; ++i) send(links_[first + (start + i) % n], kind, final_marker);
}

bool streamer_core::receive() {
  batch_.clear();
  if (!deferred_.empty()) {
    wire_header first;
    std::memcpy(&first, deferred_.front().data.payload(), sizeof first);
    if (first.step == step_) batch_.swap(deferred_);  // this PE has reached their step now
  }
  mail().take(channel_, batch_);
  if (batch_.empty()) return false;
  const int phases = router_->num_phases();
  bool processed = false;
  flag_guard guard(in_callback_);
  for (auto& m : batch_) {
    wire_header h;
    std::memcpy(&h, m.data.payload(), sizeof h);
    if (h.step != step_) {
      TRANSIT_ASSERT(h.step == step_ + 1, "message from a step other than this one or the next");
      deferred_.push_back(std::move(m));
      continue;
    }
    const auto it = in_index_.find(std::int64_t{m.source} * phases + h.phase);
    TRANSIT_ASSERT(it != in_index_.end(), "message on a link the router does not have");
    in_link& il = in_links_[it->second];
    ++il.received;
    if (h.final_count != 0) {
      il.announced = h.final_count;
      il.final_step = h.step;
    }
    ++stats_.messages_received;
    process_items(m.data.payload(), h);
    net().recycle(std::move(m.data));
    processed = true;
  }
  return processed;
}

bool streamer_core::deliver_local() {
  if (local_messages_.empty()) return false;
  // Callbacks may insert to this PE again: those items wait for the next round.
  local_batch_.swap(local_messages_);
  {
    flag_guard guard(in_callback_);
    for (auto& b : local_batch_) {
      wire_header h;
      std::memcpy(&h, b.payload(), sizeof h);
      process_items(b.payload(), h);
      net().recycle(std::move(b));
    }
  }
  local_batch_.clear();
  return true;
}

bool streamer_core::poll_once() {
  bool progressed = receive();
  progressed |= deliver_local();
  maybe_timer_flush();
  return progressed;
}

bool streamer_core::progress_impl() {
  if (in_callback_) return false;  // nested call from a deliver callback: the outer loop polls
  return poll_once();
}

void streamer_core::after_send() {
  if (in_callback_) return;
  receive();
  deliver_local();
  if (net().pending_sends() <= max_pending_sends) return;
  context_access::wait_until(
      ctx_, [&] {
        const bool progressed = poll_once();
        if (net().pending_sends() <= max_pending_sends / 2) return step_result::done;
        return progressed ? step_result::progressed : step_result::idle;
      },
      "streamer insert (waiting for sends to drain)");
}

void streamer_core::maybe_timer_flush() {
  if (flush_period_.count() == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_flush_check_ < flush_period_) return;
  const std::uint64_t activity_now = activity();
  if (activity_now == activity_at_check_) flush_links(0, links_.size(), flush_kind::timer, false);
  last_flush_check_ = now;
  activity_at_check_ = activity_now;
}

bool streamer_core::in_links_complete(int below_phase) const {
  for (const auto& il : in_links_) {
    if (il.phase >= below_phase) break;
    if (il.final_step != step_ || il.received != il.announced) return false;
  }
  return true;
}

bool streamer_core::advance_staged() {
  bool progressed = false;
  const int phases = router_->num_phases();
  while (next_final_phase_ < phases && in_links_complete(next_final_phase_)) {
    // links_[1..] are sorted by phase: flush the run of this phase with final markers.
    std::size_t first = 1;
    while (first < links_.size() && links_[first].phase < next_final_phase_) ++first;
    std::size_t last = first;
    while (last < links_.size() && links_[last].phase == next_final_phase_) ++last;
    flush_links(first, last, flush_kind::final, true);
    ++next_final_phase_;
    progressed = true;
  }
  return progressed;
}

void streamer_core::done_impl() {
  if (in_callback_) throw std::logic_error("streamer::done called from a deliver callback");
  if (state_ != step_state::open) throw std::logic_error("streamer::done called twice in one step");
  state_ = step_state::done;
  send(links_[self_link], flush_kind::final);
  next_final_phase_ = 0;
  advance_staged();
}

void streamer_core::wait_impl() {
  if (in_callback_) throw std::logic_error("streamer::wait called from a deliver callback");
  if (state_ == step_state::open) done_impl();
  const int phases = router_->num_phases();
  context_access::wait_until(
      ctx_, [&] {
        bool progressed = poll_once();
        progressed |= advance_staged();
        if (next_final_phase_ == phases && in_links_complete(phases) && locally_idle()) return step_result::done;
        return progressed ? step_result::progressed : step_result::idle;
      },
      "streamer wait (staged completion)");
  TRANSIT_ASSERT(buffered_items() == 0, "items left in buffers after staged completion");
  // Every item for this PE has arrived; the barrier makes that true everywhere before anyone
  // starts the next step. Keep polling meanwhile: peers may need our receives and our send
  // backlog to finish their step. Messages of the next step are set aside until the barrier.
  group_->start_barrier();
  context_access::wait_until(
      ctx_, [&] {
        const bool progressed = poll_once();
        if (group_->test()) return step_result::done;
        return progressed ? step_result::progressed : step_result::idle;
      },
      "streamer wait (final barrier)");
  ++step_;
  state_ = step_state::open;
}

void streamer_core::quiesce_impl() {
  if (in_callback_) throw std::logic_error("streamer::quiesce called from a deliver callback");
  if (state_ != step_state::open) throw std::logic_error("streamer::quiesce called after done() in the same step");
  std::uint64_t counts[2] = {0, 0};
  std::uint64_t previous[2] = {~std::uint64_t{0}, 0};
  bool wave_in_flight = false;
  context_access::wait_until(
      ctx_, [&] {
        const bool progressed = poll_once();
        if (wave_in_flight) {
          if (!group_->test()) return progressed ? step_result::progressed : step_result::idle;
          wave_in_flight = false;
          if (counts[0] == counts[1] && counts[0] == previous[0] && counts[1] == previous[1])
            return step_result::done;
          previous[0] = counts[0];
          previous[1] = counts[1];
          return step_result::progressed;
        }
        if (progressed) return step_result::progressed;
        // Idle here: send everything buffered, deliver what is local, then join a wave.
        flush_links(0, links_.size(), flush_kind::final, false);
        if (!locally_idle()) return step_result::progressed;
        counts[0] = stats_.messages_sent;
        counts[1] = stats_.messages_received;
        group_->start_allreduce(counts, 2, scalar_type::u64, reduce_op::sum);
        wave_in_flight = true;
        return step_result::progressed;
      },
      "streamer quiesce");
  ++step_;
}

std::string streamer_core::describe() const {
  std::ostringstream out;
  out << "streamer<" << type_name_ << "> step " << step_ << ", " << (state_ == step_state::open ? "open" : "done")
      << ", next final phase " << next_final_phase_ << " of " << router_->num_phases() << ", " << buffered_items()
      << " items buffered, " << local_messages_.size() << " local messages pending";
  for (const auto& l : links_) {
    if (items_in(l) > 0)
      out << "\n    buffer to PE " << l.pe << " (phase " << l.phase << "): " << items_in(l) << " items";
  }
  for (const auto& il : in_links_) {
    if (il.final_step != step_ || il.received != il.announced) {
      out << "\n    from PE " << il.pe << " (phase " << il.phase << "): " << il.received << " messages received";
      if (il.final_step == step_) {
        out << ", " << il.announced << " announced";
      } else {
        out << ", final count not yet received";
      }
    }
  }
  return out.str();
}

}  // namespace transit::detail
