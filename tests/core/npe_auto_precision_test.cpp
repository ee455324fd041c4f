// "auto" precision: a timing is trusted only from a quiet machine and kept for later runs on the
// same CPU; on a busy machine the CPU's bf16 instructions decide (auto_precision.h).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "npe/cpu_info.h"
#include "npe/models/auto_precision.h"
#include "npe/runtime.h"

namespace npe {
namespace {

namespace fs = std::filesystem;

// A child process that keeps one core busy for as long as it lives.
class BusyChild {
 public:
  BusyChild() : m_pid(::fork()) {
    if (m_pid == 0) {
      for (volatile unsigned long n = 0;; n = n + 1) {
      }
    }
  }
  ~BusyChild() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
  }
  bool started() const { return m_pid > 0; }

 private:
  pid_t m_pid;
};

class AutoPrecisionTest : public ::testing::Test {
 protected:
  fs::path dir;
  fs::path cache;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("npe-auto-precision-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
    cache = dir / "bf16-speedup.json";
  }
  void TearDown() override { fs::remove_all(dir); }

  void write_cache(const std::string& cpu, double speedup) const {
    nlohmann::json entry = {{"cpu", cpu},
                            {"libtorch", libtorch_version()},
                            {"speedup", speedup},
                            {"date", "2026-01-02"}};
    std::ofstream(cache) << nlohmann::json{{"timings", {entry}}}.dump();
  }
  static nlohmann::json read(const fs::path& file) {
    std::ifstream in(file);
    return nlohmann::json::parse(in);
  }
};

TEST(CpuInfo, ReadsTheFirstProcessorsEntry) {
  const auto cpu = parse_cpuinfo(
      "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14 96-Core "
      "Processor\nflags\t\t: fpu avx512f avx512_bf16\n\nprocessor\t: 1\nvendor_id\t: "
      "GenuineIntel\nflags\t\t: amx_bf16\n");
  EXPECT_EQ(cpu.vendor, "AuthenticAMD");
  EXPECT_EQ(cpu.model, "AMD EPYC 9R14 96-Core Processor");
  EXPECT_TRUE(cpu.has("avx512_bf16"));
  EXPECT_TRUE(cpu.has("fpu"));
  EXPECT_FALSE(cpu.has("amx_bf16"));  // the second processor's
  EXPECT_EQ(parse_cpuinfo("").model, "unknown");
  EXPECT_EQ(bf16_cpu_key(cpu), "AMD EPYC 9R14 96-Core Processor [avx512f avx512_bf16]");
  EXPECT_FALSE(this_cpu().flags.empty());
}

// The rule where a timing cannot be trusted, from the timings recorded in compute_settings.cpp
// and BENCHMARKS.md: AMX and AMD's AVX512-BF16 train faster in bf16, Intel's AVX512-BF16 alone
// did not.
TEST(CpuInfo, TheCpusBf16InstructionsDecideOnABusyMachine) {
  auto cpu = [](const std::string& vendor, std::set<std::string> flags) {
    CpuInfo info;
    info.vendor = vendor;
    info.flags = std::move(flags);
    return info;
  };
  EXPECT_TRUE(cpu_prefers_bf16(cpu("GenuineIntel", {"avx512f", "avx512_bf16", "amx_bf16"})));
  EXPECT_TRUE(cpu_prefers_bf16(cpu("AuthenticAMD", {"avx512f", "avx512_bf16"})));
  EXPECT_FALSE(cpu_prefers_bf16(cpu("GenuineIntel", {"avx512f", "avx512_bf16"})));
  EXPECT_FALSE(cpu_prefers_bf16(cpu("AuthenticAMD", {"avx2"})));
  EXPECT_FALSE(cpu_prefers_bf16(cpu("GenuineIntel", {"avx512f"})));
}

TEST(CpuInfo, AnotherProcessKeepingACoreBusyIsSeen) {
  const OtherCpuUse idle_here;
  BusyChild child;
  ASSERT_TRUE(child.started());
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  // A whole core, less what the machine's other work takes from it (3 runnable on 2 cores: 2/3).
  EXPECT_GT(idle_here.cores(), 0.5);
}

TEST_F(AutoPrecisionTest, AKeptTimingOfThisCpuDecides) {
  if (!bf16_unavailable_reason().empty()) GTEST_SKIP() << bf16_unavailable_reason();
  write_cache(bf16_cpu_key(this_cpu()), 3.0);
  auto chosen = decide_auto_precision(cache);
  EXPECT_EQ(chosen.basis, AutoPrecision::Basis::cached);
  EXPECT_EQ(chosen.precision, Precision::bf16);
  EXPECT_EQ(chosen.speedup, 3.0);
  EXPECT_NE(chosen.reason.find("bf16 speedup is 3.00x on this CPU (timed 2026-01-02 on a "
                               "quiet machine, kept in " +
                               cache.string()),
            std::string::npos)
      << chosen.reason;
  write_cache(bf16_cpu_key(this_cpu()), 0.8);
  chosen = decide_auto_precision(cache);
  EXPECT_EQ(chosen.basis, AutoPrecision::Basis::cached);
  EXPECT_EQ(chosen.precision, Precision::fp32);
}

// Another CPU's timing (a home folder shared between machines) or a damaged file is not used:
// the kernel is timed here, and a quiet timing is added beside the others.
TEST_F(AutoPrecisionTest, AnotherCpusTimingOrADamagedFileIsTimedAgain) {
  if (!bf16_unavailable_reason().empty()) GTEST_SKIP() << bf16_unavailable_reason();
  write_cache("Some Other CPU", 3.0);
  auto chosen = decide_auto_precision(cache);
  ASSERT_NE(chosen.basis, AutoPrecision::Basis::cached);
  EXPECT_GT(chosen.speedup, 0.0);
  auto kept = read(cache).at("timings");
  if (chosen.basis == AutoPrecision::Basis::measured) {
    ASSERT_EQ(kept.size(), 2u) << kept.dump();
    EXPECT_EQ(kept[0].at("cpu"), "Some Other CPU");
    EXPECT_EQ(kept[1].at("cpu"), bf16_cpu_key(this_cpu()));
    EXPECT_EQ(kept[1].at("speedup").get<double>(), chosen.speedup);
    EXPECT_LE(kept[1].at("other_cores").get<double>(), kQuietOtherCores);
    EXPECT_EQ(decide_auto_precision(cache).basis, AutoPrecision::Basis::cached);
  } else {
    EXPECT_EQ(kept.size(), 1u) << "a busy machine's timing was kept";
  }

  std::ofstream(cache) << "{\"timings\": [{\"cpu\": ";
  chosen = decide_auto_precision(cache);
  EXPECT_TRUE(chosen.basis == AutoPrecision::Basis::measured ||
              chosen.basis == AutoPrecision::Basis::cpu);
  if (chosen.basis == AutoPrecision::Basis::measured) {
    EXPECT_EQ(read(cache).at("timings").size(), 1u);
  }
}

TEST_F(AutoPrecisionTest, OnABusyMachineTheCpuDecidesAndNothingIsKept) {
  if (!bf16_unavailable_reason().empty()) GTEST_SKIP() << bf16_unavailable_reason();
  // Every core busy elsewhere, as beside another training job.
  std::vector<std::unique_ptr<BusyChild>> children;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i) {
    children.push_back(std::make_unique<BusyChild>());
    ASSERT_TRUE(children.back()->started());
  }
  const auto chosen = decide_auto_precision(cache);
  children.clear();
  EXPECT_EQ(chosen.basis, AutoPrecision::Basis::cpu) << chosen.reason;
  EXPECT_GT(chosen.other_cores, kQuietOtherCores);
  EXPECT_EQ(chosen.precision, cpu_prefers_bf16(this_cpu()) ? Precision::bf16 : Precision::fp32);
  EXPECT_NE(chosen.reason.find("cores busy while the TE kernel was timed"), std::string::npos)
      << chosen.reason;
  EXPECT_FALSE(fs::exists(cache));
}

