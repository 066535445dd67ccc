// Random, truncated and corrupted messages fed to a streamer's receive path (local backend): each
// must give a clear error naming the channel and the source, never a crash, an out-of-bounds read
// (this runs under AddressSanitizer too) or a half-processed message. Afterwards the streamer must
// still deliver a normal step exactly once: nothing of the rejected messages was counted.
#include <cstring>
#include <string>
#include <string_view>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "streamer_checks.hpp"
#include "streamer_internals.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace {

using namespace transit;
using transit::detail::streamer_test_access;
using transit::detail::wire_header;
using transit::testing::delivery_log;
using transit::testing::probe;
using transit::testing::probe_destination;

constexpr int messages = 3000;

// A message that breaks the wire format in one way, chosen by `kind`, around an otherwise valid
// message on (source, phase) of the receiver.
struct forged {
  std::vector<std::byte> bytes;
  bool control = false;
};

// Where the destinations start behind n items (the layout core.hpp documents).
std::size_t destinations_offset(std::size_t n) { return (sizeof(wire_header) + n * sizeof(probe) + 3) & ~std::size_t{3}; }

forged forge(std::mt19937_64& random, int kind, int phase, bool destinations, int num_phases,
             const std::vector<int>& foreign_phases, int pes) {
  const auto below = [&](std::uint64_t n) { return static_cast<std::uint64_t>(random() % n); };
  std::uint32_t n = static_cast<std::uint32_t>(1 + below(5));
  wire_header h{n, static_cast<std::uint8_t>(phase), static_cast<std::uint8_t>(destinations ? 1 : 0), 0, 0};
  const std::size_t dest_at = destinations_offset(n);
  std::size_t size = destinations ? dest_at + 4 * n : sizeof h + n * sizeof(probe);
  forged f;
  f.bytes.resize(size);
  for (auto& b : f.bytes) b = static_cast<std::byte>(random());
  if (destinations)
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::int32_t d = static_cast<std::int32_t>(below(static_cast<std::uint64_t>(pes)));
      std::memcpy(f.bytes.data() + dest_at + 4 * i, &d, 4);
    }
  switch (kind) {
    case 0:  // shorter than a header: random bytes
      f.bytes.resize(below(sizeof h));
      return f;
    case 1:  // flags this streamer never uses: an acknowledgement with items, or a transport's
             // confirmation in a step that ends by final markers (0x20 is has_sources)
      h.flags = static_cast<std::uint8_t>(h.flags | (0x40 << below(2)));
      break;
    case 2:  // a step that is neither this one nor the next
      h.step = static_cast<std::uint16_t>(2 + below(65534));
      break;
    case 3:  // a phase that is no link from this source
      h.phase = foreign_phases.empty() || below(2) == 0
                    ? static_cast<std::uint8_t>(num_phases + below(256 - static_cast<std::uint64_t>(num_phases)))
                    : static_cast<std::uint8_t>(foreign_phases[below(foreign_phases.size())]);
      break;
    case 4:  // truncated anywhere after the header
      size = sizeof h + below(size - sizeof h);
      f.bytes.resize(size);
      break;
    case 5:  // trailing garbage
      f.bytes.resize(size + 1 + below(64));
      break;
    case 6:  // a destination outside the job (or a broadcast root outside it)
      if (destinations) {
        const std::int32_t d = below(2) ? static_cast<std::int32_t>(pes + below(1000))
                                        : static_cast<std::int32_t>(-pes - 1 - static_cast<std::int64_t>(below(1000)));
        std::memcpy(f.bytes.data() + dest_at + 4 * below(n), &d, 4);
      } else {
        f.bytes.resize(size + 4 * n);  // destinations where none travel
      }
      break;
    case 7:  // the destinations flag contradicts the phase
      h.flags = static_cast<std::uint8_t>(h.flags ^ 1);
      break;
    case 8:  // an item count that does not fit the size
      h.items = static_cast<std::uint32_t>(random()) | 8;
      break;
    case 9:  // control and data mixed up
      if (below(2)) {
        f.control = true;  // a data header on the control channel
      } else {
        h.flags = static_cast<std::uint8_t>(h.flags | (below(2) ? 4 : 8));  // announcement, or "left" on data
      }
      break;
  }
  std::memcpy(f.bytes.data(), &h, sizeof h);
  return f;
}

// After the attack, a normal step: nothing of the rejected messages may have been counted or kept.
void normal_step(context& ctx, streamer<probe>& s, delivery_log& log, std::int64_t per_pe, const std::string& where) {
  ctx.barrier();
  for (std::int64_t q = 0; q < per_pe; ++q) {
    const int dest = probe_destination(9, ctx.rank(), q, ctx.size());
    s.insert(probe{ctx.rank(), dest, q}, dest);
  }
  s.finish();
  log.check(9, where);
}

