// active_messages: every call runs exactly once, on its destination, with its arguments intact.
// Counts and checksums have closed forms (or are recomputed from the senders' deterministic
// inputs); mixed handlers and argument kinds share one barrier; broadcasts come from every PE;
// handlers fan out trees of nested calls; options (buffer sizes, grids, routings) vary.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.hpp"
#include "transit/transit.hpp"

namespace {

using transit::active_messages;
using transit::context;
using transit::reduce_op;

// What the handlers of one PE saw. Handlers are captureless, so per-PE state lives in a
// thread_local: on the local backend every PE is a thread.
struct tally {
  std::uint64_t ints = 0, int_sum = 0;
  std::uint64_t pairs = 0;
  double pair_sum = 0;
  std::uint64_t pods = 0, pod_sum = 0;
  std::uint64_t texts = 0, text_bytes = 0;
  std::uint64_t arrays = 0, array_sum = 0;
  std::uint64_t mixed = 0, mixed_sum = 0;
  std::uint64_t empties = 0, generics = 0;
  std::uint64_t bad = 0;  // contents that differ from what the sender put in
  std::uint64_t tree_nodes = 0, tree_leaves_with_text = 0;
  std::vector<std::uint64_t> broadcasts_from;  // by root
  std::uint64_t broadcast_bytes = 0;
};
thread_local tally seen;

char text_char(std::uint64_t source, std::uint64_t i, std::uint64_t k) {
  return static_cast<char>('a' + (source * 7 + i * 3 + k) % 26);
}
std::string make_text(std::uint64_t source, std::uint64_t i, std::size_t length) {
  std::string s(length, ' ');
  for (std::size_t k = 0; k < length; ++k) s[k] = text_char(source, i, k);
  return s;
}
bool text_ok(std::string_view s, std::uint64_t source, std::uint64_t i) {
  for (std::size_t k = 0; k < s.size(); ++k)
    if (s[k] != text_char(source, i, k)) return false;
  return true;
}

struct pod {
  std::uint64_t a;
  std::int32_t b;
  float c;
  std::array<std::uint16_t, 12> d;
};
static_assert(sizeof(pod) == 40);

void on_pod(active_messages&, const pod& p, std::uint64_t source) {
  ++seen.pods;
  seen.pod_sum += p.a;
  if (p.b != static_cast<std::int32_t>(source) || p.d[11] != static_cast<std::uint16_t>(p.a)) ++seen.bad;
}

std::size_t text_length(std::uint64_t i) { return (i * 37) % 1300; }  // small classes and chunks
std::size_t array_length(std::uint64_t i) { return (i * 13) % 70; }

// Every PE calls every PE `rounds` times with each handler kind.
void all_kinds_to_everyone(active_messages& am, std::uint64_t rounds) {
  context& ctx = am.ctx();
  const auto me = static_cast<std::uint64_t>(ctx.rank());
  for (std::uint64_t i = 0; i < rounds; ++i) {
    for (int d = 0; d < ctx.size(); ++d) {
      am.async(d, [](active_messages&, int v) {
        ++seen.ints;
        seen.int_sum += static_cast<std::uint64_t>(v);
      }, static_cast<int>(i));
      am.async(d, [](active_messages&, double x, std::uint16_t y) {
        ++seen.pairs;
        seen.pair_sum += x;
        if (y != 7) ++seen.bad;
      }, 0.5 * static_cast<double>(i), std::uint16_t{7});
      pod p{i, static_cast<std::int32_t>(me), 1.5f, {}};
      p.d[11] = static_cast<std::uint16_t>(i);
      am.async(d, &on_pod, p, me);
      am.async(d, [](active_messages&, std::uint64_t source, std::uint64_t index, const std::string& s) {
        ++seen.texts;
        seen.text_bytes += s.size();
        if (s.size() != text_length(index) || !text_ok(s, source, index)) ++seen.bad;
      }, me, i, make_text(me, i, text_length(i)));
      std::vector<std::uint64_t> values(array_length(i));
      std::iota(values.begin(), values.end(), i);
      am.async(d, [](active_messages&, std::span<const std::uint64_t> v, std::uint64_t first) {
        ++seen.arrays;
        for (std::size_t k = 0; k < v.size(); ++k) {
          seen.array_sum += v[k];
          if (v[k] != first + k) ++seen.bad;
        }
      }, values, i);
      // A vector received as std::vector, a literal as std::string_view, a char: three kinds at once.
      const std::vector<std::int16_t> shorts(i % 5, static_cast<std::int16_t>(-3));
      am.async(d, [](active_messages&, std::vector<std::int16_t> v, std::string_view tag, char c) {
        ++seen.mixed;
        for (const auto s : v) seen.mixed_sum += static_cast<std::uint64_t>(-s);
        if (tag != "tag" || c != 'z') ++seen.bad;
      }, shorts, "tag", 'z');
      am.async(d, [](active_messages&) { ++seen.empties; });
      am.async(d, [](auto&, auto v) { seen.generics += v; }, std::uint64_t{1});
    }
    if (i % 16 == 0) am.progress();
  }
}

void check_all_kinds(context& ctx, std::uint64_t rounds, std::uint64_t steps, const std::string& where) {
  const auto p = static_cast<std::uint64_t>(ctx.size());
  const std::uint64_t calls = steps * p * rounds;  // per kind, received by each PE
  const std::uint64_t index_sum = steps * p * (rounds * (rounds - 1) / 2);
  EXPECT_EQ(seen.bad, 0u) << where;
  EXPECT_EQ(seen.ints, calls) << where;
  EXPECT_EQ(seen.int_sum, index_sum) << where;
  EXPECT_EQ(seen.pairs, calls) << where;
  EXPECT_DOUBLE_EQ(seen.pair_sum, 0.5 * static_cast<double>(index_sum)) << where;
  EXPECT_EQ(seen.pods, calls) << where;
  EXPECT_EQ(seen.pod_sum, index_sum) << where;
  EXPECT_EQ(seen.texts, calls) << where;
  std::uint64_t text_bytes = 0, array_sum = 0, mixed_sum = 0;
  for (std::uint64_t i = 0; i < rounds; ++i) {
    text_bytes += text_length(i);
    for (std::size_t k = 0; k < array_length(i); ++k) array_sum += i + k;
    mixed_sum += 3 * (i % 5);
  }
  EXPECT_EQ(seen.text_bytes, steps * p * text_bytes) << where;
  EXPECT_EQ(seen.arrays, calls) << where;
  EXPECT_EQ(seen.array_sum, steps * p * array_sum) << where;
  EXPECT_EQ(seen.mixed, calls) << where;
  EXPECT_EQ(seen.mixed_sum, steps * p * mixed_sum) << where;
  EXPECT_EQ(seen.empties, calls) << where;
  EXPECT_EQ(seen.generics, calls) << where;
}

TEST(active_messages, mixed_handlers_and_argument_kinds_in_one_barrier) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              seen = tally{};
              active_messages am(ctx);
              constexpr std::uint64_t rounds = 60, steps = 2;
              for (std::uint64_t step = 0; step < steps; ++step) {
                all_kinds_to_everyone(am, rounds);
                am.barrier();
                check_all_kinds(ctx, rounds, step + 1, "default options, step " + std::to_string(step));
              }
            }),
            0);
}

