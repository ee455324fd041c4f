// The guard-page allocator (npe/guard_page_allocator.h) must fault at the first byte past a
// tensor (or before it), and must change nothing else: the same products, in both precisions, at
// sizes whose bytes are not a multiple of anything. Each case runs in a child process of its own
// (GoogleTest's death tests, "threadsafe": the suite re-run for that one test), because the
// allocator, once installed, is the whole process's.

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/guard_page_allocator.h"

namespace {

class GuardPageAllocator : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// Dead of the fault: killed by SIGSEGV, or, in a build with AddressSanitizer (which catches the
// signal, reports it and exits with status 1), exited with an error.
bool died_of_the_fault(int status) {
  return (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) ||
         (WIFEXITED(status) && WEXITSTATUS(status) != 0);
}

npe::GuardPageSettings settings(npe::GuardedEnd guarded, size_t alignment) {
  npe::GuardPageSettings s;
  s.guarded = guarded;
  s.alignment = alignment;
  return s;
}

TEST_F(GuardPageAllocator, AWritePastATensorsEndFaultsAtOnce) {
  EXPECT_EXIT(
      {
        npe::install_guard_page_allocator(settings(npe::GuardedEnd::kEnd, 2));
        auto t = torch::zeros({7}, torch::kBFloat16);  // 14 bytes: the guard right after them
        auto* data = static_cast<volatile uint16_t*>(t.data_ptr());
        data[6] = 1;  // the last element is the tensor's own
        std::fprintf(stderr, "wrote the last element\n");
        data[7] = 1;
        std::fprintf(stderr, "wrote past the end\n");
        std::exit(0);
      },
      died_of_the_fault, "wrote the last element\n.*(signal 11|SEGV on unknown address)");
}

TEST_F(GuardPageAllocator, AWriteBeforeATensorsStartFaultsWithTheStartGuarded) {
  EXPECT_EXIT(
      {
        npe::install_guard_page_allocator(settings(npe::GuardedEnd::kStart, 4));
        auto t = torch::zeros({5}, torch::kFloat32);
        auto* data = static_cast<volatile float*>(t.data_ptr());
        data[0] = 1;
        std::fprintf(stderr, "wrote the first element\n");
        data[-1] = 1;
        std::fprintf(stderr, "wrote before the start\n");
        std::exit(0);
      },
      died_of_the_fault, "wrote the first element\n.*(signal 11|SEGV on unknown address)");
}

// Products and reductions as the models run them, at odd sizes, give the same bits on guarded
// storage (aligned to 2 bytes only: floats off their natural alignment) as on libtorch's own.
TEST_F(GuardPageAllocator, ComputesWhatTheDefaultAllocatorComputes) {
  torch::manual_seed(3);
  const auto a = torch::randn({37, 19});
  const auto b = torch::randn({19, 23});
  const auto x = torch::randn({3, 5, 11, 13});
  const auto expected_fp32 = torch::mm(a, b);
  const auto expected_bf16 = torch::mm(a.to(torch::kBFloat16), b.to(torch::kBFloat16));
  const auto expected_softmax = torch::softmax(x.to(torch::kBFloat16), -1);
  EXPECT_EXIT(
      {
        npe::install_guard_page_allocator(settings(npe::GuardedEnd::kEnd, 2));
        const bool installed = !npe::describe_guard_page_allocator().empty();
        const bool same =
            torch::equal(torch::mm(a.clone(), b.clone()), expected_fp32) &&
            torch::equal(torch::mm(a.to(torch::kBFloat16), b.to(torch::kBFloat16)),
                         expected_bf16) &&
            torch::equal(torch::softmax(x.clone().to(torch::kBFloat16), -1), expected_softmax);
        std::fprintf(stderr, "installed %d, same %d\n", installed, same);
        std::exit(installed && same ? 0 : 1);
      },
      testing::ExitedWithCode(0), "installed 1, same 1");
}

TEST(GuardPageSettings, ComeFromTheEnvironmentOrAreRefusedWithTheReason) {
  // The suite may itself run under the allocator (a hunt): the variables are put back at the end.
  const std::string where = std::getenv("NPE_GUARD_PAGES") ? std::getenv("NPE_GUARD_PAGES") : "";
  const char* alignment_set = std::getenv("NPE_GUARD_PAGES_ALIGNMENT");
  const std::string alignment = alignment_set ? alignment_set : "";
  ::unsetenv("NPE_GUARD_PAGES");
  ::unsetenv("NPE_GUARD_PAGES_ALIGNMENT");
  EXPECT_FALSE(npe::guard_page_settings_from_env());
  ::setenv("NPE_GUARD_PAGES", "start", 1);
  ::setenv("NPE_GUARD_PAGES_ALIGNMENT", "16", 1);
  const auto s = npe::guard_page_settings_from_env();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->guarded, npe::GuardedEnd::kStart);
  EXPECT_EQ(s->alignment, 16u);
  ::setenv("NPE_GUARD_PAGES_ALIGNMENT", "3", 1);
  EXPECT_THROW(npe::guard_page_settings_from_env(), npe::ConfigError);
  ::setenv("NPE_GUARD_PAGES", "sideways", 1);
  EXPECT_THROW(npe::guard_page_settings_from_env(), npe::ConfigError);
  ::unsetenv("NPE_GUARD_PAGES");
  ::unsetenv("NPE_GUARD_PAGES_ALIGNMENT");
  if (!where.empty()) ::setenv("NPE_GUARD_PAGES", where.c_str(), 1);
  if (!alignment.empty()) ::setenv("NPE_GUARD_PAGES_ALIGNMENT", alignment.c_str(), 1);
}

}  // namespace
