// streamer_group: several streamers ending a step together under one quiescence protocol. Chains
// of deliveries that hop from one streamer to another (the work of one streamer is created by
// another's callbacks, so no single streamer's quiescence could end the step), consecutive steps,
// each streamer still usable on its own afterwards, and a callback's exception in the middle.
#include <array>
#include <stdexcept>

#include "streamer_checks.hpp"

namespace {

using namespace transit;
using transit::detail::streamer_group;

// Three item types of different sizes; a chain visits them in turn: a -> b -> c -> a -> ...
struct hop_a {
  std::uint32_t chain;
  std::uint32_t step;
};
struct hop_b {
  std::uint64_t chain;
  std::uint64_t step;
  double weight;
};
struct hop_c {
  std::uint32_t chain;
  std::uint32_t step;
  std::array<std::uint64_t, 5> padding;
};

int next_pe(std::uint64_t chain, std::uint64_t step, int size) {
  return static_cast<int>(((chain + 1) * 0x9E3779B97F4A7C15ull + step * 0xBF58476D1CE4E5B9ull) >> 33) % size;
}

struct deliberate : std::runtime_error {
  deliberate() : std::runtime_error("deliberate failure in a deliver callback") {}
};

struct chains {
  context& ctx;
  std::uint32_t length;
  bool throw_sometimes = false;
  std::uint64_t delivered = 0, thrown = 0;
  streamer<hop_a>* a = nullptr;
  streamer<hop_b>* b = nullptr;
  streamer<hop_c>* c = nullptr;

  void forward(std::uint64_t chain, std::uint64_t step) {
    ++delivered;
    const std::uint64_t next = step + 1;
    if (next < length) {
      const int dest = next_pe(chain, next, ctx.size());
      switch (next % 3) {
        case 0: a->insert(hop_a{static_cast<std::uint32_t>(chain), static_cast<std::uint32_t>(next)}, dest); break;
        case 1: b->insert(hop_b{chain, next, 0.5}, dest); break;
        default: c->insert(hop_c{static_cast<std::uint32_t>(chain), static_cast<std::uint32_t>(next), {}}, dest);
      }
    }
    if (throw_sometimes && step % 11 == 4) {
      ++thrown;
      throw deliberate();
    }
  }
};

void run_chains(context& ctx, const streamer_options& options, bool throw_sometimes, const std::string& where) {
  constexpr std::uint32_t length = 31, per_pe = 5;
  chains state{ctx, length, throw_sometimes};
  streamer<hop_a> a(ctx, options, [&](const hop_a& h) { state.forward(h.chain, h.step); });
  streamer<hop_b> b(ctx, options, [&](const hop_b& h) { state.forward(h.chain, h.step); });
  streamer<hop_c> c(ctx, options, [&](const hop_c& h) { state.forward(h.chain, h.step); });
  state.a = &a;
  state.b = &b;
  state.c = &c;
  streamer_group together(ctx);
  together.add(a);
  together.add(b);
  together.add(c);

  const auto pes = static_cast<std::uint64_t>(ctx.size());
  for (std::uint64_t step = 0; step < 3; ++step) {
    std::uint64_t caught = 0;
    for (std::uint32_t i = 0; i < per_pe; ++i) {
      const auto chain = static_cast<std::uint32_t>(ctx.rank() * per_pe + i);
      try {  // an insert that sends a buffer polls, and may run a callback that throws
        a.insert(hop_a{chain, 0}, next_pe(chain, 0, ctx.size()));
      } catch (const deliberate&) {
        ++caught;
      }
    }
    for (;;) {
      try {
        together.quiesce("joint quiesce test");
        break;
      } catch (const deliberate&) {
        ++caught;
      }
    }
    EXPECT_EQ(caught, state.thrown) << where;
    state.thrown = 0;
    // Every chain ran to its end: nothing of it is left in any of the three streamers.
    EXPECT_EQ(ctx.allreduce(state.delivered, reduce_op::sum), (step + 1) * pes * per_pe * length)
        << where << ", step " << step;
  }
  // Each streamer ended its step and is usable on its own.
  state.throw_sometimes = false;
  state.length = 0;  // no forwarding
  b.insert(hop_b{0, 0, 1.0}, (ctx.rank() + 1) % ctx.size());
  b.finish();
  c.quiesce();
  EXPECT_EQ(ctx.allreduce(state.delivered, reduce_op::sum), 3 * pes * per_pe * length + pes) << where;
}

TEST(streamer_group, chains_across_three_streamers_end_in_one_quiesce) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              for (const std::size_t buffer : {std::size_t{1}, std::size_t{4}, std::size_t{1024}}) {
                for (const int dims : {1, 2}) {
                  streamer_options o;
                  o.buffer_items = buffer;
                  o.grid = virtual_grid::balanced(ctx.size(), dims);
                  run_chains(ctx, o, false, "buffer " + std::to_string(buffer) + ", grid " + o.grid->str());
                }
              }
            }),
            0);
}

TEST(streamer_group, resumes_after_a_callback_throws) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options o;
              o.buffer_items = 3;
              o.grid = virtual_grid::balanced(ctx.size(), 2);
              run_chains(ctx, o, true, "throwing callbacks");
            }),
            0);
}

// progress() polls the transport once and delivers what arrived for every member.
TEST(streamer_group, progress_delivers_for_every_member) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              constexpr int per_pe = 50;
              std::uint64_t got_a = 0, got_b = 0;
              streamer_options o;
              o.buffer_items = 8;
              o.grid = virtual_grid::balanced(ctx.size(), 2);
              o.flush_period = std::chrono::microseconds(100);  // partial buffers go out while we poll
              streamer<std::uint32_t> a(ctx, o, [&](const std::uint32_t& v) { got_a += v; });
              streamer<hop_b> b(ctx, o, [&](const hop_b& h) { got_b += h.step; });
              streamer_group together(ctx);
              together.add(a);
              together.add(b);
              for (int i = 0; i < per_pe; ++i) {
                for (int d = 0; d < ctx.size(); ++d) {
                  a.insert(1, d);
                  b.insert(hop_b{0, 2, 0.0}, d);
                }
              }
              const auto expected = static_cast<std::uint64_t>(per_pe) * ctx.size();
              transit::detail::context_access::wait_until(
                  ctx,
                  [&] {
                    const bool progressed = together.progress();
                    if (got_a == expected && got_b == 2 * expected) return transit::detail::step_result::done;
                    return progressed ? transit::detail::step_result::progressed : transit::detail::step_result::idle;
                  },
                  "streamer_group progress test");
              together.quiesce("test");
              EXPECT_EQ(got_a, expected);
              EXPECT_EQ(got_b, 2 * expected);
            }),
            0);
}

TEST(streamer_group, refused_from_a_callback) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_group* together = nullptr;
              int refused = 0;
              streamer<int> s(ctx, {}, [&](const int&) {
                try {
                  together->quiesce("from a callback");
                } catch (const std::logic_error& e) {
                  EXPECT_NE(std::string(e.what()).find("from a deliver callback"), std::string::npos) << e.what();
                  ++refused;
                }
              });
              streamer_group joint(ctx);
              joint.add(s);
              together = &joint;
              s.insert(1, ctx.rank());
              joint.quiesce("test");
              EXPECT_EQ(refused, 1);
            }),
            0);
}

}  // namespace