TEST(active_messages, options_apply_to_every_streamer) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  struct variant {
                    std::size_t buffer;
                    int dims;
                    transit::routing route;
                  };
                  for (const variant v : {variant{1, 1, transit::routing::grid}, variant{7, 2, transit::routing::grid},
                                          variant{64, 2, transit::routing::node_aware},
                                          variant{16, 2, transit::routing::node_aware_advanced}}) {
                    seen = tally{};
                    transit::streamer_options o;
                    o.buffer_items = v.buffer;
                    o.route = v.route;
                    if (v.route == transit::routing::grid) {
                      o.grid = transit::virtual_grid::balanced(ctx.size(), v.dims);
                    }
                    active_messages am(ctx, o);
                    all_kinds_to_everyone(am, 20);
                    am.barrier();
                    check_all_kinds(ctx, 20, 1,
                                    "buffer " + std::to_string(v.buffer) + ", " + std::string(to_string(v.route)));
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

TEST(active_messages, broadcast_from_every_pe_reaches_every_pe_once) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              seen = tally{};
              seen.broadcasts_from.assign(ctx.size(), 0);
              transit::streamer_options o;
              o.grid = transit::virtual_grid::balanced(ctx.size(), 2);  // a tree with inner PEs
              o.buffer_items = 8;
              active_messages am(ctx, o);
              constexpr int per_root = 5;
              const std::array<std::size_t, 4> sizes = {0, 1, 300, 5000};
              for (int k = 0; k < per_root; ++k) {
                am.async_broadcast([](active_messages&, int root) { ++seen.broadcasts_from[root]; }, ctx.rank());
                for (const std::size_t n : sizes) {
                  am.async_broadcast([](active_messages&, std::uint64_t root, std::uint64_t index, std::string_view s) {
                    seen.broadcast_bytes += s.size();
                    if (!text_ok(s, root, index)) ++seen.bad;
                  }, static_cast<std::uint64_t>(ctx.rank()), static_cast<std::uint64_t>(k), make_text(ctx.rank(), k, n));
                }
              }
              am.barrier();
              EXPECT_EQ(seen.bad, 0u);
              for (int root = 0; root < ctx.size(); ++root) EXPECT_EQ(seen.broadcasts_from[root], 1u * per_root) << root;
              EXPECT_EQ(seen.broadcast_bytes, static_cast<std::uint64_t>(ctx.size()) * per_root * (0 + 1 + 300 + 5000));
            }),
            0);
}

