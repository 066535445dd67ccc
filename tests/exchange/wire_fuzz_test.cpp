// Malformed messages fed to sparse_exchange's receive path (exchange_port::receive, read_records;
// local backend, one message at a time): each is refused with the one report of
// core/wire_error.hpp, naming the exchange, the message, the sender and what was wrong, and no
// byte outside the message is read (this runs under AddressSanitizer too).
#include <string>
#include <vector>

#include "../support/test_support.hpp"
#include "../support/wire_fuzz.hpp"
#include "exchange/methods.hpp"

namespace {

using namespace transit;
using transit::detail::exchange_message_kind;
using transit::detail::exchange_record_header;
using transit::detail::exchange_wire_header;
using transit::testing::wire_bytes;

struct forged {
  std::vector<std::byte> bytes;
  std::string message;  // as the report names it
  std::string problem;  // a part of the report's problem
};

exchange_wire_header header(exchange_message_kind kind, std::uint16_t step = 0, std::uint64_t records = 0) {
  return exchange_wire_header{1, static_cast<std::uint16_t>(kind), step, records, 0};
}

// Every way the exchange's receivers check, one message each; `pes` PEs in the job.
std::vector<forged> forge_all(int pes) {
  std::vector<forged> all;
  const auto add = [&](wire_bytes w, std::string message, std::string problem) {
    all.push_back(forged{std::move(w.bytes()), std::move(message), std::move(problem)});
  };
  add(wire_bytes().zeros(10), "message", "10 bytes, shorter than its 24-byte header");
  {
    exchange_wire_header h = header(exchange_message_kind::data);
    h.run = 7;
    add(wire_bytes().add(h).zeros(8), "message", "run 7 during run 1");
  }
  {
    exchange_wire_header h = header(exchange_message_kind::data);
    h.kind = 9;
    add(wire_bytes().add(h), "message", "unknown kind 9");
  }
  add(wire_bytes().add(header(exchange_message_kind::data, 3)).zeros(8), "direct message", "step 3 (expected 0)");
  add(wire_bytes().add(header(exchange_message_kind::confirmed, 2)).zeros(8), "direct message", "step 2 (expected 0)");
  add(wire_bytes().add(header(exchange_message_kind::ack)).zeros(8), "acknowledgement", "32 bytes (expected 24)");
  add(wire_bytes().add(header(exchange_message_kind::stage, 0, 2)).add(exchange_record_header{0, 1, 8}).zeros(8),
      "stage message", "record 1 of 2: its header is cut off");
  add(wire_bytes().add(header(exchange_message_kind::phase, 0, 1)).add(exchange_record_header{0, 1, 100}).zeros(8),
      "phase message", "record 0 of 1: 100 bytes, but 8 bytes are left");
  add(wire_bytes().add(header(exchange_message_kind::stage, 0, 1)).add(exchange_record_header{pes + 5, 1, 8}).zeros(8),
      "stage message", "destination PE " + std::to_string(pes + 5) + " outside the job's " + std::to_string(pes));
  add(wire_bytes().add(header(exchange_message_kind::stage, 0, 1)).add(exchange_record_header{0, -1, 8}).zeros(8),
      "stage message", "source PE -1 outside");
  add(wire_bytes().add(header(exchange_message_kind::stage, 0, 1)).add(exchange_record_header{0, 1, 8}).zeros(24),
      "stage message", "16 bytes after its 1 records");
  return all;
}

TEST(exchange_wire, malformed_messages_are_refused_by_the_exchange) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.size() < 2) GTEST_SKIP() << "needs a sender and a receiver";
              constexpr int attacker = 1;
              exchange_stats stats;
              detail::exchange_port port(ctx, stats);
              port.begin_run(1);
              const std::string receiver = "sparse_exchange #" + std::to_string(port.channel());
              // Takes what arrived and reads every record, as the methods do.
              const auto receive = [&] {
                port.receive();
                std::vector<detail::message> arrived;
                arrived.swap(port.inbox());
                for (const detail::message& m : arrived)
                  detail::read_records(port, m, [](const detail::held_record&, int) {});
              };
              for (const forged& f : forge_all(ctx.size())) {
                if (ctx.rank() == attacker) transit::testing::send_raw(ctx, 0, port.channel(), f.bytes);
                if (ctx.rank() == 0) transit::testing::expect_refused(receive, receiver, f.message, attacker, f.problem);
                ctx.barrier();
              }
            }),
            0);
}

}  // namespace
