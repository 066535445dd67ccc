// Malformed calls fed to active_messages' receive path (local backend, one at a time): items of a
// call streamer whose record is cut short or names no handler, and a chunk whose header is wrong.
// Each is refused with the one report of core/wire_error.hpp, naming active_messages, the kind of
// call, the PE whose message carried it and what was wrong, with no read outside the item (this
// runs under AddressSanitizer too); the calls after it still run, and barrier() still ends.
#include <cstring>
#include <string>
#include <string_view>

#include "../support/test_support.hpp"
#include "../support/wire_fuzz.hpp"

namespace transit::detail {

struct active_messages_test_access {
  template <std::size_t I>
  static auto& calls(active_messages& am) {
    return *std::get<I>(am.calls_);
  }
  static auto& chunks(active_messages& am) { return *am.chunks_; }
};

}  // namespace transit::detail

namespace {

using namespace transit;
using transit::detail::active_messages_test_access;

thread_local int texts_received = 0;  // PEs are threads of one process here
constexpr auto on_text = [](active_messages&, std::string_view) { ++texts_received; };
using text_slot = detail::handler_slot<std::remove_const_t<decltype(on_text)>, detail::text_arg>;

constexpr std::size_t cell_bytes = 16;  // the call class the forged calls travel in
static_assert(detail::call_classes[2] == cell_bytes);

// The PE whose message brings an item from `source` to PE 0: its last hop on the streamer's route.
template <class Streamer>
int last_hop(const Streamer& s, int source) {
  int pe = source, phase = -1, last = source;
  while (pe != 0) {
    last = pe;
    const hop h = s.route_plan().next_hop(pe, 0, phase);
    pe = h.pe;
    phase = h.phase;
  }
  return last;
}

TEST(active_messages_wire, malformed_calls_are_refused_by_active_messages) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.size() < 2) GTEST_SKIP() << "needs a sender and a receiver";
              constexpr int attacker = 1;
              active_messages am(ctx);
              am.async(ctx.rank(), on_text, std::string("registers the handler"));
              am.barrier();
              texts_received = 0;
              auto& calls = active_messages_test_access::calls<2>(am);
              const int source = last_hop(calls, attacker);
              const std::uint32_t text_id = text_slot::entry.id.load();

              // Unknown handler id; a string argument longer than the record.
              detail::call_cell<cell_bytes> unknown{}, short_text{};
              const std::uint32_t no_id = 0x7fff0000u;
              std::memcpy(unknown.bytes, &no_id, sizeof no_id);
              std::memcpy(short_text.bytes, &text_id, sizeof text_id);
              short_text.bytes[4] = std::byte{200};
              // A chunk of a record small enough for a call class.
              detail::chunk_cell chunk{};
              chunk.header = detail::chunk_header{10, 0, static_cast<std::uint32_t>(attacker), 0};

              const auto refuse = [&](auto&& forge, const std::string& message, int from, const std::string& problem) {
                if (ctx.rank() == attacker) {
                  forge();
                  am.async(0, on_text, std::string("after"));  // still runs
                  am.progress();                               // sends what was buffered
                }
                if (ctx.rank() == 0)
                  transit::testing::expect_refused([&] { am.progress(); }, "active_messages", message, from, problem);
                am.barrier();
              };
              refuse([&] { calls.insert(unknown, 0); }, "call of 16 bytes", source,
                     "handler id 2147418112, but PE 0 knows");
              refuse([&] { calls.insert(short_text, 0); }, "call of 16 bytes", source,
                     "a record of 16 bytes ends before its arguments do (200 bytes wanted at byte 5)");
              auto& chunks = active_messages_test_access::chunks(am);
              refuse([&] { chunks.insert(chunk, 0); }, "chunked call", last_hop(chunks, attacker),
                     "chunk of a record of 10 bytes at offset 0 from PE 1 of " + std::to_string(ctx.size()));
              EXPECT_EQ(texts_received, ctx.rank() == 0 ? 3 : 0);
            }),
            0);
}

}  // namespace
