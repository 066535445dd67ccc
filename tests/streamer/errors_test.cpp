// Bad input to a streamer: clear exceptions that name the value and what was expected.
#include <stdexcept>
#include <string>

#include "streamer_checks.hpp"

namespace {

using namespace transit;

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no exception";
}

TEST(streamer_errors, bad_destinations_and_closed_steps) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer<int> s(ctx, {}, [](const int&) {});
              const std::string size = std::to_string(ctx.size());
              EXPECT_THROW(s.insert(1, ctx.size()), std::out_of_range);
              EXPECT_EQ(message_of([&] { s.insert(1, -1); }),
                        "streamer::insert: destination PE -1 is outside [0, " + size + "): expected a PE of this job");
              EXPECT_NE(message_of([&] { s.insert(1, ctx.size()); }).find("destination PE " + size), std::string::npos);
              s.done();
              EXPECT_THROW(s.insert(1, 0), std::logic_error);
              EXPECT_NE(message_of([&] { s.insert(1, 0); }).find("after done()"), std::string::npos);
              EXPECT_EQ(message_of([&] { s.broadcast(1); }),
                        "streamer::broadcast after done() and before wait() returned: this PE's step is closed; "
                        "broadcast after wait() returns (or use quiesce() when deliveries insert)");
              EXPECT_THROW(s.done(), std::logic_error);
              s.wait();
              s.insert(1, 0);  // the next step is open again
              s.finish();
            }),
            0);
}

TEST(streamer_errors, bad_options) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options zero;  // 0 is automatic (docs/tuning.md), not an error
              zero.buffer_items = 0;
              {
                streamer<int> s(ctx, zero, [](const int&) {});
                EXPECT_GE(s.current_options().buffer_items, 1u);
                s.finish();
              }
              streamer_options other;
              other.grid = virtual_grid::direct(ctx.size() + 1);
              EXPECT_EQ(message_of([&] { streamer<int> s(ctx, other, [](const int&) {}); }),
                        "streamer_options.grid: got '" + std::to_string(ctx.size() + 1) + " for " +
                            std::to_string(ctx.size() + 1) + " PEs', expected a grid for the job's " +
                            std::to_string(ctx.size()) + " PEs");
              streamer_options huge;
              huge.buffer_items = std::size_t{1} << 40;  // item counts travel in 32 bits
              EXPECT_EQ(message_of([&] { streamer<int> s(ctx, huge, [](const int&) {}); }),
                        "streamer_options.buffer_items: got '1099511627776', expected at most 4294967295");
              streamer_options one_d;
              one_d.grid = virtual_grid::direct(ctx.size());
              one_d.route = routing::node_aware;
              EXPECT_THROW((streamer<int>(ctx, one_d, [](const int&) {})), std::invalid_argument);
            }),
            0);
}

TEST(streamer_errors, collective_calls_from_a_deliver_callback_are_refused) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer<int>* self = nullptr;
              std::string refused;
              streamer<int> s(ctx, {}, [&](const int&) {
                refused = message_of([&] { self->quiesce(); });
                EXPECT_FALSE(self->progress());  // nested progress is a no-op
              });
              self = &s;
              s.insert(7, ctx.rank());
              s.finish();
              EXPECT_EQ(refused, "streamer::quiesce called from a deliver callback");
            }),
            0);
}

}  // namespace

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Regression: a uint64 and a double streamer constructed in opposite orders on even and odd PEs
// swapped their items, then deadlocked. Now construction fails on every PE, naming both sides.
TEST(streamer_errors, construction_in_different_orders_is_refused_everywhere) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.size() == 1) GTEST_SKIP() << "one PE cannot disagree with itself";
              std::string refused;
              try {
                if (ctx.rank() % 2 == 0) {
                  streamer<std::uint64_t> a(ctx, {}, [](const std::uint64_t&) {});
                  streamer<double> b(ctx, {}, [](const double&) {});
                } else {
                  streamer<double> b(ctx, {}, [](const double&) {});
                  streamer<std::uint64_t> a(ctx, {}, [](const std::uint64_t&) {});
                }
              } catch (const std::logic_error& e) {
                refused = e.what();
              }
              EXPECT_TRUE(contains(refused, "streamers constructed differently across PEs")) << refused;
              EXPECT_TRUE(contains(refused, "PE 0 constructed streamer #0 of uint64 (8 bytes)")) << refused;
              EXPECT_TRUE(contains(refused, "PE 1 constructed streamer #0 of double (8 bytes)")) << refused;
              EXPECT_TRUE(contains(refused, "in the same order, with the same item type, grid and routing")) << refused;
            }),
            0);
}

TEST(streamer_errors, different_grids_or_a_local_failure_are_refused_everywhere) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.size() == 1) GTEST_SKIP() << "one PE cannot disagree with itself";
              streamer_options o;
              o.grid = ctx.rank() == ctx.size() - 1 ? virtual_grid({1, ctx.size()}, ctx.size())
                                                    : virtual_grid::direct(ctx.size());
              const std::string grids = message_of([&] { streamer<int> s(ctx, o, [](const int&) {}); });
              const std::string n = std::to_string(ctx.size());
              EXPECT_TRUE(contains(grids, "PE 0 constructed streamer #0 of int (4 bytes), grid " + n)) << grids;
              EXPECT_TRUE(contains(grids, "PE " + std::to_string(ctx.size() - 1) +
                                              " constructed streamer #0 of int (4 bytes), grid 1x" + n))
                  << grids;

              streamer_options bad;  // PE 0 alone has a bad option: the others must not wait for it
              bad.buffer_items = ctx.rank() == 0 ? std::size_t{1} << 40 : 8;
              const std::string local = message_of([&] { streamer<int> s(ctx, bad, [](const int&) {}); });
              EXPECT_TRUE(contains(local, "that failed locally (streamer_options.buffer_items: got '1099511627776', "
                                          "expected at most 4294967295)"))
                  << local;
              streamer<int> fine(ctx, {}, [](const int&) {});  // and the next streamer works
              fine.insert(1, (ctx.rank() + 1) % ctx.size());
              fine.finish();
            }),
            0);
}

// TRANSIT_STEP_END names how steps end; any other value is refused on every PE, naming it.
TEST(streamer_errors, a_bad_step_end_in_the_environment_is_refused) {
  const transit::testing::scoped_env step_end("TRANSIT_STEP_END", "staged");
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              EXPECT_EQ(message_of([&] { streamer<int> s(ctx, {}, [](const int&) {}); }),
                        "TRANSIT_STEP_END: got 'staged', expected 'markers', 'acknowledgements', 'adaptive' or "
                        "'automatic'");
            }),
            0);
}

}  // namespace