// Polls until the one forged message sent to this PE is refused with an error ending in
// `expected`; nothing of it may have been counted.
void expect_one_refusal(streamer<probe>& s, const std::string& expected) {
  bool refused = false;
  while (!refused) {
    try {
      if (!s.progress()) std::this_thread::yield();
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(std::string_view(e.what()).ends_with(expected)) << e.what();
      refused = true;
    }
  }
  EXPECT_EQ(s.stats().messages_received, 0u);
  EXPECT_EQ(s.stats().items_delivered, 0u);
}

TEST(streamer_wire, corrupt_messages_are_refused_and_counted_nowhere) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.size() < 2) GTEST_SKIP() << "needs a sender and a receiver";
              streamer_options o;
              o.grid = virtual_grid::balanced(ctx.size(), 2);
              o.buffer_items = 4;
              constexpr std::int64_t per_pe = 200;
              delivery_log log(ctx.rank(), ctx.size(), per_pe);
              streamer<probe> s(ctx, o, [&](const probe& p) { log.record(p); });
              const std::uint32_t channel = streamer_test_access::channel(s);
              // PE 0 is attacked by the first PE that has a link to it.
              int attacker = -1, phase = -1;
              if (ctx.rank() == 0) {
                const auto links = streamer_test_access::in_links(s);
                ASSERT_FALSE(links.empty());
                attacker = links.front().first;
                phase = links.front().second;
              }
              attacker = ctx.allreduce(attacker, reduce_op::max);
              phase = ctx.allreduce(phase, reduce_op::max);
              if (ctx.rank() == attacker) {
                const router& r = s.route_plan();
                std::vector<int> foreign;  // phases on which the attacker has no link to PE 0
                for (int p = 0; p < r.num_phases(); ++p) {
                  bool linked = false;
                  for (const hop& h : r.out_links(attacker)) linked |= h.pe == 0 && h.phase == p;
                  if (!linked) foreign.push_back(p);
                }
                std::mt19937_64 random(2024);
                for (int k = 0; k < messages; ++k) {
                  const forged f =
                      forge(random, k % 10, phase, !r.ends_route(phase), r.num_phases(), foreign, ctx.size());
                  streamer_test_access::send_raw(ctx, 0, f.control ? channel | transit::detail::mailbox::control_bit : channel,
                                                 f.bytes);
                }
              }
              if (ctx.rank() == 0) {
                const std::string expected = streamer_test_access::corrupt_prefix(channel, attacker);
                int refused = 0;
                while (refused < messages) {
                  try {
                    if (!s.progress()) std::this_thread::yield();
                  } catch (const std::runtime_error& e) {
                    ++refused;
                    ASSERT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
                  }
                }
                EXPECT_EQ(s.stats().messages_received, 0u);
                EXPECT_EQ(s.stats().items_delivered, 0u);
              }
              normal_step(ctx, s, log, per_pe, "after the corrupt messages");
            }),
            0);
}

