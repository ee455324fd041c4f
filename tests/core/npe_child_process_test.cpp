// Work in a child process: its result, its error, its crash and its stall each reach the parent
// as what they are.

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "data/child_process.h"

namespace npe {
namespace {

using namespace std::chrono_literals;

ChildFailure failure_of(const std::function<void(ChildChannel&)>& work,
                        std::chrono::milliseconds limit = 10s) {
  try {
    run_in_child(work, limit);
  } catch (const ChildFailure& failure) {
    return failure;
  }
  ADD_FAILURE() << "the child was expected to fail";
  return {};
}

TEST(ChildProcess, ReturnsTheChildsResultIntact) {
  std::string big(50u << 20, '\0');  // larger than a pipe's buffer many times over
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + i / 4096);
  const auto got = run_in_child(
      [&](ChildChannel& channel) {
        for (int i = 0; i < 3; ++i) channel.progress();
        channel.result(big);
      },
      10s);
  EXPECT_EQ(got.size(), big.size());
  EXPECT_TRUE(got == big);
  EXPECT_EQ(run_in_child([](ChildChannel& channel) { channel.result(""); }, 10s), "");
}

TEST(ChildProcess, AnExceptionInTheChildIsItsErrorMessage) {
  const auto failure =
      failure_of([](ChildChannel&) { throw std::runtime_error("the file is corrupt"); });
  EXPECT_EQ(failure.kind, ChildFailure::Kind::Error);
  EXPECT_EQ(failure.message, "the file is corrupt");
}

TEST(ChildProcess, ACrashIsReportedWithItsSignal) {
  const auto killed = failure_of([](ChildChannel&) { ::kill(::getpid(), SIGKILL); });
  EXPECT_EQ(killed.kind, ChildFailure::Kind::Crashed);
  EXPECT_NE(killed.message.find("Killed"), std::string::npos) << killed.message;
  const auto silent = failure_of([](ChildChannel&) { ::_exit(3); });
  EXPECT_EQ(silent.kind, ChildFailure::Kind::Crashed);
  EXPECT_NE(silent.message.find("exit status 3"), std::string::npos) << silent.message;
}

TEST(ChildProcess, AChildThatStopsReportingIsStopped) {
  const auto failure = failure_of([](ChildChannel&) { std::this_thread::sleep_for(1h); }, 300ms);
  EXPECT_EQ(failure.kind, ChildFailure::Kind::Stalled);
  EXPECT_EQ(failure.message, "no progress for 0.3 s");
}

TEST(ChildProcess, ProgressKeepsASlowChildAlive) {
  // 1.2 s of work against a 400 ms limit, reporting every 100 ms.
  const auto got = run_in_child(
      [](ChildChannel& channel) {
        for (int i = 0; i < 12; ++i) {
          std::this_thread::sleep_for(100ms);
          channel.progress();
        }
        channel.result("done");
      },
      400ms);
  EXPECT_EQ(got, "done");
}

}  // namespace
}  // namespace npe
