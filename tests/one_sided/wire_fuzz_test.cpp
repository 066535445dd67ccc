// Malformed messages fed to a one-sided hub (local backend, one message at a time), in both of its
// modes: a PE's own hub (polling, messages from its mailbox) and a node helper's (a transport of
// its own). Each is refused before any of it is used, with the one report of core/wire_error.hpp
// naming the hub, the message, the sender and what was wrong; no byte outside the message or the
// block is touched (this runs under AddressSanitizer too).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "../support/test_support.hpp"
#include "../support/wire_fuzz.hpp"
#include "one_sided/hub.hpp"

namespace {

using namespace transit;
using transit::detail::control_record;
using transit::detail::control_type;
using transit::detail::message_header;
using transit::detail::message_kind;
using transit::detail::op_code;
using transit::detail::request_record;
using transit::testing::wire_bytes;

constexpr std::uint64_t block_elements = 16;
constexpr std::size_t element_size = 8;

// Serves one block of 16 8-byte elements; awaits the reply to ticket 5 only.
class test_host final : public detail::hub::host {
 public:
  std::byte* block_of(int) override { return block_.data(); }
  void deliver_reply(int, std::uint32_t, const std::byte*, std::size_t) override { ++delivered; }
  void deliver_acks(int, std::uint64_t) override { ++delivered; }
  std::uint64_t block_elements(int) override { return ::block_elements; }
  std::string refuse(const control_record& c) override {
    if (c.type == control_type::reply && c.value != 5) return "reply for ticket " + std::to_string(c.value) + ", which awaits none";
    return {};
  }
  int delivered = 0;