int scatter(std::uint64_t id, int size) { return static_cast<int>((id * 0x9E3779B97F4A7C15ull >> 17) % size); }

// A tree of nested calls: each node of depth < max_depth calls `fanout` children on other PEs;
// every third child carries a text that needs chunks; at depth 1 a node also broadcasts.
constexpr std::uint64_t fanout = 3, max_depth = 5, roots = 2;

void tree_node(active_messages& am, std::uint64_t depth, std::uint64_t id) {
  ++seen.tree_nodes;
  if (depth == 1) am.async_broadcast([](active_messages&, int) { ++seen.broadcasts_from[0]; }, 0);
  if (depth == max_depth) return;
  for (std::uint64_t c = 0; c < fanout; ++c) {
    const std::uint64_t child = id * fanout + c + 1;
    const int dest = scatter(child, am.ctx().size());
    if (c == 2) {
      am.async(dest, [](active_messages& a, std::uint64_t d, std::uint64_t i, std::string_view s) {
        if (s.size() != 2000 || !text_ok(s, d, i)) ++seen.bad;
        ++seen.tree_leaves_with_text;
        tree_node(a, d, i);
      }, depth + 1, child, make_text(depth + 1, child, 2000));
    } else {
      am.async(dest, &tree_node, depth + 1, child);
    }
  }
}

