// The progress line of the transit command (tools/transit/progress.hpp): its text and estimate,
// when it is on, and what it writes (drawn in place, erased whole, nothing when off).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "progress.hpp"

namespace {

using transit::cli::progress;

TEST(ProgressFormat, CountsTheUnitRunningNowAndEstimatesTheRest) {
  // Two of ten runs took 4 s: eight more at 2 s each.
  EXPECT_EQ(progress::format("bench histogram", "run", 2, 10, "", 4.0),
            "bench histogram: run 3/10, 4.0 s, ~16 s left");
  EXPECT_EQ(progress::format("calibrate streamer", "step", 5, 12, "intra-node curve, 4 KiB", 2.5),
            "calibrate streamer: step 6/12 (intra-node curve, 4 KiB), 2.5 s, ~4 s left");
}

TEST(ProgressFormat, NoEstimateBeforeTheFirstUnitNorAfterTheLast) {
  EXPECT_EQ(progress::format("map openatom", "mapper", 0, 4, "block", 0.01), "map openatom: mapper 1/4 (block), 0.0 s");
  EXPECT_EQ(progress::format("bench phold", "run", 3, 3, "", 75), "bench phold: run 3/3, 75 s");
}

TEST(ProgressFormat, SimulatedRunsShowBothClocks) {
  EXPECT_EQ(progress::format("bench histogram", "run", 0, 1, "", 12.4, 0.52),
            "bench histogram: run 1/1, simulated 0.5 s in 12 s real");
  EXPECT_EQ(progress::format("bench histogram", "run", 1, 2, "", 300, 2),
            "bench histogram: run 2/2, simulated 2.0 s in 5.0 min real, ~5 min left");
}

TEST(ProgressFormat, WhatIsLeftInUnitsAPersonReads) {
  EXPECT_EQ(progress::left_text(0.2), "~1 s left");
  EXPECT_EQ(progress::left_text(42.4), "~42 s left");
  EXPECT_EQ(progress::left_text(600), "~10 min left");
  EXPECT_EQ(progress::left_text(3 * 3600), "~3.0 h left");
  EXPECT_EQ(progress::left_text(-5), "~1 s left");
}

TEST(ProgressChoice, OnlyOnATerminalOnTheFirstPeWithoutQuiet) {
  using mode = progress::mode;
  EXPECT_EQ(progress::choose(true, false, true, nullptr), mode::line);
  EXPECT_EQ(progress::choose(true, false, false, nullptr), mode::off);  // a pipe or a file
  EXPECT_EQ(progress::choose(true, true, true, nullptr), mode::off);    // --quiet
  EXPECT_EQ(progress::choose(false, false, true, nullptr), mode::off);  // not PE 0
  EXPECT_EQ(progress::choose(true, false, true, ""), mode::line);
  // scripts/simulate reads the lines through a pipe.
  EXPECT_EQ(progress::choose(true, false, false, "lines"), mode::lines);
  EXPECT_EQ(progress::choose(true, true, false, "lines"), mode::off);
  EXPECT_EQ(progress::choose(false, false, false, "lines"), mode::off);
}

/// What a progress writes, through a memory stream.
struct captured {
  char* data = nullptr;
  std::size_t size = 0;
  std::FILE* file = open_memstream(&data, &size);
  ~captured() {
    if (file != nullptr) std::fclose(file);
    std::free(data);
  }
  std::string text() {
    std::fflush(file);
    return std::string(data, size);
  }
};

TEST(ProgressLine, DrawsInPlaceAndErasesItselfWhole) {
  captured out;
  ASSERT_NE(out.file, nullptr);
  {
    progress line("bench histogram", "run", progress::mode::line, out.file);
    line.update(0, 3);
    const std::string drawn = out.text();
    EXPECT_EQ(drawn.rfind("\rbench histogram: run 1/3, ", 0), 0u) << drawn;
    EXPECT_EQ(drawn.find('\n'), std::string::npos);
    line.update(1, 3);  // within a quarter second of the first: not drawn again
    EXPECT_EQ(out.text(), drawn);
    line.clear();
    const std::string cleared = out.text().substr(drawn.size());
    // Back to the line's start, spaces over all of it, back again: the command's output that
    // follows starts on a clean line.
    std::string erase(drawn.size() + 1, ' ');
    erase.front() = erase.back() = '\r';
    EXPECT_EQ(cleared, erase);
    line.update(2, 3);  // drawn at once after a clear
    EXPECT_NE(out.text().find("run 3/3"), std::string::npos);
  }
  // The destructor erased the last line.
  const std::string all = out.text();
  EXPECT_EQ(all.back(), '\r');
  EXPECT_EQ(all.find('\n'), std::string::npos);
}

TEST(ProgressLine, OffWritesNothing) {
  captured out;
  ASSERT_NE(out.file, nullptr);
  {
    progress line("bench histogram", "run", progress::mode::off, out.file);
    EXPECT_FALSE(line.on());
    line.update(0, 3);
    line.tick();
    line.clear();
  }
  EXPECT_EQ(out.text(), "");
}

TEST(ProgressLine, LinesModeWritesWholeLines) {
  captured out;
  ASSERT_NE(out.file, nullptr);
  {
    progress line("bench histogram", "run", progress::mode::lines, out.file);
    line.update(0, 2);
    line.update(1, 2);  // too soon for another line
    line.clear();
  }
  const std::string all = out.text();
  EXPECT_EQ(all.rfind("transit progress: bench histogram: run 1/2, ", 0), 0u) << all;
  EXPECT_EQ(all.find('\r'), std::string::npos);
  EXPECT_EQ(all.back(), '\n');
  EXPECT_EQ(all.find('\n'), all.size() - 1);
}

}  // namespace
