// put_regions, get_regions and put_strided with every protocol (and, run with TRANSIT_PROTOCOL=random,
// automatic resolving to a random one per call), over the polling and helper engines and, on mpi,
// the MPI-RMA engine: regions within one owner, across owners, on block boundaries, overlapping,
// of one element and of none; every element checked.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "transit/transit.hpp"

namespace {

using namespace transit;
using transit::testing::run_spmd;

std::vector<one_sided_options> engines(const context& ctx) {
  std::vector<one_sided_options> out;
  for (const std::size_t buffer : {std::size_t{256}, std::size_t{16384}}) {  // 256: packs of a few regions
    one_sided_options polling;
    polling.buffer_bytes = buffer;
    out.push_back(polling);
  }
  // With PE threads in MPI ranks (--transit-threads-per-rank) mpi_rma's window refuses; the helper
  // is then the rank's communication thread (or a thread of its own with --transit-comm-thread=0).
  const bool one_pe_per_rank = ctx.options().threads_per_rank == 1;
  one_sided_options helper;
  helper.topology = request_topology::fcg;
  helper.progress = progress_mode::helper_thread;
  out.push_back(helper);
  if (ctx.backend() == "mpi" && one_pe_per_rank) {
    one_sided_options rma;
    rma.topology = request_topology::mpi_rma;
    out.push_back(rma);
  }
  return out;
}

std::string describe(const context& ctx, const one_sided_options& o, transfer_protocol p) {
  return std::string(to_string(p)) + " over " + std::string(to_string(o.topology)) + "/" +
         std::string(to_string(o.progress)) + "/" + std::to_string(o.buffer_bytes) + "B on " +
         std::to_string(ctx.size()) + " PEs";
}

constexpr transfer_protocol all_protocols[] = {transfer_protocol::blocking, transfer_protocol::pipelined,
                                               transfer_protocol::packed, transfer_protocol::automatic};

/// The regions a writer uses on an array of n elements spread over P PEs: block boundaries, one
/// element, none, within one owner, across every owner, overlapping.
std::vector<region> test_regions(std::size_t n, std::size_t pes, int round) {
  std::vector<region> r;
  const std::size_t base = n / pes, extra = n % pes;
  for (std::size_t pe = 1; pe < pes; ++pe) {
    const std::size_t begin = pe * base + std::min(pe, extra);
    r.push_back({begin - 1, 2});  // straddles the boundary
    r.push_back({begin, 1});      // one element, first of a block
  }
  r.push_back({3, 0});                                    // none
  r.push_back({1, base > 2 ? base - 2 : 1});              // within owner 0
  r.push_back({static_cast<std::size_t>(round) % 5, n - 5});  // across every owner
  r.push_back({n / 2, n / 4 + 1});                        // overlaps the previous one
  r.push_back({n - 1, 1});                                // the last element
  for (std::size_t i = 0; i < 40; ++i) r.push_back({(i * 7 + static_cast<std::size_t>(round)) % (n - 3), 3});
  return r;
}

TEST(protocols, put_and_get_regions_every_protocol) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              const std::size_t pes = static_cast<std::size_t>(ctx.size());
              for (const auto& o : engines(ctx)) {
                for (const auto p : all_protocols) {
                  const std::size_t n = 29 * pes + 5;
                  global_array<std::int64_t> a(ctx, n, o);
                  std::vector<std::int64_t> mirror(n, 0);  // what every PE expects
                  for (int writer = 0; writer < ctx.size(); ++writer) {
                    const auto regions = test_regions(n, pes, writer);
                    std::vector<std::int64_t> values;
                    for (std::size_t k = 0; k < regions.size(); ++k)
                      for (std::size_t e = 0; e < regions[k].count; ++e) {
                        const auto v = static_cast<std::int64_t>(writer * 1000000 + static_cast<int>(k) * 1000 +
                                                                 static_cast<int>(e) + 1);
                        values.push_back(v);
                        mirror[regions[k].index + e] = v;  // later regions win
                      }
                    if (ctx.rank() == writer) a.put_regions(regions, values, p);
                    a.sync();
                    for (std::size_t k = 0; k < a.local().size(); ++k)
                      ASSERT_EQ(a.local()[k], mirror[a.local_begin() + k])
                          << describe(ctx, o, p) << " writer " << writer << " element " << a.local_begin() + k;
                    a.sync();  // every PE has checked before the next writer starts
                  }
                  // Everyone reads regions back (and the whole array through one-element regions).
                  const auto regions = test_regions(n, pes, ctx.rank() + 1);
                  std::size_t total = 0;
                  for (const auto& r : regions) total += r.count;
                  std::vector<std::int64_t> out(total, -1);
                  a.get_regions(regions, out, p);
                  std::size_t at = 0;
                  for (std::size_t k = 0; k < regions.size(); ++k)
                    for (std::size_t e = 0; e < regions[k].count; ++e, ++at)
                      ASSERT_EQ(out[at], mirror[regions[k].index + e]) << describe(ctx, o, p) << " region " << k;
                  std::vector<region> singles(n);
                  for (std::size_t i = 0; i < n; ++i) singles[i] = {n - 1 - i, 1};
                  std::vector<std::int64_t> reversed(n, -1);
                  a.get_regions(singles, reversed, p);
                  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(reversed[i], mirror[n - 1 - i]) << describe(ctx, o, p);
                  a.sync();
                }
              }
            }),
            0);
}