TEST_F(AutoPrecisionTest, ACacheThatCannotBeWrittenOnlyGoesUnwritten) {
  if (!bf16_unavailable_reason().empty()) GTEST_SKIP() << bf16_unavailable_reason();
  std::ofstream(dir / "a-file") << "not a folder";
  const auto chosen = decide_auto_precision(dir / "a-file" / "bf16-speedup.json");
  EXPECT_GT(chosen.speedup, 0.0);
  if (chosen.basis == AutoPrecision::Basis::measured) {
    EXPECT_NE(chosen.reason.find("not kept"), std::string::npos) << chosen.reason;
  }
}

TEST(AutoPrecision, TheCacheFileFollowsTheEnvironment) {
  struct Restore {
    std::map<std::string, std::optional<std::string>> saved;
    Restore() {
      for (const char* name : {"NPE_CACHE_DIR", "XDG_CACHE_HOME"}) {
        const char* value = std::getenv(name);
        saved[name] = value ? std::optional<std::string>(value) : std::nullopt;
      }
    }
    ~Restore() {
      for (const auto& [name, value] : saved) {
        if (value)
          ::setenv(name.c_str(), value->c_str(), 1);
        else
          ::unsetenv(name.c_str());
      }
    }
  } restore;
  ::setenv("NPE_CACHE_DIR", "/somewhere", 1);
  EXPECT_EQ(bf16_speedup_cache_file(), fs::path("/somewhere/bf16-speedup.json"));
  ::unsetenv("NPE_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(bf16_speedup_cache_file(), fs::path("/xdg/npe/bf16-speedup.json"));
  ::unsetenv("XDG_CACHE_HOME");
  if (const char* home = std::getenv("HOME")) {
    EXPECT_EQ(bf16_speedup_cache_file(), fs::path(home) / ".cache/npe/bf16-speedup.json");
  }
}

// What a process decides stays decided: parse_precision("auto") and the start line agree.
TEST(AutoPrecision, DecidedOncePerProcess) {
  const auto& chosen = auto_precision();
  EXPECT_EQ(&auto_precision(), &chosen);
  EXPECT_EQ(parse_precision("auto"), chosen.precision);
  EXPECT_FALSE(chosen.reason.empty());
  EXPECT_EQ(chosen.basis == AutoPrecision::Basis::no_bf16, !bf16_unavailable_reason().empty());
}

}  // namespace
}  // namespace npe
