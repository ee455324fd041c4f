// The progress lines of long commands when their output is not a terminal (a log file, nohup):
// one every 10 % of the work, and one at least every `quiet_limit` in between, so that a run of
// many hours shows in its log that it is alive.

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "terminal_progress.h"

namespace {

std::vector<std::string> lines_written_to(std::FILE* file) {
  std::rewind(file);
  std::vector<std::string> lines;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, file)) lines.emplace_back(buffer);
  return lines;
}

TEST(TerminalProgress, OffATerminalWritesALineEveryTenthOfTheWork) {
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  npe::cli::TerminalProgress bar("train x", 100, 0, log);  // quiet limit: minutes
  for (int step = 1; step <= 100; ++step) bar.update(step, "loss 1");
  bar.finish();
  const auto lines = lines_written_to(log);
  std::fclose(log);
  // The first update, then steps 10, 20, ..., 100.
  ASSERT_EQ(lines.size(), 11U);
  EXPECT_EQ(lines.front().rfind("train x   1%  1/100", 0), 0U) << lines.front();
  EXPECT_EQ(lines[1].rfind("train x  10%  10/100", 0), 0U) << lines[1];
  EXPECT_EQ(lines.back().rfind("train x 100%  100/100", 0), 0U) << lines.back();
  EXPECT_NE(lines.back().find("loss 1"), std::string::npos) << lines.back();
}

TEST(TerminalProgress, OffATerminalWritesALineWhenQuietForTooLong) {
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  // A quiet limit of zero: every update is past it, so every update writes its line.
  npe::cli::TerminalProgress bar("train x", 1000, 500, log, std::chrono::seconds(0));
  for (int step = 501; step <= 520; ++step) bar.update(step);
  const auto lines = lines_written_to(log);
  std::fclose(log);
  ASSERT_EQ(lines.size(), 20U);
  EXPECT_EQ(lines[3].rfind("train x  50%  504/1000", 0), 0U) << lines[3];
}

}  // namespace