struct triple {
  std::int32_t a, b, c;
  bool operator==(const triple&) const = default;
};

TEST(protocols, strided_faces_with_stride_equal_to_count_and_larger) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              const std::size_t pes = static_cast<std::size_t>(ctx.size());
              for (const auto& o : engines(ctx)) {
                for (const auto p : all_protocols) {
                  const std::size_t n = 41 * pes + 3;
                  global_array<triple> a(ctx, n, o);  // 12-byte elements: records unaligned to 8
                  std::vector<triple> mirror(n, triple{0, 0, 0});
                  const std::size_t count = 3, stride = 3, blocks = n / 3;  // stride == count: contiguous
                  const std::size_t wide_count = 2, wide_stride = 7, wide_blocks = (n - 2) / 7 + 1;
                  for (int writer = 0; writer < ctx.size(); ++writer) {
                    const bool contiguous = writer % 2 == 0;
                    const std::size_t c = contiguous ? count : wide_count;
                    const std::size_t s = contiguous ? stride : wide_stride;
                    const std::size_t b = contiguous ? blocks : wide_blocks;
                    std::vector<triple> values(c * b);
                    for (std::size_t i = 0; i < values.size(); ++i) {
                      values[i] = triple{writer, static_cast<std::int32_t>(i), -1};
                      mirror[(i / c) * s + i % c] = values[i];
                    }
                    if (ctx.rank() == writer) a.put_strided(0, c, s, b, values, p);
                    a.sync();
                    for (std::size_t k = 0; k < a.local().size(); ++k)
                      ASSERT_EQ(a.local()[k], mirror[a.local_begin() + k])
                          << describe(ctx, o, p) << " writer " << writer << " element " << a.local_begin() + k;
                    a.sync();  // every PE has checked before the next writer starts
                  }
                }
              }
            }),
            0);
}

TEST(protocols, zero_regions_and_empty_regions_do_nothing) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              global_array<std::int64_t> a(ctx, 10);
              for (const auto p : all_protocols) {
                a.put_regions({}, {}, p);
                a.get_regions({}, {}, p);
                const std::vector<region> empty = {{0, 0}, {10, 0}, {4, 0}};
                a.put_regions(empty, {}, p);
                a.get_regions(empty, {}, p);
                a.put_strided(2, 0, 5, 2, {}, p);
                a.put_strided(2, 1, 1, 0, {}, p);
              }
              a.sync();
              for (const auto v : a.local()) ASSERT_EQ(v, 0);
            }),
            0);
}

