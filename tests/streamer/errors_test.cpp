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
              EXPECT_THROW(s.done(), std::logic_error);
              s.wait();
              s.insert(1, 0);  // the next step is open again
              s.finish();
            }),
            0);
}

TEST(streamer_errors, bad_options) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options zero;
              zero.buffer_items = 0;
              EXPECT_EQ(message_of([&] { streamer<int> s(ctx, zero, [](const int&) {}); }),
                        "streamer_options.buffer_items: got '0', expected at least 1");
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
