// Insertion from the application's own threads (streamer<T>::inserter): several threads of each
// PE insert through inserters of their own while the PE itself inserts and polls; every item is
// delivered exactly once, in done()/wait() steps and in quiesce() steps, over several steps and
// grids; a hand-over after done() is refused with std::logic_error, and the refused items are
// named as dropped by that exception, not silently.
#include <stdexcept>
#include <thread>
#include <vector>

#include "streamer_checks.hpp"

namespace {

using namespace transit;
using transit::testing::delivery_log;
using transit::testing::probe;
using transit::testing::probe_destination;

constexpr int user_threads = 4;
constexpr std::int64_t per_pe = 3000;

// Item q of this PE goes in through thread q % (user_threads + 1); the last share is the PE's own.
void insert_from_threads(context& ctx, streamer<probe>& s, std::uint64_t seed) {
  std::vector<std::thread> threads;
  for (int t = 0; t < user_threads; ++t) {
    threads.emplace_back([&, t] {
      auto in = s.make_inserter();
      for (std::int64_t q = t; q < per_pe; q += user_threads + 1) {
        const int dest = probe_destination(seed, ctx.rank(), q, ctx.size());
        in.insert(probe{ctx.rank(), dest, q}, dest);
      }
    });  // the inserter flushes when it goes out of scope
  }
  for (std::int64_t q = user_threads; q < per_pe; q += user_threads + 1) {
    const int dest = probe_destination(seed, ctx.rank(), q, ctx.size());
    s.insert(probe{ctx.rank(), dest, q}, dest);  // polls, and sends what the threads hand over
    s.progress();
  }
  for (auto& t : threads) t.join();
}

TEST(streamer_inserter, threads_feed_their_pe) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              for (const int dims : {1, 2}) {
                streamer_options o;
                o.buffer_items = 16;  // many hand-overs per thread
                o.grid = virtual_grid::balanced(ctx.size(), dims);
                delivery_log log(ctx.rank(), ctx.size(), per_pe);
                streamer<probe> s(ctx, o, [&](const probe& p) { log.record(p); });
                for (int step = 0; step < 3; ++step) {
                  log.reset();
                  const std::uint64_t seed = 11 + step;
                  insert_from_threads(ctx, s, seed);
                  if (step == 1) {
                    s.quiesce();  // the other termination protocol counts the handed buffers too
                  } else {
                    s.finish();
                  }
                  log.check(seed, o.grid->str() + " step " + std::to_string(step));
                  const streamer_stats st = s.stats();
                  EXPECT_EQ(st.items_inserted, static_cast<std::uint64_t>(per_pe) * (step + 1));
                }
              }
            }),
            0);
}

TEST(streamer_inserter, refused_after_done) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options o;
              o.buffer_items = 64;
              std::uint64_t delivered = 0;
              streamer<probe> s(ctx, o, [&](const probe&) { ++delivered; });
              auto in = s.make_inserter();
              const int dest = (ctx.rank() + 1) % ctx.size();
              in.insert(probe{ctx.rank(), dest, 0}, dest);  // stays in the inserter's buffer
              s.done();
              try {
                in.flush();
                ADD_FAILURE() << "a flush after done() was accepted";
              } catch (const std::logic_error& e) {
                EXPECT_NE(std::string(e.what()).find("after the PE called done()"), std::string::npos) << e.what();
              }
              s.wait();
              EXPECT_EQ(delivered, 0u);  // the refused item was dropped, as the exception said
              // The next step accepts inserters again.
              auto again = s.make_inserter();
              again.insert(probe{ctx.rank(), dest, 1}, dest);
              again.flush();
              s.finish();
              EXPECT_EQ(delivered, 1u);
            }),
            0);
}

TEST(streamer_inserter, bad_destination) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer<probe> s(ctx, streamer_options{}, [](const probe&) {});
              auto in = s.make_inserter();
              EXPECT_THROW(in.insert(probe{}, ctx.size()), std::out_of_range);
              EXPECT_THROW(in.insert(probe{}, -1), std::out_of_range);
              s.finish();
            }),
            0);
}

}  // namespace