TEST(protocols, bad_input_names_the_value) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              global_array<std::int64_t> a(ctx, 10);
              const std::vector<std::int64_t> three(3, 1);
              const std::vector<region> past_end = {{1, 1}, {8, 3}};
              try {
                a.put_regions(past_end, three);
                ADD_FAILURE() << "a region past the end was accepted";
              } catch (const std::out_of_range& e) {
                EXPECT_NE(std::string(e.what()).find("region 1 [8, 8 + 3)"), std::string::npos) << e.what();
              } catch (const std::exception& e) {
                ADD_FAILURE() << "wrong exception: " << e.what();
              }
              const std::vector<region> two = {{1, 1}, {4, 1}};
              EXPECT_THROW(a.put_regions(two, three), std::invalid_argument);
              std::vector<std::int64_t> out(1);
              EXPECT_THROW(a.get_regions(two, out), std::invalid_argument);
              try {
                a.put_strided(0, 3, 2, 1, three);
                ADD_FAILURE() << "a stride below count was accepted";
              } catch (const std::invalid_argument& e) {
                EXPECT_NE(std::string(e.what()).find("stride 2 is less than count 3"), std::string::npos) << e.what();
              }
              EXPECT_NO_THROW(a.put_strided(0, 1, 4, 3, three));  // 0, 4, 8: fits
              EXPECT_THROW(a.put_strided(2, 1, 4, 3, three), std::out_of_range);  // 2, 6, 10: past the end
              EXPECT_THROW(a.put_strided(0, 1, std::size_t{1} << 62, 3, three), std::out_of_range);
              EXPECT_THROW((void)a.chosen_protocol(8, 1, ctx.size()), std::out_of_range);
              EXPECT_THROW((void)a.chosen_protocol(8, 1, -1), std::out_of_range);
              a.sync();
            }),
            0);
}

// The protocols differ on the wire: 64 one-element regions to another PE are 64 request pieces
// pipelined, a handful packed (several regions per request), and as many blocking as pipelined.
// Nodes of one PE: inside a node a PE applies regions itself, through shared memory, with no
// request at all (docs/one_sided.md, "Inside a node").
TEST(protocols, packed_sends_fewer_requests_than_pipelined) {
  if (std::getenv("TRANSIT_PROTOCOL") != nullptr) GTEST_SKIP() << "explicit protocols only";
  EXPECT_EQ(run_spmd([](context& ctx) {
              if (ctx.size() < 2) return;
              const std::size_t per_pe = 200;
              global_array<std::int64_t> a(ctx, per_pe * static_cast<std::size_t>(ctx.size()));
              const std::size_t next = static_cast<std::size_t>((ctx.rank() + 1) % ctx.size());
              std::vector<region> regions;
              for (std::size_t i = 0; i < 64; ++i) regions.push_back({next * per_pe + 3 * i, 1});
              const std::vector<std::int64_t> values(64, 7);
              std::uint64_t sent[3];
              int k = 0;
              for (const auto p : {transfer_protocol::blocking, transfer_protocol::pipelined, transfer_protocol::packed}) {
                const auto before = a.stats().requests_sent;
                a.put_regions(regions, values, p);
                sent[k++] = a.stats().requests_sent - before;
              }
              EXPECT_EQ(sent[0], 64u);
              EXPECT_EQ(sent[1], 64u);
              EXPECT_LE(sent[2], 4u);
              EXPECT_GE(sent[2], 1u);
              a.sync();
            }, {"--transit-pes-per-node=1"}),
            0);
}

