// streamer_core's termination (the protocol at the top of include/transit/detail/streamer/core.hpp):
// link announcements when the links are made, the count of each in-link's messages against its
// final marker, staged completion phase by phase, the end of a step (wait, quiesce and their
// checks), and the control message that tells peers a streamer is gone. The per-item path and
// the message checks stay in core.cpp.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <vector>

#include "model/tuner.hpp"
#include "streamer/wire.hpp"
#include "trace/recorder.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/streamer/core.hpp"
#include "transit/grid/router.hpp"

namespace transit::detail {

namespace {
// A message that is a header alone (a link announcement, a departure, an acknowledgement).
void send_header(transport& net, int pe, std::uint32_t channel, const wire_header& h, trace::send_cause cause) {
  message_buffer b = net.allocate(sizeof(wire_header));
  std::memcpy(b.payload(), &h, sizeof h);
  b.set_size(sizeof h);
  if (trace::recorder* t = net.tracer()) t->note_send(h.phase, cause);
  net.send(pe, channel, std::move(b));
}
}  // namespace

// Every PE knows the links it sends on (O(P) from the route table). Who sends to it follows from
// one allreduce of per-PE link counts and one announcement per link: O(P) per PE, where asking
// the router (router::in_links) costs O(P^2) on large node grids (7 s per PE at 16384 PEs).
// Announcements carry the step they are for: 0 at construction, the new step after a
// reconfiguration (tuning). In the second case some may already have been set aside, as messages
// of the next step that arrived while this PE ended the last one.
void streamer_core::discover_in_links() {
  std::vector<std::uint64_t> counts(size_, 0);
  for (std::size_t i = 1; i < links_.size(); ++i) ++counts[links_[i].pe];
  impl_->group->start_allreduce(counts.data(), size_, scalar_type::u64, reduce_op::sum);
  context_access::finish_collective(ctx_, *impl_->group, "streamer links (link counts)");
  for (std::size_t i = 1; i < links_.size(); ++i) {
    const wire_header h{0, static_cast<std::uint8_t>(links_[i].phase), link_announcement, step_tag(step_), 0};
    send_header(net(), links_[i].pe, channel_, h, trace::send_cause::links);
  }
  const std::uint64_t expected = counts[rank_];
  const int phases = impl_->plan->num_phases();
  in_links_.clear();
  impl_->in_index.clear();
  impl_->forget_in_link();
  acknowledgements_due_.clear();
  std::vector<message> arrived;
  arrived.swap(deferred_);  // announcements set aside before this PE got here come first
  const auto sort_out = [&] {
    for (auto& m : arrived) {
      wire_header h{};
      if (m.data.size() >= sizeof h) std::memcpy(&h, m.data.payload(), sizeof h);
      if (!is_control(m) && (h.flags & link_announcement) && h.step == step_tag(step_)) {
        if (m.data.size() != sizeof h || h.phase >= phases) throw_corrupt(m.source, "a malformed link announcement");
        in_links_.push_back(in_link{m.source, h.phase});
        net().recycle(std::move(m.data));
      } else {
        deferred_.push_back(std::move(m));  // data from a peer that got to this step first
      }
    }
    arrived.clear();
  };
  sort_out();
  context_access::wait_until(
      ctx_,
      [&] {
        if (!mail().take(channel_, arrived))
          return in_links_.size() == expected ? step_result::done : step_result::idle;
        sort_out();
        return in_links_.size() == expected ? step_result::done : step_result::progressed;
      },
      "streamer links (link announcements)");
  std::sort(in_links_.begin(), in_links_.end(),
            [](const in_link& a, const in_link& b) { return std::tie(a.phase, a.pe) < std::tie(b.phase, b.pe); });
  for (std::size_t i = 0; i < in_links_.size(); ++i)
    impl_->in_index.emplace(std::int64_t{in_links_[i].pe} * phases + in_links_[i].phase, static_cast<int>(i));
  impl_->forget_in_link();  // asked before the links were all known
}

// One data message of this step from an in-link, checked: counted against the link's final count.
void streamer_core::count_arrival(const message& m, const wire_header& h) {
  if (h.phase == direct_phase) {  // on no link; confirmed, never a marker (checked_header)
    ++stats_.messages_received;
    return;
  }
  const int index = impl_->in_link(m.source, h.phase);  // checked_header found it
  in_link& il = in_links_[static_cast<std::size_t>(index)];
  ++il.received;
  if ((h.flags & transport_confirmed) != 0) {
    il.acknowledged = il.received;  // the transport told its sender (checked_header: only delivered here)
  } else if (acknowledged_ends_) {
    if (il.received == il.acknowledged + 1) acknowledgements_due_.push_back(index);
    // Idle in the closing barrier until now: this message's sender waits for this PE's work.
    if (state_ == step_state::ending && parent_in_link_ < 0) parent_in_link_ = index;
  }
  if (h.flags & final_marker) {
    il.announced = h.link_count;
    il.final_received = true;
    waited_peer_ = m.source;
  }
  if (h.flags & quiesce_flush) quiesced_peer_ = m.source;
  ++stats_.messages_received;
}

void streamer_core::announce_departure() {
  // Tell the PEs this one sends to that it is gone: one still waiting for it in a step of its
  // own then fails with a message instead of hanging. A control message: never counted as lost.
  for (std::size_t i = 1; i < links_.size(); ++i) {
    const wire_header h{0, static_cast<std::uint8_t>(links_[i].phase), peer_left, step_tag(step_), 0};
    send_header(net(), links_[i].pe, channel_ | mailbox::control_bit, h, trace::send_cause::left);
  }
}

bool streamer_core::in_links_complete(int below_phase) const {
  for (const auto& il : in_links_) {
    if (il.phase >= below_phase) break;
    if (!il.final_received || il.received != il.announced) return false;
  }
  return true;
}

bool streamer_core::advance_staged() {
  // A message a callback's exception interrupted is counted as received, but items of it may
  // still have to be forwarded into the phase about to close: finish it first.
  if (batch_.started) return false;
  bool progressed = false;
  const int phases = impl_->plan->num_phases();
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

streamer_core::step_end streamer_core::step_end_policy() {
  const char* text = std::getenv("TRANSIT_STEP_END");
  const std::string_view value = text == nullptr ? "" : text;
  if (value == "markers") return step_end::markers;
  if (value == "acknowledgements") return step_end::acknowledgements;
  if (value == "adaptive") return step_end::adaptive;
  if (!value.empty() && value != "automatic")
    throw_invalid("TRANSIT_STEP_END", value, "'markers', 'acknowledgements', 'adaptive' or 'automatic'");
  return step_end::automatic;
}

int streamer_core::grid_links(const router& plan) {
  int links = 0;
  for (const int extent : plan.grid().dims()) links += extent - 1;
  return links;
}

int streamer_core::grid_hops(const router& plan) {
  int hops = 0;
  for (const int extent : plan.grid().dims()) hops += extent > 1 ? 1 : 0;
  return hops;
}

void streamer_core::choose_next_step_end() {
  // Markers cost a message on every link and a round per phase; acknowledgements one back for
  // each message, so about two per link that carried items. Acknowledgements when under half the
  // links carried items.
  const bool next = 2 * step_traffic_[0] < step_traffic_[1];
  if (next && !acknowledged_ends_) {
    // Everything of the step that ended has arrived and been handled: start the counts level.
    for (auto& l : links_) l.acknowledged = l.sent;
    for (auto& il : in_links_) il.acknowledged = il.received;
    acknowledgements_due_.clear();
    unacknowledged_ = 0;
  }
  acknowledged_ends_ = next;
}

bool streamer_core::send_acknowledgements() {
  // Open: the peers cannot be waiting yet (they wait from their done() on), and this PE acknowledges
  // everything at its own done(). A message a callback's exception interrupted is not handled yet.
  if (state_ == step_state::open || batch_.started || acknowledgements_due_.empty()) return false;
  bool sent = false;
  std::size_t kept = 0;
  for (const int index : acknowledgements_due_) {
    in_link& il = in_links_[static_cast<std::size_t>(index)];
    if (index == parent_in_link_) {
      acknowledgements_due_[kept++] = index;
      continue;
    }
    const wire_header h{0, static_cast<std::uint8_t>(il.phase), acknowledgement, step_tag(step_), il.received};
    send_header(net(), il.pe, channel_, h, trace::send_cause::acknowledgement);
    il.acknowledged = il.received;
    ++stats_.acknowledgement_messages;
    sent = true;
  }
  acknowledgements_due_.resize(kept);
  return sent;
}

void streamer_core::take_acknowledgement(int source, const wire_header& h) {
  link& l = links_[static_cast<std::size_t>(link_index(source, h.phase))];
  if (h.link_count > l.acknowledged) {
    unacknowledged_ -= h.link_count - l.acknowledged;
    l.acknowledged = h.link_count;
  }
  waited_peer_ = source;  // only wait() acknowledges: a quiescing PE that sees this fails (check_same_ending)
}

bool streamer_core::idle_and_acknowledged() const noexcept {
  return !batch_.started && unacknowledged_ == 0 &&
         impl_->confirmations->pending.load(std::memory_order_acquire) == 0 && locally_idle() && buffered_items() == 0;
}

bool streamer_core::settle_acknowledged() {
  if (batch_.started) return false;
  const std::uint64_t before = stats_.messages_sent + local_messages_.size();
  flush_links(0, links_.size(), flush_kind::final, false);
  bool progressed = stats_.messages_sent + local_messages_.size() != before;
  if (parent_in_link_ >= 0 && idle_and_acknowledged()) parent_in_link_ = -1;  // its work is done everywhere
  progressed |= send_acknowledgements();
  return progressed;
}

void streamer_core::check_no_peer_left() const {
  if (left_peer_ < 0) return;
  throw std::logic_error(concat("streamer<", type_name_, "> #", channel_, ": PE ", left_peer_,
                                " destroyed its streamer before taking part in step ", step_,
                                ", so this step can never end; streamers are destroyed collectively, after "
                                "finish() or quiesce() returned on every PE"));
}

void streamer_core::check_same_ending(bool waiting) const {
  const int other = waiting ? quiesced_peer_ : waited_peer_;
  if (other < 0) return;
  throw std::logic_error(concat("streamer<", type_name_, "> #", channel_, ": PE ", other, " ends step ", step_,
                                waiting ? " with quiesce()" : " with wait() or finish()", " while this PE calls ",
                                waiting ? "wait() or finish()" : "quiesce()",
                                "; every PE must end a step the same way"));
}

void streamer_core::end_step() {
  ++step_;
  dynamic_step_ = false;
  waited_peer_ = quiesced_peer_ = -1;
  set_state(step_state::open);
  {
    std::lock_guard lock(impl_->handed_mutex);
    impl_->accepting_handed = true;
  }
  for (auto& il : in_links_) il.final_received = false;
  for (auto& l : links_) l.carried_items = false;
  trace_step_end();
  if (impl_->tuner && !impl_->tuner->settled()) retune();
  activity_at_step_start_ = activity();
  trace_step_start();
}

void streamer_core::done_impl() {
  if (in_callback_) throw std::logic_error("streamer::done called from a deliver callback");
  if (quiescing_)
    throw std::logic_error("streamer::done called while a quiesce() is unfinished (it threw): call quiesce() again");
  if (state_ != step_state::open) throw std::logic_error("streamer::done called twice in one step");
  {
    // The inserters' items are this step's too: they flushed before done(); later ones would
    // follow the final markers, so they are refused (hand_over throws in the inserter's thread).
    std::lock_guard lock(impl_->handed_mutex);
    impl_->accepting_handed = false;
  }
  send_handed_over();
  set_state(step_state::done);
  send(links_[self_link], flush_kind::final);
  if (acknowledged_ends_) {
    settle_acknowledged();
    return;
  }
  next_final_phase_ = 0;
  advance_staged();
}

void streamer_core::wait_impl() {
  if (in_callback_) throw std::logic_error("streamer::wait called from a deliver callback");
  if (quiescing_)
    throw std::logic_error("streamer::wait called while a quiesce() is unfinished (it threw): call quiesce() again");
  if (state_ == step_state::open) done_impl();
  if (state_ == step_state::done) {
    const int phases = impl_->plan->num_phases();
    context_access::wait_until(
        ctx_,
        [&] {
          if (acknowledged_ends_) {
            // Done before polling, if this PE's items stayed here or were confirmed: on a shared
            // core an idle poll of MPI may hand the core away (a step of 4 ranks on 2 cores waited
            // 4-5 us there for nothing).
            const bool delivered = deliver_local();
            if (settle_acknowledged() || delivered) return step_result::progressed;
            if (idle_and_acknowledged()) {
              check_no_peer_left();
              check_same_ending(true);
              return step_result::done;
            }
          }
          bool progressed = poll_once();
          check_no_peer_left();
          check_same_ending(true);
          if (acknowledged_ends_) {
            progressed |= settle_acknowledged();
            if (idle_and_acknowledged()) return step_result::done;
          } else {
            progressed |= advance_staged();
            if (next_final_phase_ == phases && in_links_complete(phases) && locally_idle()) return step_result::done;
          }
          return progressed ? step_result::progressed : step_result::idle;
        },
        acknowledged_ends_ ? "streamer wait (acknowledgements)" : "streamer wait (staged completion)");
    TRANSIT_ASSERT(buffered_items() == 0, "items left in buffers after staged completion");
    // Markers: every item for this PE has arrived. Acknowledgements: every item this PE sent or
    // forwarded has been handled. The barrier makes that true everywhere before anyone starts the
    // next step. Keep polling meanwhile: peers may need our receives and our send backlog to finish
    // their step. Messages of the next step are set aside until the barrier.
    if (adaptive_ends_) {
      // The closing barrier carries the step's traffic (same rounds as a barrier on point-to-point
      // collectives), from which every PE makes the same choice for the next step.
      step_traffic_[0] = 0;
      for (std::size_t i = 1; i < links_.size(); ++i) step_traffic_[0] += links_[i].carried_items ? 1 : 0;
      step_traffic_[1] = links_.size() - 1;
      impl_->group->start_allreduce(step_traffic_, 2, scalar_type::u64, reduce_op::sum);
    } else {
      impl_->group->start_barrier();
    }
    set_state(step_state::ending);
  }
  context_access::wait_until(
      ctx_,
      [&] {
        bool progressed = poll_once();
        check_no_peer_left();
        // Acknowledgements: a PE in the barrier may still get this step's items to forward or
        // deliver (its peers' barrier cannot end before it acknowledged them).
        if (acknowledged_ends_) progressed |= settle_acknowledged();
        if (impl_->group->test()) return step_result::done;
        return progressed ? step_result::progressed : step_result::idle;
      },
      "streamer wait (final barrier)");
  // A message the transport confirmed has left the network at this PE, but where a receive is
  // posted ahead (a simulated rank) this PE may not have polled it before the barrier ended. Only
  // there: on a shared core each poll of MPI may hand the core away (4 ranks on 2 cores: 4 us).
  if (acknowledged_ends_ && net().confirms_before_hand_over()) {
    while (poll_once()) {
    }
  }
  TRANSIT_ASSERT(!acknowledged_ends_ || (parent_in_link_ < 0 && unacknowledged_ == 0),
                 "a step ended with messages not acknowledged");
  last_step_acknowledged_ = acknowledged_ends_;
  if (adaptive_ends_) choose_next_step_end();
  end_step();
}

void streamer_core::quiesce_impl() {
  streamer_core* self = this;
  quiesce_members(ctx_, std::span<streamer_core* const>(&self, 1), {}, *impl_->group, wave_, "streamer quiesce");
}

bool streamer_core::poll_members(context& ctx, std::span<streamer_core* const> members,
                                 std::span<group_endpoint* const> endpoints, bool pump) {
  if (pump) context_access::mail(ctx).pump();
  bool progressed = false;
  for (streamer_core* m : members) progressed |= m->poll_once(false);
  for (group_endpoint* e : endpoints) progressed |= e->poll_queued();
  return progressed;
}

// The four-counter method over the union of the members' channels: a PE contributes its summed
// (sent, received) only when every member is flushed and locally idle, so two equal consecutive
// waves with sent == received mean that no member holds or carries an item anywhere.
void streamer_core::quiesce_members(context& ctx, std::span<streamer_core* const> members,
                                    std::span<group_endpoint* const> endpoints, collective_group& group,
                                    quiesce_wave& wave, std::string_view what) {
  for (group_endpoint* e : endpoints) {
    if (e->in_callback()) throw std::logic_error("streamer::quiesce called from a deliver callback");
  }
  for (streamer_core* m : members) {
    if (m->in_callback_) throw std::logic_error("streamer::quiesce called from a deliver callback");
    if (m->state_ != step_state::open) throw std::logic_error("streamer::quiesce called after done() in the same step");
  }
  if (!members.empty() && !members.front()->quiescing_) {  // a fresh quiesce, not one resumed after an exception
    for (streamer_core* m : members) m->quiescing_ = true;
    wave = quiesce_wave{};
    wave.previous[0] = ~std::uint64_t{0};
  }
  context_access::wait_until(
      ctx,
      [&] {
        const bool progressed = poll_members(ctx, members, endpoints);
        for (streamer_core* m : members) {
          m->check_no_peer_left();
          m->check_same_ending(false);
        }
        if (wave.in_flight) {
          if (!group.test()) return progressed ? step_result::progressed : step_result::idle;
          wave.in_flight = false;
          if (trace::recorder* t = context_access::net(ctx).tracer())
            t->instant(t->label("termination wave", "messages sent", "messages received"), trace::recorder::now(),
                       wave.counts[0], wave.counts[1]);
          if (wave.counts[0] == wave.counts[1] && wave.counts[0] == wave.previous[0] &&
              wave.counts[1] == wave.previous[1])
            return step_result::done;
          wave.previous[0] = wave.counts[0];
          wave.previous[1] = wave.counts[1];
          return step_result::progressed;
        }
        if (progressed) return step_result::progressed;
        // Idle here: send everything buffered, deliver what is local, then join a wave.
        for (streamer_core* m : members) m->flush_links(0, m->links_.size(), flush_kind::final, false);
        for (streamer_core* m : members) {
          if (!m->locally_idle()) return step_result::progressed;
        }
        wave.counts[0] = wave.counts[1] = 0;
        for (streamer_core* m : members) {
          wave.counts[0] += m->stats_.messages_sent;
          wave.counts[1] += m->stats_.messages_received;
        }
        for (const group_endpoint* e : endpoints) {
          wave.counts[0] += e->messages_sent();
          wave.counts[1] += e->messages_received();
        }
        group.start_allreduce(wave.counts, 2, scalar_type::u64, reduce_op::sum);
        wave.in_flight = true;
        return step_result::progressed;
      },
      what);
  for (streamer_core* m : members) {
    m->quiescing_ = false;
    m->end_step();
  }
}

}  // namespace transit::detail
