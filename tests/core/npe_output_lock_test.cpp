// One writer per checkpoint: a second lock on the same file (however spelt) is refused with
// the holder named, a waiting one gets it when the holder lets go, and nothing is left behind.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "npe/errors.h"
#include "npe/output_lock.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class OutputLockTest : public npe::testing::TemporaryFolderTest {};

TEST_F(OutputLockTest, SecondWriterIsRefusedNamingTheFirst) {
  const auto path = dir / "t.pt";
  auto lock = OutputLock::acquire(path, 0ms);
  ASSERT_TRUE(lock.held());
  EXPECT_TRUE(fs::exists(path.string() + ".lock"));
  NPE_EXPECT_THROW_WITH(OutputLock::acquire(path, 0ms), Error,
                        "process " + std::to_string(::getpid()) + ") is writing");
  // Another spelling of the same file is the same lock.
  const auto other_spelling = dir / "." / "t.pt";
  NPE_EXPECT_THROW_WITH(OutputLock::acquire(other_spelling, 0ms), Error, "t.pt");
  // Another file is not.
  EXPECT_TRUE(OutputLock::acquire(dir / "u.pt", 0ms).held());
  lock.release();
  EXPECT_FALSE(fs::exists(path.string() + ".lock"));
  EXPECT_TRUE(OutputLock::acquire(path, 0ms).held());
}

TEST_F(OutputLockTest, WaitingWriterGetsTheLockWhenTheFirstLetsGo) {
  const auto path = dir / "t.pt";
  auto first = OutputLock::acquire(path, 0ms);
  std::thread holder([&first] {
    std::this_thread::sleep_for(300ms);
    first.release();
  });
  const auto started = std::chrono::steady_clock::now();
  auto second = OutputLock::acquire(path, 20000ms);
  holder.join();
  EXPECT_TRUE(second.held());
  EXPECT_GE(std::chrono::steady_clock::now() - started, 250ms);
}

TEST_F(OutputLockTest, StaleLockFileOfAKilledRunIsTakenOver) {
  // A run killed outright leaves its lock file, but the kernel dropped its lock.
  const auto path = dir / "t.pt";
  std::ofstream(path.string() + ".lock") << "999999\n";
  auto lock = OutputLock::acquire(path, 0ms);
  EXPECT_TRUE(lock.held());
}

TEST_F(OutputLockTest, FolderWithoutWriteAccessTakesNoLockAndDoesNotThrow) {
  if (::geteuid() == 0) {
    // root writes anywhere: a missing folder stands in for one that cannot be written.
    EXPECT_FALSE(OutputLock::acquire(dir / "missing" / "t.pt", 0ms).held());
    return;
  }
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_FALSE(OutputLock::acquire(dir / "t.pt", 0ms).held());
  fs::permissions(dir, fs::perms::owner_all);
}

}  // namespace
}  // namespace npe
