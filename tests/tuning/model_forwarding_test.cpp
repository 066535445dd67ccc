// The cost model's per-item charge along a route (docs/tuning.md, "The cost model"): an item costs
// half of per_item at its source, half at every PE that forwards it (one copy into its next
// buffer) and half where it is delivered: (hops + 1) halves. Before 2026-11-26 every link charged
// both halves, so a forwarding PE paid a whole per_item, and the simulated BG/Q all-to-all
// (bench/sim/model.sh) ran 1.23-1.85x faster than predicted; charged as here, 0.97-1.42x. And,
// with the job's physical links, the busiest link of each phase (tuning_model_links).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "transit/topology/topology_manager.hpp"
#include "transit/tuning/model.hpp"

namespace {

using namespace transit;

machine_costs item_costs_only(double per_item) {
  machine_costs c;
  c.intra = c.inter = {0.0, 0.0, per_item};
  c.pes_per_core = 1;
  return c;
}

machine_costs byte_costs_only(double beta) {
  machine_costs c;
  c.intra = c.inter = {0.0, beta, 0.0};
  c.pes_per_core = 1;
  return c;
}

step_workload one_item(int pes, int from, int to) {
  step_workload w;
  w.item_bytes = 8;
  w.pattern = destinations::matrix;
  w.matrix.assign(static_cast<std::size_t>(pes) * pes, 0);
  w.matrix[static_cast<std::size_t>(from) * pes + to] = 1;
  return w;
}

// 0 -> 3 on a 2x2 grid crosses two links through a forwarding PE: each of the three PEs pays half.
TEST(tuning_model_forwarding, a_forwarding_pe_pays_one_half) {
  const machine m(4);
  const double c = 1e-6;
  const auto p = predict_step(m, virtual_grid({2, 2}, 4), routing::grid, 16, one_item(4, 0, 3), item_costs_only(c));
  EXPECT_EQ(p.item_hops, 2u);
  EXPECT_EQ(p.items_forwarded, 1u);
  EXPECT_DOUBLE_EQ(p.item_seconds, c / 2);  // the busiest PE: source, forwarder and destination alike
}

// Direct: one link, source and destination pay half each, what calibration measures per item.
TEST(tuning_model_forwarding, a_direct_item_costs_per_item_in_all) {
  const machine m(4);
  const double c = 1e-6;
  const auto p = predict_step(m, virtual_grid({4}, 4), routing::grid, 16, one_item(4, 0, 3), item_costs_only(c));
  EXPECT_EQ(p.items_forwarded, 0u);
  EXPECT_DOUBLE_EQ(p.item_seconds, c / 2);
}

// On a 2x2x2 grid a route of three links pays (3 + 1) halves in all, not 2 x 3: the step's
// item-cost part (seconds less flush, one PE per core, nothing else charged) grows with the
// busiest PE, which is never charged more than one half per item it touches.
TEST(tuning_model_forwarding, halves_grow_as_hops_plus_one) {
  const machine m(8);
  const double c = 1e-6;
  // every PE sends one item to the PE opposite on the cube: 3 hops, 2 forwards each
  step_workload w;
  w.item_bytes = 8;
  w.pattern = destinations::matrix;
  w.matrix.assign(64, 0);
  for (int s = 0; s < 8; ++s) w.matrix[static_cast<std::size_t>(s) * 8 + (7 - s)] = 1;
  const auto p = predict_step(m, virtual_grid({2, 2, 2}, 8), routing::grid, 16, w, item_costs_only(c));
  EXPECT_EQ(p.item_hops, 24u);
  EXPECT_EQ(p.items_forwarded, 16u);
  // each PE: its own item's copy, two forwards of others' items, one delivery: 4 halves
  EXPECT_DOUBLE_EQ(p.item_seconds, 4 * c / 2);
  EXPECT_DOUBLE_EQ(p.seconds - p.flush_seconds, 4 * c / 2);
}

}  // namespace

namespace {

constexpr double link_beta = 1e-9;

// A step on the direct grid of `nodes` nodes of one PE joined in a ring, only bytes costing
// anything; with the ring's links, or without any.
step_prediction on_ring(int nodes, const step_workload& w, bool with_links = true) {
  const machine m = machine::uniform(nodes, 1);
  const topology_manager ring(physical_topology::parse("torus:" + std::to_string(nodes) + ":1"), nodes);
  return predict_step(m, virtual_grid({nodes}, nodes), routing::grid, 16, w, byte_costs_only(link_beta),
                      with_links ? &ring : nullptr);
}

}  // namespace

// With the job's physical links (docs/tuning.md, "The links"): each phase adds the bytes of its
// busiest directed link times beta, over the out-links per PE times the messages per link; the
// fill-and-flush term is dropped. Direct grid on a ring of 4 nodes, every out-link sends its
// final message (a 16-byte header; 24 bytes with one 8-byte item), items 0 -> 2 and 1 -> 2.
TEST(tuning_model_links, the_busiest_directed_link_of_each_phase_adds_its_exposed_share) {
  step_workload w = one_item(4, 0, 2);
  w.matrix[1 * 4 + 2] = 1;
  const auto p = on_ring(4, w);
  // Cable 1 up (node 1 to node 2) carries 1 -> 2 (24 bytes), 1 -> 3 (16) and 0 -> 2 (24: half
  // the ring, taken up): 64 bytes, the most of any link and direction; 3 out-links per PE, 1
  // message each.
  EXPECT_DOUBLE_EQ(p.link_seconds, 64 * link_beta / 3);
  EXPECT_EQ(p.flush_seconds, 0.0);
  EXPECT_DOUBLE_EQ(p.seconds, p.byte_seconds + p.link_seconds);  // one PE per core: T_run = busiest PE

  const auto without = on_ring(4, w, false);
  EXPECT_EQ(without.link_seconds, 0.0);
  EXPECT_GT(without.flush_seconds, 0.0);
  EXPECT_EQ(without.messages, p.messages);  // the counts do not depend on the links
}

// A ring of two: 0 -> 1 and 1 -> 0 travel the two directions, which do not share bandwidth.
TEST(tuning_model_links, opposite_directions_do_not_contend) {
  step_workload w = one_item(2, 0, 1);
  w.matrix[1 * 2 + 0] = 1;
  EXPECT_DOUBLE_EQ(on_ring(2, w).link_seconds, 24 * link_beta);
  // More messages per link leave less of the link exposed: 40 items in buffers of 16 are 3
  // messages, (16 + 8 x 16) x 2 + (16 + 8 x 8) = 368 bytes each way, a third of it exposed.
  w.matrix[0 * 2 + 1] = 40;
  w.matrix[1 * 2 + 0] = 40;
  EXPECT_DOUBLE_EQ(on_ring(2, w).link_seconds, 368 * link_beta / 3);
}

TEST(tuning_model_links, a_network_of_other_pes_is_refused) {
  const machine m = machine::uniform(4, 1);
  const topology_manager small(physical_topology::parse("torus:2:1"), 2);
  std::string message;
  try {
    predict_step(m, virtual_grid({4}, 4), routing::grid, 16, one_item(4, 0, 2), machine_costs{}, &small);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "PEs of the network for the model: got '2', expected 4, the grid's PEs");
}
