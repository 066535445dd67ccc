// The polling back-off's policy (core/backoff.hpp): spin, then yield, then sleep; but a PE whose
// own sends are pending yields and never sleeps (an mpi rendezvous moves only while both sides
// poll, so a napping sender stalls its receiver).
#include <gtest/gtest.h>

#include "core/backoff.hpp"

namespace {

using transit::detail::backoff;
constexpr int before_sleeping = backoff::spin_rounds + backoff::yield_rounds;

TEST(backoff, without_pending_sends_it_sleeps_once_spinning_and_yielding_are_over) {
  backoff pause;
  for (int i = 0; i < before_sleeping; ++i) {
    EXPECT_EQ(pause.past_spinning(), i >= backoff::spin_rounds) << "round " << i;
    pause.idle(false);
    EXPECT_FALSE(pause.sleeping()) << "round " << i;
  }
  pause.idle(false);
  EXPECT_TRUE(pause.sleeping());
  pause.idle(false);
  EXPECT_TRUE(pause.sleeping());
  pause.reset();
  EXPECT_FALSE(pause.sleeping());
  EXPECT_FALSE(pause.past_spinning());
}

TEST(backoff, with_pending_sends_it_yields_but_never_sleeps) {
  backoff pause;
  for (int i = 0; i < 20 * before_sleeping; ++i) {
    pause.idle(true);
    ASSERT_FALSE(pause.sleeping()) << "round " << i;
  }
  // Still polling often enough for the watchdog to read its clock.
  EXPECT_TRUE(pause.past_spinning());
  // Once the sends complete, a PE idle this long sleeps at its next idle round.
  pause.idle(false);
  EXPECT_TRUE(pause.sleeping());
  // And sends pending again stop the naps at once, without a reset.
  pause.idle(true);
  EXPECT_FALSE(pause.sleeping());
}

TEST(backoff, sends_pending_while_still_spinning_change_nothing) {
  backoff with, without;
  for (int i = 0; i < backoff::spin_rounds; ++i) {
    with.idle(true);
    without.idle(false);
    EXPECT_EQ(with.past_spinning(), without.past_spinning()) << "round " << i;
    EXPECT_FALSE(with.sleeping());
  }
}

}  // namespace