TEST(active_messages, fan_out_trees_of_nested_calls_end_in_one_barrier) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              seen = tally{};
              seen.broadcasts_from.assign(ctx.size(), 0);
              active_messages am(ctx);
              for (std::uint64_t r = 0; r < roots; ++r) {
                const std::uint64_t id = static_cast<std::uint64_t>(ctx.rank()) * 1000 + r;
                am.async(scatter(id, ctx.size()), &tree_node, std::uint64_t{0}, id);
              }
              am.barrier();
              const auto p = static_cast<std::uint64_t>(ctx.size());
              std::uint64_t per_root = 0, level = 1, depth_one = fanout;
              for (std::uint64_t d = 0; d <= max_depth; ++d, level *= fanout) per_root += level;
              EXPECT_EQ(ctx.allreduce(seen.tree_nodes, reduce_op::sum), per_root * roots * p);
              // Children numbered 2 mod 3 carried a text: a third of all nodes but the roots.
              EXPECT_EQ(ctx.allreduce(seen.tree_leaves_with_text, reduce_op::sum), (per_root - 1) / 3 * roots * p);
              // Every depth-1 node broadcast once: each PE saw all of them.
              EXPECT_EQ(seen.broadcasts_from[0], depth_one * roots * p);
              EXPECT_EQ(ctx.allreduce(seen.bad, reduce_op::sum), 0u);
            }),
            0);
}

struct deliberate : std::runtime_error {
  deliberate() : std::runtime_error("deliberate failure in a handler") {}
};
thread_local std::uint64_t thrown = 0;

void maybe_throw(active_messages&, std::uint64_t i, std::string_view s) {
  ++seen.texts;
  seen.text_bytes += s.size();
  if (i % 7 == 3) {
    ++thrown;
    throw deliberate();
  }
}

// A handler's exception reaches the caller of the call that ran it; every other call still runs
// exactly once, and an interrupted barrier resumes.
TEST(active_messages, handler_exceptions_reach_the_caller_and_lose_nothing) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              seen = tally{};
              thrown = 0;
              transit::streamer_options o;
              o.buffer_items = 4;  // buffers fill often: async polls and may run handlers
              active_messages am(ctx, o);
              std::uint64_t caught = 0;
              const auto guarded = [&](auto&& call) {
                try {
                  call();
                } catch (const deliberate&) {
                  ++caught;
                }
              };
              constexpr std::uint64_t rounds = 40;
              for (std::uint64_t i = 0; i < rounds; ++i) {
                for (int d = 0; d < ctx.size(); ++d) {
                  // Short texts and texts of several chunks (sent whole even if a handler throws).
                  guarded([&] { am.async(d, &maybe_throw, i, std::string(i % 2 == 0 ? 10 : 3000, 'q')); });
                }
                guarded([&] { am.progress(); });
              }
              for (;;) {
                try {
                  am.barrier();
                  break;
                } catch (const deliberate&) {
                  ++caught;
                }
              }
              EXPECT_EQ(caught, thrown);
              const auto p = static_cast<std::uint64_t>(ctx.size());
              EXPECT_EQ(seen.texts, rounds * p);
              EXPECT_EQ(seen.text_bytes, p * (rounds / 2) * (10 + 3000));
            }),
            0);
}

TEST(active_messages, misuse_is_refused_with_a_message) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              active_messages am(ctx);
              try {
                am.async(ctx.size(), [](active_messages&) {});
                ADD_FAILURE() << "no exception for a destination outside the job";
              } catch (const std::out_of_range& e) {
                EXPECT_NE(std::string(e.what()).find("destination PE " + std::to_string(ctx.size()) + " is outside"),
                          std::string::npos)
                    << e.what();
              }
              EXPECT_THROW(am.async(-1, [](active_messages&) {}), std::out_of_range);
              // From a handler: barrier is refused, progress does nothing.
              am.async(ctx.rank(), [](active_messages& a) {
                EXPECT_FALSE(a.progress());
                try {
                  a.barrier();
                  ADD_FAILURE() << "barrier from a handler";
                } catch (const std::logic_error& e) {
                  EXPECT_NE(std::string(e.what()).find("barrier called from a handler"), std::string::npos) << e.what();
                  ++seen.empties;
                }
              });
              seen.empties = 0;
              am.barrier();
              EXPECT_EQ(seen.empties, 1u);
            }),
            0);
}

}  // namespace