 private:
  std::vector<std::byte> block_ = std::vector<std::byte>(::block_elements * element_size);
};

struct forged {
  std::vector<std::byte> bytes;
  std::string message;
  std::string problem;
};

message_header requests(std::uint32_t records = 1) { return message_header{message_kind::requests, 0, 0, records}; }
message_header control(std::uint32_t records = 1) { return message_header{message_kind::control, 0, 0, records}; }

request_record request(op_code op, std::uint32_t count, std::uint64_t offset, std::uint32_t payload_bytes = 0) {
  return request_record{op, 0, 0, payload_bytes, 0, 1, 0, count, offset};
}

// Every check of the hub's receive path, one message each, for a job of `pes` PEs in which the
// receiving hub is endpoint 0 and serves PE 0.
std::vector<forged> forge_all(int pes) {
  std::vector<forged> all;
  const auto add = [&](wire_bytes w, std::string message, std::string problem) {
    all.push_back(forged{std::move(w.bytes()), std::move(message), std::move(problem)});
  };
  const auto add_request = [&](const request_record& r, std::string problem) {
    add(wire_bytes().add(requests()).add(r).zeros((r.payload_bytes + 7) & ~7u), "request message",
        "request 0: " + std::move(problem));
  };
  add(wire_bytes().zeros(4), "message", "4 bytes, shorter than its 8-byte header");
  add(wire_bytes().add(message_header{static_cast<message_kind>(7), 0, 0, 0}), "message", "unknown kind 7");
  add(wire_bytes().add(requests()).zeros(10), "request message", "request 0 cut off (10 bytes left)");
  add(wire_bytes().add(requests()).add(request(op_code::put, 8, 0, 64)).zeros(8), "request message",
      "request 0: 64 payload bytes, 8 left");
  add_request(request(static_cast<op_code>(42), 1, 0), "unknown op code 42");
  {
    request_record r = request(op_code::get, 1, 0);
    r.owner = pes + 3;
    add_request(r, "owner PE " + std::to_string(pes + 3) + " outside the job's " + std::to_string(pes));
  }
  {
    request_record r = request(op_code::get, 1, 0);
    r.requester = -2;
    add_request(r, "requesting PE -2 outside");
  }
  {
    request_record r = request(op_code::get, 1, 0);
    r.requester = 1;  // its reply could not go back from here: its requests never come this way
    add_request(r, "requesting PE 1's requests never pass this endpoint");
  }
  add_request(request(op_code::put, 2, 0, 8), "8 payload bytes for op code 0 (expected 16)");
  add_request(request(op_code::get, 4, 15), "elements 15+4 outside PE 0's 16");
  add_request(request(op_code::fetch_add, 3, 0, 8), "3 elements in an atomic (expected 1)");
  {
    request_record r = request(op_code::accumulate, 1, 0, 8);
    r.reduce = 9;
    add_request(r, "unknown reduce_op 9");
  }
  {
    request_record r = request(op_code::get, 1, 0);
    r.ticket = detail::combined_ticket | 1;
    add_request(r, "ticket " + std::to_string(r.ticket) + " names a combined request of this endpoint");
  }
  add(wire_bytes().add(requests()).add(request(op_code::get_packed, 1, 0, 16)).add(detail::packed_region{10, 10}),
      "request message", "request 0: packed region 0: elements 10+10 outside PE 0's 16");
  add(wire_bytes().add(requests()).add(request(op_code::put_packed, 1, 0, 24)).add(detail::packed_region{0, 1000}).zeros(8),
      "request message", "request 0: packed region 0 of 1000 elements, more than its payload holds");
  add(wire_bytes().add(requests(3)).add(request(op_code::get, 1, 0)), "request message",
      "1 requests, but its header says 3");
  const auto add_control = [&](const control_record& c, std::size_t payload, std::string problem) {
    add(wire_bytes().add(control()).add(c).zeros(payload), "control message", "record 0: " + std::move(problem));
  };
  add_control(control_record{static_cast<control_type>(9), 0, 0, 0, 0, 0}, 0, "unknown type 9");
  add_control(control_record{control_type::acks, 0, 0, 8, 0, 1}, 8, "8 payload bytes on no reply");
  add_control(control_record{control_type::reply, 0, 0, 0, 1, 5}, 0, "replies for PE 1 never pass this endpoint");
  add_control(control_record{control_type::reply, 0, 0, 0, 0, 77}, 0, "reply for ticket 77, which awaits none");
  add_control(control_record{control_type::reply, 0, 0, 0, 0, detail::combined_ticket | 3}, 0,
              "reply for combined request 3, which awaits none");
  add_control(control_record{control_type::credit, 0, 0, 0, -1, 1}, 0, "credit for a link this endpoint does not have");
  add(wire_bytes().add(control(2)).add(control_record{control_type::acks, 0, 0, 0, 0, 1}), "control message",
      "1 records, but its header says 2");
  return all;
}

detail::hub::config hub_config(int pes, bool helper) {
  detail::hub::config c;
  c.self = 0;
  c.self_requester = 0;
  c.buffer_bytes = 4096;
  c.element_size = element_size;
  c.route.assign(static_cast<std::size_t>(pes), -1);  // every owner served here: all elements checked
  for (int pe = 0; pe < pes; ++pe) c.endpoint_of.push_back(pe);
  c.reply_via.assign(static_cast<std::size_t>(pes), -1);  // no requests come through here...
  c.reply_via[0] = 0;                                      // ...but PE 0's own
  if (helper) {
    for (int e = 0; e < pes; ++e) c.pe_of_endpoint.push_back(e);
  }
  c.in_links = 1;
  return c;
}

// PE 1 sends every forged message to PE 0's hub; `helper`: the hub takes them from the transport
// itself, as a node helper's does (the local backend's collectives send no messages meanwhile).
void attack_hub(context& ctx, bool helper) {
  if (ctx.size() < 2) GTEST_SKIP() << "needs a sender and a receiver";
  constexpr int attacker = 1;
  auto& mail = detail::context_access::mail(ctx);
  const std::uint32_t channel = mail.open_channel();
  test_host host;
  std::unique_ptr<detail::hub> hub;
  if (ctx.rank() == 0)
    hub = std::make_unique<detail::hub>(hub_config(ctx.size(), helper), detail::context_access::net(ctx),
                                        helper ? nullptr : &mail, channel, host);
  const std::string receiver = helper ? "one-sided hub of node 0" : "one-sided hub of PE 0";
  // PE 0 says when it polls for message k: a barrier's wait would pump the transport into the
  // mailbox, where a helper's hub never looks (the PEs are threads of one process here).
  static std::atomic<int> turn{-1};
  ctx.barrier();
  int k = 0;
  for (const forged& f : forge_all(ctx.size())) {
    if (ctx.rank() == attacker) {
      while (turn.load() != k) std::this_thread::yield();
      transit::testing::send_raw(ctx, 0, channel, f.bytes);
    }
    if (ctx.rank() == 0) {
      turn.store(k);
      transit::testing::expect_refused([&] { hub->poll(false); }, receiver, f.message, attacker, f.problem);
    }
    ctx.barrier();
    ++k;
  }
  if (ctx.rank() == 0) turn.store(-1);
  if (ctx.rank() == 0) {
    EXPECT_EQ(host.delivered, 0);
  }
  hub.reset();
  EXPECT_EQ(mail.close_channel(channel), 0u);
}

TEST(one_sided_hub_wire, malformed_messages_are_refused_by_a_polling_hub) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) { attack_hub(ctx, false); }), 0);
}

TEST(one_sided_hub_wire, malformed_messages_are_refused_by_a_helper_hub) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) { attack_hub(ctx, true); }), 0);
}

}  // namespace
