#pragma once
// Test access to a streamer's internals: forcing counter values, reading its channel and links.
// Every front end on the streamer core (streamer<T>, the C API's byte_streamer) declares this
// struct a friend; only tests define it.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transit/detail/runtime/context_access.hpp"
#include "transit/streamer/streamer.hpp"

namespace transit::detail {

struct streamer_test_access {
  /// Sets every link's cumulative message count, outgoing and incoming, to `value`. Collective in
  /// effect: every PE must do it between the same two barriers, before any item moves.
  template <class Streamer>
  static void start_link_counts_at(Streamer& s, std::uint64_t value) {
    streamer_core& core = s;
    for (auto& l : core.links_) l.sent = l.acknowledged = value;
    for (auto& il : core.in_links_) il.received = il.acknowledged = value;
  }
  /// streamer_core::chooses_step_by_step for TRANSIT_STEP_END=`policy` ("automatic" or "adaptive").
  static bool chooses_step_by_step(std::string_view policy, int links, int hops, bool cores_shared,
                                   bool transport_confirms) {
    const auto way = policy == "adaptive" ? streamer_core::step_end::adaptive
                     : policy == "markers"  ? streamer_core::step_end::markers
                                            : streamer_core::step_end::automatic;
    return streamer_core::chooses_step_by_step(way, links, hops, cores_shared, transport_confirms);
  }
  /// Whether the streamer's last step ended by wait() ended by acknowledgement (else by staged
  /// final markers).
  template <class Streamer>
  static bool last_step_acknowledged(Streamer& s) {
    streamer_core& core = s;
    return core.last_step_acknowledged_;
  }
  template <class Streamer>
  static std::uint32_t channel(Streamer& s) {
    streamer_core& core = s;
    return core.channel_;
  }
  /// Whether this PE's transport confirms delivery (transport::confirmable_bytes() above a
  /// streamer's largest message of small items).
  static bool transport_confirms(context& ctx) { return context_access::net(ctx).confirmable_bytes() >= 4096; }
  /// (source PE, phase) of every incoming link.
  template <class Streamer>
  static std::vector<std::pair<int, int>> in_links(Streamer& s) {
    streamer_core& core = s;
    std::vector<std::pair<int, int>> out;
    for (const auto& il : core.in_links_) out.emplace_back(il.pe, il.phase);
    return out;
  }
  /// Items inserted when progress() last polled the network.
  template <class Streamer>
  static std::uint64_t inserted_at_network_poll(Streamer& s) {
    streamer_core& core = s;
    return core.pacing_.inserted_at_network_poll;
  }
  /// The router items travel by.
  template <class Streamer>
  static const router& route_plan(Streamer& s) {
    streamer_core& core = s;
    return core.route_plan();
  }
  /// Local: sends `bytes` to PE `pe` as one message on `channel`, as a streamer would (a forged
  /// message, for the wire tests).
  static void send_raw(context& ctx, int pe, std::uint32_t channel, const std::vector<std::byte>& bytes) {
    auto& net = context_access::net(ctx);
    message_buffer b = net.allocate(bytes.size());
    if (!bytes.empty()) std::memcpy(b.payload(), bytes.data(), bytes.size());
    b.set_size(bytes.size());
    net.send(pe, channel, std::move(b));
  }
  /// The start of the error a corrupt message on `channel` from `source` gives.
  static std::string corrupt_prefix(std::uint32_t channel, int source) {
    return "corrupt message on channel " + std::to_string(channel) + " from PE " + std::to_string(source) + ": ";
  }
};

}  // namespace transit::detail