// A streamer whose callback takes sources: on a later phase each item's source travels, and a
// source outside the job, missing sources or sources cut short are refused like any corrupt
// message, before any item is delivered with a source that is no PE.
TEST(streamer_wire, bad_sources_are_refused) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options o;
              o.grid = virtual_grid::balanced(ctx.size(), 2);
              o.buffer_items = 4;
              constexpr std::int64_t per_pe = 200;
              delivery_log log(ctx.rank(), ctx.size(), per_pe);
              std::int64_t wrong_sources = 0;
              streamer<probe> s(ctx, o, [&](const probe& p, int source) {
                wrong_sources += source != p.source;
                log.record(p);
              });
              const std::uint32_t channel = streamer_test_access::channel(s);
              // PE 0 is attacked on a link of a phase after the first, where sources travel.
              int attacker = -1, phase = -1;
              if (ctx.rank() == 0) {
                for (const auto& [pe, p] : streamer_test_access::in_links(s)) {
                  if (p > 0) std::tie(attacker, phase) = std::pair(pe, p);
                }
              }
              attacker = ctx.allreduce(attacker, reduce_op::max);
              phase = ctx.allreduce(phase, reduce_op::max);
              if (attacker < 0) GTEST_SKIP() << "no route of two hops on " << o.grid->str();
              constexpr int kinds = 4, per_kind = 50;
              const char* expected_problem[kinds] = {"is outside the job's", "is outside the job's", "no sources on phase",
                                                     "bytes for"};
              if (ctx.rank() == attacker) {
                std::mt19937_64 random(77);
                for (int k = 0; k < kinds * per_kind; ++k) {
                  const std::uint32_t n = static_cast<std::uint32_t>(1 + random() % 5);
                  const std::size_t dest_at = destinations_offset(n), source_at = dest_at + 4 * n;
                  std::vector<std::byte> bytes(source_at + 4 * n);
                  for (auto& b : bytes) b = static_cast<std::byte>(random());
                  std::uint8_t flags = transit::detail::has_destinations | transit::detail::has_sources;
                  for (std::uint32_t i = 0; i < n; ++i) {
                    const std::int32_t to = 0, from = static_cast<std::int32_t>(random() % static_cast<unsigned>(ctx.size()));
                    std::memcpy(bytes.data() + dest_at + 4 * i, &to, 4);
                    std::memcpy(bytes.data() + source_at + 4 * i, &from, 4);
                  }
                  const std::size_t bad = random() % n;
                  switch (k % kinds) {
                    case 0: {  // a source past the last PE
                      const auto from = static_cast<std::int32_t>(ctx.size() + static_cast<int>(random() % 1000));
                      std::memcpy(bytes.data() + source_at + 4 * bad, &from, 4);
                      break;
                    }
                    case 1: {  // a negative source
                      const auto from = static_cast<std::int32_t>(-1 - static_cast<int>(random() % 1000));
                      std::memcpy(bytes.data() + source_at + 4 * bad, &from, 4);
                      break;
                    }
                    case 2:  // no sources where they must travel
                      flags = transit::detail::has_destinations;
                      bytes.resize(source_at);
                      break;
                    case 3:  // sources cut short
                      bytes.resize(source_at + 4 * bad);
                      break;
                  }
                  const wire_header h{n, static_cast<std::uint8_t>(phase), flags, 0, 0};
                  std::memcpy(bytes.data(), &h, sizeof h);
                  streamer_test_access::send_raw(ctx, 0, channel, bytes);
                }
              }
              if (ctx.rank() == 0) {
                const std::string expected = streamer_test_access::corrupt_prefix(channel, attacker);
                int refused = 0;
                while (refused < kinds * per_kind) {
                  try {
                    if (!s.progress()) std::this_thread::yield();
                  } catch (const std::runtime_error& e) {
                    const std::string what = e.what();
                    ASSERT_NE(what.find(expected), std::string::npos) << what;
                    ASSERT_NE(what.find(expected_problem[refused % kinds]), std::string::npos) << what;
                    ++refused;
                  }
                }
                EXPECT_EQ(s.stats().messages_received, 0u);
                EXPECT_EQ(s.stats().items_delivered, 0u);
              }
              normal_step(ctx, s, log, per_pe, "after the messages with bad sources");
              EXPECT_EQ(wrong_sources, 0);
            }),
            0);
}

// A message the transport confirms is never acknowledged, so it may only carry items its
// receiver delivers: on a phase whose items travel on it is refused, and so it is in a step that
// ends by final markers. Then a normal step.
TEST(streamer_wire, a_confirmation_where_none_can_be_is_refused) {
  for (const std::string way : {"acknowledgements", "markers"}) {
    const transit::testing::scoped_env step_end("TRANSIT_STEP_END", way.c_str());
    EXPECT_EQ(transit::testing::run_spmd([&](context& ctx) {
                streamer_options o;
                o.grid = virtual_grid::balanced(ctx.size(), 2);
                o.buffer_items = 4;
                constexpr std::int64_t per_pe = 50;
                delivery_log log(ctx.rank(), ctx.size(), per_pe);
                streamer<probe> s(ctx, o, [&](const probe& p) { log.record(p); });
                const std::uint32_t channel = streamer_test_access::channel(s);
                // Acknowledgements: PE 0 is attacked on a phase-0 link, whose items may travel on.
                // Markers: on a link of the last phase, whose items PE 0 delivers.
                const router& r = s.route_plan();
                const int wanted = way == "markers" ? r.num_phases() - 1 : 0;
                int attacker = -1;
                if (ctx.rank() == 0) {
                  for (const auto& [pe, p] : streamer_test_access::in_links(s)) {
                    if (p == wanted) attacker = pe;
                  }
                }
                attacker = ctx.allreduce(attacker, reduce_op::max);
                if (attacker < 0 || (way != "markers" && r.ends_route(0)))
                  GTEST_SKIP() << "no route of two hops on " << o.grid->str();
                if (ctx.rank() == attacker) {
                  const bool destinations = !r.ends_route(wanted);
                  const std::uint32_t n = 2;
                  std::vector<std::byte> bytes(destinations ? destinations_offset(n) + 4 * n : sizeof(wire_header) + n * sizeof(probe));
                  const std::int32_t to = 0;
                  if (destinations)
                    for (std::uint32_t i = 0; i < n; ++i) std::memcpy(bytes.data() + destinations_offset(n) + 4 * i, &to, 4);
                  const auto flags = static_cast<std::uint8_t>(transit::detail::transport_confirmed |
                                                               (destinations ? transit::detail::has_destinations : 0));
                  const wire_header h{n, static_cast<std::uint8_t>(wanted), flags, 0, 0};
                  std::memcpy(bytes.data(), &h, sizeof h);
                  streamer_test_access::send_raw(ctx, 0, channel, bytes);
                }
                if (ctx.rank() == 0) {
                  const std::string expected =
                      streamer_test_access::corrupt_prefix(channel, attacker) +
                      (way == "markers" ? "a message confirmed by the transport in a step that ends by final markers"
                                        : "a message confirmed by the transport on phase 0, whose items this PE forwards");
                  expect_one_refusal(s, expected);
                }
                normal_step(ctx, s, log, per_pe, "after a confirmation where none can be");
              }),
              0)
        << way;
  }
}

