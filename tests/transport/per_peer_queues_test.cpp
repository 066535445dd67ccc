// The mpi transport's per-peer queues (backlog, large messages arriving) are made on first use and
// held by peer: a queue (or even a pointer) for every peer made each rank hold O(P), 20 GB for a
// 4096-rank job simulated in one process (docs/simulation.md).
#include <gtest/gtest.h>

#include "transport/mpi/queues.hpp"

namespace {

using transit::detail::per_peer_queues;

TEST(per_peer_queues, peers_never_queued_to_have_no_queue) {
  per_peer_queues<int> q;
  for (int p = 0; p < 4096; ++p) EXPECT_TRUE(q.empty(p));
  EXPECT_EQ(q.made(), 0u);
  q[17].push_back(1);
  q[17].push_back(2);
  q[4095].push_back(3);
  EXPECT_EQ(q.made(), 2u);
  EXPECT_FALSE(q.empty(17));
  EXPECT_TRUE(q.empty(18));
  EXPECT_EQ(q[17].front(), 1);
  q[17].pop_front();
  q[17].pop_front();
  EXPECT_TRUE(q.empty(17));
  EXPECT_EQ(q[4095].back(), 3);
  int seen = 0;
  q.for_each([&](int peer, std::deque<int>& queue) {
    EXPECT_TRUE(peer == 17 || peer == 4095);
    seen += static_cast<int>(queue.size()) + 1;
  });
  EXPECT_EQ(seen, 3);  // 17 (empty again) and 4095 (one item)
}

}  // namespace
