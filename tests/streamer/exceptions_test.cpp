// Deliver callbacks that throw, caught by the caller who carries on: the item whose callback
// threw counts as delivered and is never delivered again; every other item is delivered exactly
// once by later calls; an interrupted wait or quiesce resumes. Items for other PEs and for the PE
// itself (the local path), forwarded items (2-D grid), every buffer size class.
#include <stdexcept>

#include "streamer_checks.hpp"

namespace {

using namespace transit;
using transit::testing::delivery_log;
using transit::testing::probe;
using transit::testing::probe_destination;

struct deliberate : std::runtime_error {
  deliberate() : std::runtime_error("deliberate failure in a deliver callback") {}
};

bool throws_on(const probe& p) { return p.sequence % 13 == 5; }

// Calls `call` until it returns without a deliberate exception; counts the exceptions.
template <class Call>
void retry(Call&& call, std::int64_t& caught) {
  for (;;) {
    try {
      call();
      return;
    } catch (const deliberate&) {
      ++caught;
    }
  }
}

void step_with_throwing_callbacks(context& ctx, const streamer_options& options, std::uint64_t seed,
                                  const std::string& where) {
  constexpr std::int64_t per_pe = 600;
  delivery_log log(ctx.rank(), ctx.size(), per_pe);
  std::int64_t thrown = 0, caught = 0;
  streamer<probe> s(ctx, options, [&](const probe& p) {
    log.record(p);  // delivered: recorded before the callback fails
    if (throws_on(p)) {
      ++thrown;
      throw deliberate();
    }
  });
  for (int step = 0; step < 2; ++step) {
    log.reset();
    const std::uint64_t step_seed = seed + 100 * step;
    for (std::int64_t q = 0; q < per_pe; ++q) {
      const int dest = probe_destination(step_seed, ctx.rank(), q, ctx.size());
      // An insert that sends a buffer polls, and may run a callback that throws: the item
      // itself was inserted all the same.
      try {
        s.insert(probe{ctx.rank(), dest, q}, dest);
      } catch (const deliberate&) {
        ++caught;
      }
      if (q % 50 == 49) retry([&] { s.progress(); }, caught);
    }
    retry([&] { s.finish(); }, caught);
    log.check(step_seed, where + " step " + std::to_string(step));
    EXPECT_EQ(caught, thrown) << where << ": every exception reaches the caller once";
  }
  const auto delivered = ctx.allreduce<std::uint64_t>(s.stats().items_delivered, reduce_op::sum);
  EXPECT_EQ(delivered, static_cast<std::uint64_t>(2 * per_pe * ctx.size())) << where;
}

TEST(streamer_exceptions, throwing_callbacks_lose_and_repeat_nothing) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              for (const std::size_t buffer : {std::size_t{1}, std::size_t{7}, std::size_t{1024}}) {
                for (const int dims : {1, 2}) {
                  streamer_options o;
                  o.buffer_items = buffer;
                  o.grid = virtual_grid::balanced(ctx.size(), dims);
                  step_with_throwing_callbacks(ctx, o, 17 + buffer,
                                               "buffer " + std::to_string(buffer) + ", " + o.grid->str());
                }
              }
            }),
            0);
}

// Dynamic work: each delivery inserts the next hop of a chain; some callbacks throw after
// inserting. quiesce() resumes after each exception and ends only when every chain is complete.
TEST(streamer_exceptions, quiesce_resumes_after_a_callback_throws) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              constexpr int hops = 40, chains = 8;
              streamer_options o;
              o.grid = virtual_grid::balanced(ctx.size(), 2);
              o.buffer_items = 3;
              std::int64_t seen = 0, thrown = 0, caught = 0;
              streamer<probe>* self = nullptr;
              streamer<probe> s(ctx, o, [&](const probe& p) {
                ++seen;
                if (p.sequence + 1 < hops) {
                  const int next = (p.dest + 1 + static_cast<int>(p.sequence)) % ctx.size();
                  self->insert(probe{p.source, next, p.sequence + 1}, next);
                }
                if (p.sequence % 7 == 3) {
                  ++thrown;
                  throw deliberate();
                }
              });
              self = &s;
              for (int c = 0; c < chains; ++c) {
                const int dest = (ctx.rank() + c) % ctx.size();
                s.insert(probe{ctx.rank(), dest, 0}, dest);
              }
              retry([&] { s.quiesce(); }, caught);
              EXPECT_EQ(caught, thrown);
              const auto total = ctx.allreduce(seen, reduce_op::sum);
              EXPECT_EQ(total, std::int64_t{hops} * chains * ctx.size());
              s.finish();  // the streamer is usable after the interrupted quiesce
            }),
            0);
}

}  // namespace