// A message around the grid (phase 255: straight from any PE to its items' destination) is only
// sent where nothing counts a link's messages and the transport confirms it: it is refused in a
// step that ends by final markers, without the transport's confirmation, where the job's
// transports cannot confirm (the local backend), and with an item for another PE (over MPI, where
// they can). Then a normal step.
TEST(streamer_wire, a_message_around_the_grid_is_refused_where_it_cannot_be) {
  for (const std::string way : {"markers", "unconfirmed", "stray"}) {
    const transit::testing::scoped_env step_end("TRANSIT_STEP_END", way == "markers" ? "markers" : "acknowledgements");
    EXPECT_EQ(transit::testing::run_spmd([&](context& ctx) {
                if (ctx.size() < 2) GTEST_SKIP() << "needs a sender and a receiver";
                streamer_options o;
                o.grid = virtual_grid::balanced(ctx.size(), 2);
                o.buffer_items = 4;
                constexpr std::int64_t per_pe = 50;
                delivery_log log(ctx.rank(), ctx.size(), per_pe);
                std::int64_t wrong_sources = 0;
                streamer<probe> s(ctx, o, [&](const probe& p, int source) {
                  wrong_sources += source != p.source;
                  log.record(p);
                });
                const std::uint32_t channel = streamer_test_access::channel(s);
                const bool confirms = streamer_test_access::transport_confirms(ctx);
                const int attacker = ctx.size() - 1;  // any PE: such a message travels on no link
                if (ctx.rank() == attacker) {
                  const std::uint32_t n = 2;
                  const std::size_t dest_at = destinations_offset(n), source_at = dest_at + 4 * n;
                  std::vector<std::byte> bytes(source_at + 4 * n);
                  for (std::uint32_t i = 0; i < n; ++i) {
                    const std::int32_t to = way == "stray" && i == 1 ? 1 : 0, from = attacker;
                    std::memcpy(bytes.data() + dest_at + 4 * i, &to, 4);
                    std::memcpy(bytes.data() + source_at + 4 * i, &from, 4);
                  }
                  const auto flags =
                      static_cast<std::uint8_t>(transit::detail::has_destinations | transit::detail::has_sources |
                                                (way == "unconfirmed" ? 0 : transit::detail::transport_confirmed));
                  const wire_header h{n, transit::detail::direct_phase, flags, 0, 0};
                  std::memcpy(bytes.data(), &h, sizeof h);
                  streamer_test_access::send_raw(ctx, 0, channel, bytes);
                }
                if (ctx.rank() == 0) {
                  const std::string problem =
                      way == "markers"       ? "a message around the grid in a step that ends by final markers"
                      : way == "unconfirmed" ? "a message around the grid that the transport does not confirm, or "
                                               "that ends a link"
                      : confirms             ? "destination 1 of item 1 in a message sent straight to this PE"
                                             : "a message around the grid, which this job's transports cannot confirm";
                  const std::string expected = streamer_test_access::corrupt_prefix(channel, attacker) + problem;
                  expect_one_refusal(s, expected);
                }
                normal_step(ctx, s, log, per_pe, "after a message around the grid where none can be");
                EXPECT_EQ(wrong_sources, 0);
              }),
              0)
        << way;
  }
}

}  // namespace