// Polling mode packs regions up to a quarter of 16 request buffers into one packed request, sent
// as a message of its own size when larger than a buffer: 48 regions of 8 KiB (half a default
// buffer each) go in two packed requests instead of 48 pipelined ones, and a region above the
// packed limit goes pipelined in buffer-sized pieces (the AMSize rule); every element checked,
// written with put_regions and read back with get_regions. Nodes of one PE, so that the
// neighbour's regions travel as requests.
TEST(protocols, packed_carries_regions_beyond_one_buffer_in_one_request) {
  if (std::getenv("TRANSIT_PROTOCOL") != nullptr) GTEST_SKIP() << "explicit protocols only";
  EXPECT_EQ(run_spmd([](context& ctx) {
              constexpr std::size_t region_elements = 1024, regions = 48, large_elements = 10240;
              const std::size_t per_pe = 2 * region_elements * regions + large_elements;
              global_array<std::int64_t> a(ctx, per_pe * static_cast<std::size_t>(ctx.size()));
              const std::size_t limit = a.packed_region_limit();
              ASSERT_GE(limit, 4 * one_sided_options{}.buffer_bytes) << "polling mode packs regions above one buffer";
              ASSERT_LT(large_elements * sizeof(std::int64_t), 2 * limit);
              const std::size_t next = static_cast<std::size_t>((ctx.rank() + 1) % ctx.size());
              const std::size_t begin = next * per_pe;
              for (const auto p : {transfer_protocol::pipelined, transfer_protocol::packed}) {
                for (const bool with_large : {false, true}) {
                  std::vector<region> r;
                  for (std::size_t i = 0; i < regions; ++i) r.push_back({begin + 2 * region_elements * i, region_elements});
                  if (with_large) r.push_back({begin + 2 * region_elements * regions, large_elements});
                  std::size_t total = 0;
                  for (const auto& x : r) total += x.count;
                  std::vector<std::int64_t> values(total);
                  for (std::size_t i = 0; i < total; ++i)
                    values[i] = static_cast<std::int64_t>(i * 7919 + (with_large ? 5 : 3) + (p == transfer_protocol::packed ? 1 : 0) +
                                                          1000000 * static_cast<std::size_t>(ctx.rank()));
                  const auto before = a.stats().requests_sent;
                  a.put_regions(r, values, p);
                  const auto sent = a.stats().requests_sent - before;
                  if (ctx.size() > 1 && p == transfer_protocol::packed) {
                    // 48 x (8 KiB + 16 B) in requests of at most 16 buffers: two; the large region
                    // in ceil(80 KiB / one buffer's piece) = 6 pieces.
                    EXPECT_EQ(sent, with_large ? 2u + 6u : 2u) << to_string(p);
                  } else if (ctx.size() > 1) {
                    EXPECT_GE(sent, with_large ? regions + 6 : regions) << to_string(p);
                  }
                  a.sync();
                  // The owner sees every element of every region.
                  const int from = (ctx.rank() + ctx.size() - 1) % ctx.size();
                  std::size_t at = 0;
                  for (const auto& x : r) {
                    for (std::size_t e = 0; e < x.count; ++e, ++at) {
                      const std::size_t mine = x.index - begin + e;
                      ASSERT_EQ(a.local()[mine], static_cast<std::int64_t>(at * 7919 + (with_large ? 5 : 3) +
                                                                           (p == transfer_protocol::packed ? 1 : 0) +
                                                                           1000000 * static_cast<std::size_t>(from)))
                          << to_string(p) << " element " << mine;
                    }
                  }
                  a.sync();
                  std::vector<std::int64_t> back(total, -1);
                  a.get_regions(r, back, p);
                  for (std::size_t i = 0; i < total; ++i) ASSERT_EQ(back[i], values[i]) << to_string(p) << " value " << i;
                  a.sync();
                }
              }
            }, {"--transit-pes-per-node=1"}),
            0);
}

// Under TRANSIT_PROTOCOL=blocking|pipelined|packed, automatic (and chosen_protocol) takes that one.
TEST(protocols, transit_protocol_forces_the_choice) {
  const char* env = std::getenv("TRANSIT_PROTOCOL");
  const std::string forced = env != nullptr ? env : "";
  EXPECT_EQ(run_spmd([&](context& ctx) {
              global_array<std::int64_t> a(ctx, 10);
              for (int target = 0; target < ctx.size(); ++target) {
                const auto chosen = a.chosen_protocol(64, 16, target);
                EXPECT_NE(chosen, transfer_protocol::automatic);
                if (forced == "blocking" || forced == "pipelined" || forced == "packed") {
                  EXPECT_EQ(to_string(chosen), forced);
                }
              }
            }),
            0);
}

}  // namespace
