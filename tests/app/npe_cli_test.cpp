// End-to-end tests of the npe command-line tool.

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "npe/blas_kernels.h"
#include "npe/cpu_info.h"
#include "npe/data/era5_tasks.h"
#include "npe/data/gridded_field.h"
#include "npe/data/gridded_writer.h"
#include "npe/data/image_tasks.h"
#include "npe/data/png_image.h"
#include "npe/data/point_table.h"
#include "npe/models/auto_precision.h"
#include "npe/models/compute_settings.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int status = -1;
  std::string output;  // stdout and stderr together
  std::string stdout_only;
};

RunResult run_npe(const std::string& arguments) {
  RunResult result;
  const auto out_file = fs::temp_directory_path() / ("npe-cli-out-" + std::to_string(::getpid()));
  // One thread unless the test is about the option.
  const std::string threads =
      arguments.find("--threads") == std::string::npos ? " --threads 1" : "";
  const std::string command =
      std::string(NPE_EXECUTABLE) + " " + arguments + " 2>&1 >" + out_file.string() + threads;
  FILE* pipe = ::popen(command.c_str(), "r");
  std::array<char, 512> buffer{};
  while (pipe && std::fgets(buffer.data(), buffer.size(), pipe)) result.output += buffer.data();
  const int status = pipe ? ::pclose(pipe) : -1;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(out_file);
  result.stdout_only.assign(std::istreambuf_iterator<char>(in), {});
  result.output += result.stdout_only;
  fs::remove(out_file);
  return result;
}

class NpeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("npe-cli-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  // A folder holding one barely trained CNP checkpoint (cnp.pt), for the bench commands.
  fs::path models_with_a_cnp() {
    const auto models = dir / "models";
    fs::create_directories(models);
    auto train =
        run_npe("train --model cnp --steps 2 --val-tasks 16 --out " + (models / "cnp.pt").string());
    EXPECT_EQ(train.status, 0) << train.output;
    return models;
  }
  fs::path dir;
};

TEST_F(NpeCli, NoArgumentsPrintsUsageAndFails) {
  auto r = run_npe("");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("Usage: npe"), std::string::npos);
}

TEST_F(NpeCli, UnknownModelIsAClearError) {
  auto r = run_npe("train --model tnpp --steps 1 --out " + (dir / "x.pt").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("unknown model 'tnpp'"), std::string::npos) << r.output;
}

TEST_F(NpeCli, TypoInAnOptionIsRejected) {
  auto r = run_npe("eval --model gp-oracle --tasks 16 --shfit 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("not expected: 1 --shfit"), std::string::npos) << r.output;
}

TEST_F(NpeCli, NonNumericValueIsRejected) {
  auto r = run_npe("eval --model gp-oracle --tasks many");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--tasks: must be a number >= 1, got 'many'"), std::string::npos)
      << r.output;
}

TEST_F(NpeCli, OracleEvaluationPrintsJson) {
  auto r = run_npe("eval --model gp-oracle --task gp1d --shift 1 --tasks 32 --seed 4 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  auto json = nlohmann::json::parse(r.stdout_only);
  EXPECT_EQ(json.at("model"), "gp-oracle");
  EXPECT_EQ(json.at("tasks"), 32);
  EXPECT_DOUBLE_EQ(json.at("shift").get<double>(), 1.0);
  EXPECT_GT(json.at("ll_mean").get<double>(), -1.0);
  EXPECT_GT(json.at("ll_stderr").get<double>(), 0.0);
}

// A shift so large that x + Δ rounds x away would give a log-likelihood that means nothing.
TEST_F(NpeCli, EvalRefusesShiftsBeyondThePrecisionOfTheInputs) {
  auto r = run_npe("eval --model gp-oracle --task gp1d --shift 1e308 --tasks 4");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("is beyond |Δ| = 1e6"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("log-likelihood"), std::string::npos) << r.output;
  EXPECT_EQ(run_npe("eval --model gp-oracle --task gp1d --shift -1e6 --tasks 4").status, 0);
}

TEST_F(NpeCli, TrainThenEvaluateACheckpoint) {
  const auto path = (dir / "cnp.pt").string();
  auto train = run_npe("train --model cnp --steps 20 --val-tasks 16 --seed 2 --out " + path);
  ASSERT_EQ(train.status, 0) << train.output;
  EXPECT_TRUE(fs::exists(path));
  auto sidecar = nlohmann::json::parse(std::ifstream(path + ".json"));
  EXPECT_EQ(sidecar.at("steps"), 20);
  EXPECT_EQ(sidecar.at("model").at("kind"), "cnp");
  EXPECT_NE(sidecar.at("command").get<std::string>().find("train --model cnp"), std::string::npos);
  auto eval = run_npe("eval --checkpoint " + path + " --tasks 16 --json");
  ASSERT_EQ(eval.status, 0) << eval.output;
  auto json = nlohmann::json::parse(eval.stdout_only);
  EXPECT_EQ(json.at("model"), "cnp");
  EXPECT_TRUE(json.at("ll_mean").is_number());
}

// The start line says which precision trains and, where "auto" chose it, from what: a run that
// silently lands in the slower precision is hours lost on a long CPU run. A kept quiet timing
// of this CPU decides (auto_precision.h), whatever the machine is doing now.
TEST_F(NpeCli, TrainSaysHowAutoChoseThePrecision) {
  const auto path = (dir / "te.pt").string();
  const auto cache_dir = dir / "cache";
  fs::create_directories(cache_dir);
  auto keep = [&](double speedup) {
    const nlohmann::json entry = {{"cpu", npe::bf16_cpu_key(npe::this_cpu())},
                                  {"libtorch", npe::libtorch_version()},
                                  {"speedup", speedup},
                                  {"date", "2026-01-02"}};
    std::ofstream(cache_dir / "bf16-speedup.json") << nlohmann::json{{"timings", {entry}}};
  };
  const char* saved = std::getenv("NPE_CACHE_DIR");
  const std::string restore = saved ? saved : "";
  ::setenv("NPE_CACHE_DIR", cache_dir.c_str(), 1);
  const bool bf16_here = npe::bf16_unavailable_reason().empty();
  for (const double speedup : {3.0, 0.8}) {
    keep(speedup);
    const auto chosen = run_npe("train --model tetnp --steps 1 --val-tasks 0 --out " + path);
    ASSERT_EQ(chosen.status, 0) << chosen.output;
    const std::string expected =
        !bf16_here ? "fp32 (auto: this CPU has no bf16 products)"
        : speedup > 1.5
            ? "bf16 (auto: the TE kernel's bf16 speedup is 3.00x on this CPU (timed 2026-01-02 "
              "on a quiet machine, kept in " +
                  (cache_dir / "bf16-speedup.json").string() + "))"
            : "fp32 (auto: the TE kernel's bf16 speedup is 0.80x on this CPU (timed";
    EXPECT_NE(chosen.output.find(expected), std::string::npos) << chosen.output;
  }
  if (saved) {
    ::setenv("NPE_CACHE_DIR", restore.c_str(), 1);
  } else {
    ::unsetenv("NPE_CACHE_DIR");
  }
  const auto given =
      run_npe("train --model tetnp --steps 1 --val-tasks 0 --precision fp32 --out " + path);
  ASSERT_EQ(given.status, 0) << given.output;
  EXPECT_NE(given.output.find(", fp32, steps 1 to 1"), std::string::npos) << given.output;
  EXPECT_EQ(given.output.find("(auto"), std::string::npos) << given.output;
}

TEST_F(NpeCli, KeepBestWritesTheBestCheckpointAndItsMetadata) {
  const auto path = (dir / "cnp.pt").string();
  auto train =
      run_npe("train --model cnp --steps 6 --val-every 2 --val-tasks 16 --keep-best --out " + path);
  ASSERT_EQ(train.status, 0) << train.output;
  const auto best = (dir / "cnp.best.pt").string();
  ASSERT_TRUE(fs::exists(best));
  auto sidecar = nlohmann::json::parse(std::ifstream(best + ".json"));
  EXPECT_LE(sidecar.at("steps").get<int>(), 6);
  EXPECT_TRUE(sidecar.at("validation_ll").is_number());
  EXPECT_EQ(run_npe("eval --checkpoint " + best + " --tasks 16").status, 0);
}

TEST_F(NpeCli, CorruptCheckpointFailsCleanly) {
  const auto path = dir / "bad.pt";
  std::ofstream(path) << "garbage";
  auto r = run_npe("eval --checkpoint " + path.string() + " --tasks 4");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("corrupt"), std::string::npos) << r.output;
}

// An unconverted or corrupt reference checkpoint is an error that says what to do; nothing is
// written.
TEST_F(NpeCli, ImportReferenceRefusesFilesItCannotRead) {
  const auto path = dir / "model.ckpt";
  std::ofstream(path) << "garbage";
  auto r = run_npe("import-reference " + path.string() + " --out " + (dir / "out.pt").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("cannot read reference checkpoint"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.pt"));
}

// gp-bayes is the ceiling: every row's gap_to_ceiling is paired against it (its Gaussian
// marginals for a diagonal model, its joint mixture for joint ones), and its own row carries
// the mixture's marginal log-likelihood, which its moment-matched Gaussian cannot beat on
// average (Jensen) and the oracle, told each task's kernel, beats.
TEST_F(NpeCli, BenchAccuracyMeasuresTheGapToTheBayesCeiling) {
  const auto models = models_with_a_cnp();
  ASSERT_FALSE(HasFailure());
  auto r = run_npe(
      "bench accuracy --tasks 64 --shifts 0 --bayes-grid 16 --models gp-oracle,gp-bayes,cnp "
      "--models-dir " +
      models.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  auto rows = nlohmann::json::parse(r.stdout_only);
  ASSERT_EQ(rows.size(), 3u);
  const auto& oracle = rows[0];
  const auto& bayes = rows[1];
  const auto& cnp = rows[2];
  ASSERT_EQ(bayes.at("model"), "gp-bayes");
  EXPECT_DOUBLE_EQ(bayes.at("gap_to_ceiling").get<double>(), 0.0);
  EXPECT_EQ(cnp.at("ceiling"), "gaussian");
  EXPECT_NEAR(cnp.at("gap_to_ceiling").get<double>(),
              bayes.at("ll_mean").get<double>() - cnp.at("ll_mean").get<double>(), 1e-9);
  EXPECT_EQ(oracle.at("ceiling"), "joint");
  EXPECT_NEAR(oracle.at("gap_to_ceiling").get<double>(),
              bayes.at("ll_joint_mean").get<double>() - oracle.at("ll_joint_mean").get<double>(),
              1e-9);
  EXPECT_LE(bayes.at("ll_mean").get<double>(), bayes.at("ll_mixture_mean").get<double>());
  EXPECT_LT(bayes.at("ll_mixture_mean").get<double>(), oracle.at("ll_mean").get<double>());
  EXPECT_FALSE(cnp.contains("ll_mixture_mean"));
  // Where the gap lies: per kernel family, over that family's tasks, which add up to all tasks
  // and whose gaps, weighted by their counts, are the overall gap.
  const auto& kinds = cnp.at("by_task_kind");
  ASSERT_EQ(kinds.size(), 3u) << kinds;
  double gap = 0.0;
  int64_t tasks = 0;
  for (const char* family : {"se", "periodic", "matern52"}) {
    const auto& kind = kinds.at(family);
    tasks += kind.at("gap_to_ceiling_tasks").get<int64_t>();
    gap += kind.at("gap_to_ceiling").get<double>() * kind.at("tasks").get<double>();
  }
  EXPECT_EQ(tasks, 64);
  EXPECT_NEAR(gap / 64.0, cnp.at("gap_to_ceiling").get<double>(), 1e-9);
  EXPECT_EQ(cnp.at("per_task").at("kind").size(), 64u);
  // Finer: each kind by octave of its scale (lengthscale or period), again adding up.
  ASSERT_EQ(cnp.at("per_task").at("scale").size(), 64u);
  ASSERT_EQ(cnp.at("per_task").at("num_context").size(), 64u);
  const auto& by_scale = cnp.at("by_task_kind_and_scale");
  EXPECT_GT(by_scale.size(), 3u) << by_scale;
  double gap_by_scale = 0.0;
  int64_t tasks_by_scale = 0;
  for (const auto& [group, values] : by_scale.items()) {
    EXPECT_NE(group.find(" ["), std::string::npos) << group;
    tasks_by_scale += values.at("gap_to_ceiling_tasks").get<int64_t>();
    gap_by_scale += values.at("gap_to_ceiling").get<double>() * values.at("tasks").get<double>();
  }
  EXPECT_EQ(tasks_by_scale, 64);
  EXPECT_NEAR(gap_by_scale / 64.0, cnp.at("gap_to_ceiling").get<double>(), 1e-9);

  auto wrong = run_npe("eval --model gp-bayes --task tfmnist --tasks 4");
  EXPECT_NE(wrong.status, 0);
  EXPECT_NE(wrong.output.find("prior of GP tasks"), std::string::npos) << wrong.output;
}

TEST_F(NpeCli, BenchAccuracyPrintsOneRowPerModelAndShift) {
  const auto models = models_with_a_cnp();
  ASSERT_FALSE(HasFailure());
  // Every shift evaluated, so that the oracle's invariance below is measured, not assumed.
  auto r = run_npe(
      "bench accuracy --tasks 32 --shifts 0,1.5 --baselines-every-shift --models gp-oracle,cnp "
      "--models-dir " +
      models.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  auto rows = nlohmann::json::parse(r.stdout_only);
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    EXPECT_TRUE(row.at("model") == "gp-oracle" || row.at("model") == "cnp") << row;
    EXPECT_EQ(row.at("tasks"), 32);
    EXPECT_EQ(row.at("batches"), 2);
    EXPECT_TRUE(row.at("ll_mean").is_number());
    EXPECT_GT(row.at("ll_stderr").get<double>(), 0.0);
  }
  EXPECT_DOUBLE_EQ(rows[1].at("shift").get<double>(), 1.5);
  // Paired tasks: the oracle is exactly translation invariant.
  EXPECT_NEAR(rows[0].at("ll_mean").get<double>(), rows[1].at("ll_mean").get<double>(), 1e-4);
  EXPECT_NEAR(rows[1].at("paired_stderr_vs_shift0").get<double>(), 0.0, 1e-6);
  // The gap to the oracle is paired too, and zero for the oracle itself.
  EXPECT_DOUBLE_EQ(rows[0].at("gap_to_oracle").get<double>(), 0.0);
  EXPECT_NEAR(rows[2].at("gap_to_oracle").get<double>(),
              rows[0].at("ll_mean").get<double>() - rows[2].at("ll_mean").get<double>(), 1e-9);
  EXPECT_GT(rows[2].at("gap_to_oracle_stderr").get<double>(), 0.0);
  for (const char* level : {"0.5", "0.9", "0.95"}) {
    const double coverage = rows[2].at("coverage").at(level).get<double>();
    EXPECT_GE(coverage, 0.0);
    EXPECT_LE(coverage, 1.0);
  }
}

// npe bench gap: every task's gap to gp-bayes, split into mean and spread parts that add up to
// it, and on periodic tasks the fits against the period's entropy and the period.
TEST_F(NpeCli, BenchGapSplitsEachTasksGapAndFitsItOnPeriodicTasks) {
  const auto models = models_with_a_cnp();
  ASSERT_FALSE(HasFailure());
  auto r = run_npe("bench gap --tasks 12 --task-option 'kernels=[\"periodic\"]' --models-dir " +
                   models.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = nlohmann::json::parse(r.stdout_only);
  ASSERT_EQ(rows.size(), 1u);
  const auto& row = rows[0];
  EXPECT_EQ(row.at("model"), "cnp");
  const auto& tasks = row.at("per_task");
  ASSERT_EQ(tasks.at("gap").size(), 12u);
  double sum = 0.0;
  for (size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(tasks.at("kind")[i], "periodic");
    const double gap = tasks.at("gap")[i];
    EXPECT_NEAR(gap,
                tasks.at("mean_part")[i].get<double>() + tasks.at("spread_part")[i].get<double>(),
                1e-9);
    EXPECT_GT(tasks.at("period_entropy")[i].get<double>(), -20.0);
    sum += gap;
  }
  EXPECT_NEAR(row.at("all").at("gap").get<double>(), sum / 12.0, 1e-9);
  EXPECT_GT(row.at("all").at("gap").get<double>(),
            0.0);  // two training steps: far below the ceiling
  const auto& periodic = row.at("periodic");
  EXPECT_EQ(periodic.at("gap_on_both").at("points"), 12);
  EXPECT_TRUE(periodic.at("gap_on_both").at("entropy_stderr").is_number());
  EXPECT_EQ(periodic.at("by_entropy_tertile").size(), 3u);
  auto text = run_npe("bench gap --tasks 12 --task-option 'kernels=[\"periodic\"]' --models-dir " +
                      models.string());
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.stdout_only.find("per nat of H"), std::string::npos) << text.stdout_only;
}

// The exact baselines are evaluated at the first Δ only, and an earlier run's rows stand in for
// them when they were measured on the same tasks with the same settings: the gaps to the ceiling
// come out as if gp-bayes had been evaluated again, and a stored run on other tasks is refused.
TEST_F(NpeCli, BenchAccuracyReusesTheCeilingAcrossShiftsAndRuns) {
  const auto models = models_with_a_cnp();
  ASSERT_FALSE(HasFailure());
  const std::string common =
      "bench accuracy --shifts 0,1 --bayes-grid 8 --bayes-periodic-grid 16 --models gp-bayes,cnp "
      "--json --models-dir " +
      models.string();
  auto first = run_npe(common + " --tasks 32");
  ASSERT_EQ(first.status, 0) << first.output;
  const auto rows = nlohmann::json::parse(first.stdout_only);
  ASSERT_EQ(rows.size(), 4u);
  ASSERT_EQ(rows[1].at("model"), "gp-bayes");
  for (size_t i : {0u, 1u}) EXPECT_DOUBLE_EQ(rows[i].at("evaluated_at_shift").get<double>(), 0.0);
  EXPECT_EQ(rows[1].at("per_batch"), rows[0].at("per_batch"));
  EXPECT_EQ(rows[2].at("per_batch").at("ll").size(), 2u);
  EXPECT_FALSE(rows[2].contains("seed"));  // a checkpoint: always evaluated here

  const auto stored = dir / "ceiling.json";
  std::ofstream(stored) << first.stdout_only;
  auto second = run_npe(common + " --tasks 32 --baselines-from " + stored.string());
  ASSERT_EQ(second.status, 0) << second.output;
  const auto again = nlohmann::json::parse(second.stdout_only);
  ASSERT_EQ(again.size(), 4u);
  for (size_t i : {0u, 1u}) {
    EXPECT_EQ(again[i].at("stored_in"), stored.string());
    EXPECT_NEAR(again[i].at("ll_mean").get<double>(), rows[i].at("ll_mean").get<double>(), 1e-12);
    EXPECT_NEAR(again[i].at("ll_stderr").get<double>(), rows[i].at("ll_stderr").get<double>(),
                1e-12);
  }
  for (size_t i : {2u, 3u}) {
    EXPECT_NEAR(again[i].at("gap_to_ceiling").get<double>(),
                rows[i].at("gap_to_ceiling").get<double>(), 1e-9);
    EXPECT_NEAR(again[i].at("gap_to_ceiling_stderr").get<double>(),
                rows[i].at("gap_to_ceiling_stderr").get<double>(), 1e-9);
    // The stored rows keep each task's kind and log-likelihood, so the gap by kernel family
    // comes out the same too.
    for (const auto& [kind, values] : rows[i].at("by_task_kind").items()) {
      EXPECT_NEAR(again[i].at("by_task_kind").at(kind).at("gap_to_ceiling").get<double>(),
                  values.at("gap_to_ceiling").get<double>(), 1e-9)
          << kind;
    }
  }

  auto other_tasks = run_npe(common + " --tasks 16 --baselines-from " + stored.string());
  EXPECT_EQ(other_tasks.status, 2) << other_tasks.output;
  EXPECT_NE(other_tasks.output.find("tasks 32 (here 16)"), std::string::npos) << other_tasks.output;

  auto broken_rows = rows;
  broken_rows[0]["per_batch"]["ll"][0] = "x";
  broken_rows[1]["per_batch"]["ll"][0] = "x";
  std::ofstream(stored) << broken_rows.dump();
  auto broken = run_npe(common + " --tasks 32 --baselines-from " + stored.string());
  EXPECT_EQ(broken.status, 2) << broken.output;
  EXPECT_NE(broken.output.find("per_batch.ll"), std::string::npos) << broken.output;

  std::ofstream(stored) << "{ not json";
  auto garbage = run_npe(common + " --tasks 32 --baselines-from " + stored.string());
  EXPECT_EQ(garbage.status, 2) << garbage.output;
  EXPECT_NE(garbage.output.find("not the JSON output"), std::string::npos) << garbage.output;
}

TEST_F(NpeCli, BenchLatencyAndTrainReportTimings) {
  auto latency = run_npe(
      "bench latency --models gp-oracle --repeats 3 --warmup 1 --device cpu "
      "--models-dir " +
      dir.string() + " --json");
  ASSERT_EQ(latency.status, 0) << latency.output;
  auto rows = nlohmann::json::parse(latency.stdout_only);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GT(rows[0].at("median_ms").get<double>(), 0.0);
  EXPECT_LE(rows[0].at("p10_ms").get<double>(), rows[0].at("p90_ms").get<double>());
  EXPECT_GT(rows[0].at("peak_gflops").get<double>(), 0.0);
  // A neural model's row gives its speed by its own FLOP count against that peak.
  auto neural = run_npe(
      "bench latency --size small --models tetnp --repeats 2 --warmup 1 "
      "--device cpu --json");
  ASSERT_EQ(neural.status, 0) << neural.output;
  const auto row = nlohmann::json::parse(neural.stdout_only).at(0);
  EXPECT_GT(row.at("gflop").get<double>(), 0.0);
  EXPECT_NEAR(row.at("gflops").get<double>(),
              row.at("gflop").get<double>() / (row.at("median_ms").get<double>() / 1e3), 1e-6);
  EXPECT_NEAR(row.at("fraction_of_peak").get<double>(),
              row.at("gflops").get<double>() / row.at("peak_gflops").get<double>(), 1e-9);

  auto train = run_npe("bench train --models cnp,tetnp --steps 2 --warmup 1 --json");
  ASSERT_EQ(train.status, 0) << train.output;
  auto trained = nlohmann::json::parse(train.stdout_only);
  ASSERT_EQ(trained.size(), 2u);
  for (const auto& row : trained) {
    EXPECT_GT(row.at("steps_per_s").get<double>(), 0.0);
    EXPECT_GT(row.at("flops_per_step").get<double>(), 0.0);
    EXPECT_GT(row.at("peak_gflops").get<double>(), 0.0);
  }
  // The TE-TNP's pairwise MLPs make its step far more expensive than the CNP's.
  EXPECT_GT(trained[1].at("flops_per_step").get<double>(),
            5 * trained[0].at("flops_per_step").get<double>());

  // Without warm-up the timed span still holds the step: it once started after training ended
  // and reported tens of millions of steps a second. No libtorch step takes under 10 us.
  auto cold = run_npe("bench train --models cnp --steps 1 --warmup 0 --json");
  ASSERT_EQ(cold.status, 0) << cold.output;
  EXPECT_LT(nlohmann::json::parse(cold.stdout_only)[0].at("steps_per_s").get<double>(), 1e5);
}

// A tab's own workload: the images tab predicts every pixel of the 56 x 56 canvas from 10 % of
// them with its shipped models; --task times that, on one of the task's test pictures.
TEST_F(NpeCli, BenchLatencyTimesATabsTaskWithItsShippedModels) {
  auto images = run_npe(
      "bench latency --task tfmnist-central --task-option targets_include_context=true "
      "--context 314 --targets 3136 --models tepttnp-central,convcnp2d-central --repeats 2 "
      "--warmup 0 --device cpu --json");
  ASSERT_EQ(images.status, 0) << images.output;
  const auto rows = nlohmann::json::parse(images.stdout_only);
  ASSERT_EQ(rows.size(), 2u) << images.stdout_only;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("task"), "tfmnist-central");
    EXPECT_EQ(row.at("context"), 314);
    EXPECT_EQ(row.at("targets"), 3136);
    EXPECT_GT(row.at("gflop").get<double>(), 0.0) << row.dump();
  }
  // More points than a task has is refused with the counts.
  auto too_many = run_npe("bench latency --task tfmnist-central --context 100000 --repeats 1");
  EXPECT_EQ(too_many.status, 2) << too_many.output;
  EXPECT_NE(too_many.output.find("asked for 100000 context points"), std::string::npos)
      << too_many.output;
  // The oracle knows GP tasks only: named for another task it is refused, not run on nothing.
  auto oracle = run_npe("bench latency --task tfmnist-central --models gp-oracle --repeats 1");
  EXPECT_EQ(oracle.status, 2) << oracle.output;
  EXPECT_NE(oracle.output.find("needs GP tasks"), std::string::npos) << oracle.output;
}

// The reference workload is the authors' benchmark's: fixed sizes, paper-size models, and the
// precision and attention implementation recorded with each row.
TEST_F(NpeCli, BenchReferenceWorkloadTimesTheScriptsSizes) {
  auto train = run_npe(
      "bench train --workload reference --models tnp --steps 1 --warmup 0 --precision fp32 "
      "--te-attention plain --json");
  ASSERT_EQ(train.status, 0) << train.output;
  auto rows = nlohmann::json::parse(train.stdout_only);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("workload"), "reference");
  EXPECT_EQ(rows[0].at("batch"), 16);
  EXPECT_EQ(rows[0].at("context"), 64);
  EXPECT_EQ(rows[0].at("targets"), 128);
  EXPECT_EQ(rows[0].at("runs"), 1);
  EXPECT_GT(rows[0].at("median_ms").get<double>(), 0.0);
  EXPECT_EQ(rows[0].at("machine").at("precision"), "fp32");
  EXPECT_EQ(rows[0].at("machine").at("te_attention"), "plain");

  auto latency = run_npe(
      "bench latency --workload reference --models tetnp --repeats 2 --warmup 0 --precision "
      "bf16 --json");
  if (!npe::bf16_unavailable_reason().empty()) {  // e.g. AMD EPYC without AVX-512: refused
    EXPECT_NE(latency.status, 0);
    EXPECT_NE(latency.output.find("cannot run the bfloat16"), std::string::npos) << latency.output;
  } else {
    ASSERT_EQ(latency.status, 0) << latency.output;
    rows = nlohmann::json::parse(latency.stdout_only);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].at("targets"), 256);
    EXPECT_EQ(rows[0].at("runs"), 2);
    EXPECT_EQ(rows[0].at("machine").at("precision"), "bf16");
  }

  auto bad = run_npe("bench train --workload reference --precision fp16");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("--precision"), std::string::npos) << bad.output;
}

TEST_F(NpeCli, BenchMemoryReportsEachPhasePerModel) {
  auto result = run_npe(
      "bench memory --models bsatnp,tnp --size small --context 20 --targets 50 --batch-size 2 "
      "--json");
  ASSERT_EQ(result.status, 0) << result.output;
  const auto rows = nlohmann::json::parse(result.stdout_only);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("model"), "bsatnp");
  EXPECT_EQ(rows[1].at("model"), "tnp");
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("context"), 20);
    EXPECT_EQ(row.at("targets"), 50);
    EXPECT_GT(row.at("baseline_mib").get<double>(), 0.0);
    EXPECT_GT(row.at("training_step_s").get<double>(), 0.0);
    // 2 tasks x 4 heads x 50 x 20 float32 weights.
    EXPECT_NEAR(row.at("dense_attention_weights_mib").get<double>(),
                4.0 * 2 * 4 * 50 * 20 / (1024.0 * 1024.0), 1e-9);
  }
  auto bad = run_npe("bench memory --targets 0");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("--targets"), std::string::npos) << bad.output;
}

// Tasks drawn from a named task, and the TE attention that the step ran with, in each row.
TEST_F(NpeCli, BenchMemoryDrawsFromATaskAndNamesTheAttention) {
  auto result = run_npe(
      "bench memory --models tetnp --size small --task gp1d --batch-size 2 --threads 1 "
      "--te-attention blocked --te-attention-block-mib 1 --json");
  ASSERT_EQ(result.status, 0) << result.output;
  const auto rows = nlohmann::json::parse(result.stdout_only);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("task"), "gp1d");
  EXPECT_EQ(rows[0].at("te_attention"), "blocked");
  EXPECT_GT(rows[0].at("context").get<int64_t>(), 0);
  EXPECT_GT(rows[0].at("targets").get<int64_t>(), 0);
  auto both = run_npe("bench memory --task gp1d --context 5");
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.output.find("excludes"), std::string::npos) << both.output;
  auto unknown = run_npe("train --model tetnp --steps 1 --te-attention tiled --out x.pt");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("--te-attention"), std::string::npos) << unknown.output;
}

// The answer a training tab reads from an npe on another computer to fill its Device list.
TEST_F(NpeCli, DevicesListsWhatTrainCanUse) {
  auto result = run_npe("devices --json");
  ASSERT_EQ(result.status, 0) << result.output;
  const auto answer = nlohmann::json::parse(result.stdout_only);
  EXPECT_EQ(answer.at("protocol"), 1);
  const auto& devices = answer.at("devices");
  ASSERT_GE(devices.size(), 1u);
  EXPECT_EQ(devices[0].at("name"), "cpu");
  EXPECT_EQ(devices.size(), torch::cuda::is_available() ? 2u : 1u);
  for (const auto& d : devices) {
    // Every name is one `npe train --device` takes.
    const auto name = d.at("name").get<std::string>();
    EXPECT_TRUE(name == "cpu" || name == "cuda") << name;
  }
}

// OpenBLAS 0.3.21 takes CPUs it does not know (a virtual machine's "Intel(R) Xeon(R)
// Processor" with AVX-512) for Prescott and runs SSE3 kernels; npe then runs itself again with
// the kernels its CPU runs. A user's OPENBLAS_CORETYPE stands.
TEST_F(NpeCli, RunsTheBlasKernelsItsCpuRuns) {
  auto blas_of = [](const std::string& environment) {
    const std::string command = "env -u OPENBLAS_CORETYPE -u NPE_OPENBLAS_REPLACED_CORE " +
                                environment + " " + NPE_EXECUTABLE + " devices --json";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string out;
    std::array<char, 512> buffer{};
    while (pipe && std::fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
    EXPECT_EQ(pipe ? ::pclose(pipe) : -1, 0) << command;
    return nlohmann::json::parse(out).at("blas").get<std::string>();
  };
  const auto chosen = blas_of("");
  if (chosen.empty()) GTEST_SKIP() << "libtorch does not use OpenBLAS here";
  const auto core = chosen.substr(0, chosen.find(' '));
  EXPECT_FALSE(npe::better_openblas_core(core, npe::this_cpu()).has_value()) << chosen;
  EXPECT_EQ(blas_of("OPENBLAS_CORETYPE=Prescott"), "Prescott (OPENBLAS_CORETYPE)");
}

TEST_F(NpeCli, BenchPeakTimesBothPrecisions) {
  auto result = run_npe("bench peak --seconds 0.06 --json");
  ASSERT_EQ(result.status, 0) << result.output;
  const auto row = nlohmann::json::parse(result.stdout_only);
  EXPECT_GT(row.at("fp32_tile_gflops").get<double>(), 0.0);
  // The instruction probes and the bf16 tile run where the CPU has them (null elsewhere); a
  // rate, when there, is a plausible one: above 0 and below 10 TFLOP/s for one core.
  EXPECT_EQ(row.at("bf16_tile_gflops").is_null(), !npe::bf16_unavailable_reason().empty());
  for (const char* key :
       {"fp32_instruction_gflops", "bf16_instruction_gflops", "bf16_tile_gflops"}) {
    if (row.at(key).is_null()) continue;
    EXPECT_GT(row.at(key).get<double>(), 0.0) << key;
    EXPECT_LT(row.at(key).get<double>(), 10000.0) << key;
  }
  auto bad = run_npe("bench peak --seconds 0");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("--seconds"), std::string::npos) << bad.output;
}

TEST_F(NpeCli, BenchNeedsAKnownSuite) {
  auto r = run_npe("bench speed");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("unknown bench suite"), std::string::npos) << r.output;
}

namespace {

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::vector<std::vector<std::string>> read_csv(const fs::path& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    for (std::string field; std::getline(stream, field, ',');) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

}  // namespace

// npe predict: one output row per target row, in order, with the inputs, any outputs the
// targets file has, then mean and std; a target with a NaN input gets nan predictions.
TEST_F(NpeCli, PredictWritesMeanAndStdForEveryTargetRow) {
  const auto model = (dir / "cnp.pt").string();
  const auto trained = run_npe("train --model cnp --steps 5 --val-tasks 0 --seed 3 --out " + model);
  ASSERT_EQ(trained.status, 0) << trained.output;
  // Not validated: said so, with no "nan ± nan" figure.
  EXPECT_NE(trained.output.find("(not validated)"), std::string::npos) << trained.output;
  EXPECT_EQ(trained.output.find("nan"), std::string::npos) << trained.output;
  write_text(dir / "context.csv", "x,y\n-1,0.5\n0,1.0\n0.5,nan\n1,-0.5\n");
  write_text(dir / "targets.csv", "x,y\n-2,0.1\n0.25,0.9\nnan,0\n2,-0.3\n");
  const auto out = dir / "prediction.csv";
  auto r =
      run_npe("predict --checkpoint " + model + " --context " + (dir / "context.csv").string() +
              " --targets " + (dir / "targets.csv").string() + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1 context rows with NaN"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mean log-likelihood"), std::string::npos) << r.output;
  const auto rows = read_csv(out);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"x", "y", "mean", "std"}));
  for (size_t i : {1u, 2u, 4u}) {
    ASSERT_EQ(rows[i].size(), 4u);
    EXPECT_TRUE(std::isfinite(std::stod(rows[i][2]))) << i;
    EXPECT_GT(std::stod(rows[i][3]), 0.0) << i;
  }
  EXPECT_EQ(rows[1][0], "-2");
  EXPECT_EQ(rows[4][0], "2");
  EXPECT_EQ(rows[3][2], "nan");

  // A model of another input dimension is refused, and nothing is written over the old file.
  write_text(dir / "targets-2d.csv", "x1,x2\n0,0\n");
  r = run_npe("predict --checkpoint " + model + " --context " + (dir / "context.csv").string() +
              " --targets " + (dir / "targets-2d.csv").string() + " --out " + out.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("2 input columns, the model takes 1"), std::string::npos) << r.output;
  EXPECT_EQ(read_csv(out).size(), 5u);
  // Joint samples need a joint predictive.
  r = run_npe("predict --checkpoint " + model + " --samples 2 --context " +
              (dir / "context.csv").string() + " --targets " + (dir / "targets.csv").string() +
              " --out " + (dir / "s.csv").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("no joint predictive"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "s.csv"));
}

// The user's own series end to end (issue 104): npe train on a CSV of dates, npe eval on its
// held-out tail (in the data's units too) and on another file read with the checkpoint's
// standardisation, npe predict from files with the model's column names and dates, written in
// the data's units; a GP fitted per task on the same tasks; bad files refused naming the line.
TEST_F(NpeCli, OwnSeriesTrainEvaluateAndPredictInTheDataUnits) {
  const auto write_series = [&](const fs::path& path, double offset, int hours) {
    std::string text = "time;level\n";
    char line[80];
    for (int h = 0; h < hours; ++h) {
      const int day = 1 + h / 24, hour = h % 24;
      std::snprintf(line, sizeof line, "2021/03/%02d %02d:00;%.3f\n", day, hour,
                    offset + 3.0 * std::sin(2.0 * M_PI * h / 24.0));
      text += line;
    }
    write_text(path, text);
  };
  const auto data = dir / "level.csv";
  write_series(data, 100.0, 24 * 30);
  const auto model = (dir / "series.pt").string();
  auto r = run_npe("train --model tetnp --task series --data " + data.string() +
                   " --task-option window=48 --steps 4 --val-tasks 16 --out " + model);
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_npe("eval --checkpoint " + model + " --tasks 32 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  auto json = nlohmann::json::parse(r.stdout_only);
  // The data are in metres around 100 with a spread of about 2: the data-unit log-likelihood is
  // the standardised one less log σ.
  const double log_scale = json["ll_mean"].get<double>() - json["ll_mean_data_units"].get<double>();
  EXPECT_NEAR(log_scale, std::log(2.12), 0.1) << r.stdout_only;
  EXPECT_NE(r.output.find("hours since 2021-03-01 00:00"), std::string::npos) << r.output;
  // Another file: all of it test data, with the training standardisation.
  const auto other = dir / "other.csv";
  write_series(other, 101.0, 24 * 10);
  r = run_npe("eval --checkpoint " + model + " --data " + other.string() + " --tasks 16");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("All of it is test data"), std::string::npos) << r.output;
  // A GP fitted per task, on the same tasks.
  r = run_npe("eval --model gp-fitted --fit-iterations 20 --task series --data " + data.string() +
              " --task-option window=48 --tasks 16");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("in the data's units"), std::string::npos) << r.output;

  // Predict: context and targets with the model's columns and dates; out in metres, dates kept.
  write_text(dir / "context.csv",
             "time;level\n2021/04/01 00:00;100\n2021/04/01 06:00;103\n2021/04/01 12:00;100\n"
             "2021/04/01 18:00;97\n");
  write_text(dir / "targets.csv", "time\n2021/04/01 03:00\n2021/04/01 21:00\n");
  const auto out = dir / "predicted.csv";
  r = run_npe("predict --checkpoint " + model + " --context " + (dir / "context.csv").string() +
              " --targets " + (dir / "targets.csv").string() + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto rows = read_csv(out);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"time", "level_mean", "level_std"}));
  EXPECT_EQ(rows[1][0], "2021-04-01 03:00");
  EXPECT_NEAR(std::stod(rows[1][1]), 100.0, 10.0);
  EXPECT_GT(std::stod(rows[1][2]), 0.0);
  // Numbers where the model read dates, and a file without the model's column: refused.
  write_text(dir / "numbers.csv", "time;level\n1;100\n2;101\n");
  r = run_npe("predict --checkpoint " + model + " --context " + (dir / "numbers.csv").string() +
              " --targets " + (dir / "targets.csv").string() + " --out " + out.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("the model's was date-times"), std::string::npos) << r.output;
  write_text(dir / "renamed.csv", "time;height\n2021/04/01 00:00;100\n");
  r = run_npe("predict --checkpoint " + model + " --context " + (dir / "renamed.csv").string() +
              " --targets " + (dir / "targets.csv").string() + " --out " + out.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("no column 'level'"), std::string::npos) << r.output;
  // A file whose dates change form half-way is refused, naming the line.
  write_text(dir / "mixed.csv", "time,level\n2021-03-01 00:00,1\n01.03.2021 01:00,2\n");
  r = run_npe("train --model cnp --task series --data " + (dir / "mixed.csv").string() +
              " --steps 1 --out " + (dir / "mixed.pt").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("line 3"), std::string::npos) << r.output;
}

// The user's own pictures end to end (issue 104): npe train on a folder of colour PNGs in
// sub-folders (D_y = 3), npe eval on its held-out pictures and on another folder, whose
// pictures are then all test data; a single picture instead of a folder is refused.
TEST_F(NpeCli, OwnPicturesTrainAndEvaluate) {
  const auto write_folder = [&](const fs::path& folder, int count, double blue) {
    for (int k = 0; k < count; ++k) {
      const auto sub = folder / (k % 2 ? "a" : "b");
      fs::create_directories(sub);
      auto r = torch::linspace(0.0, 1.0, 12).unsqueeze(1).expand({12, 12});
      auto g = torch::full({12, 12}, 0.05 * (k % 20));
      auto b = torch::full({12, 12}, blue);
      npe::write_png(sub / ("p" + std::to_string(k) + ".png"), torch::stack({r, g, b}, -1));
    }
  };
  write_folder(dir / "pictures", 40, 0.5);
  write_folder(dir / "others", 6, 0.2);
  const auto model = (dir / "pictures.pt").string();
  auto r = run_npe("train --model cnp --task pictures --data " + (dir / "pictures").string() +
                   " --task-option max_targets=64 --steps 3 --val-tasks 8 --out " + model);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("40 pictures (PNG/JPEG folder), colour, 12 x 12 pixels"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("on a 24 x 24 canvas, moved by up to 6 pixels"), std::string::npos)
      << r.output;
  r = run_npe("eval --checkpoint " + model + " --tasks 8 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(std::isfinite(nlohmann::json::parse(r.stdout_only)["ll_mean"].get<double>()));
  r = run_npe("eval --checkpoint " + model + " --data " + (dir / "others").string() + " --tasks 8");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("6 test pictures (all of them are test data)"), std::string::npos)
      << r.output;
  r = run_npe("train --model cnp --task pictures --data " +
              (dir / "pictures" / "a" / "p1.png").string() + " --steps 1 --out " +
              (dir / "one.pt").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("choose the folder"), std::string::npos) << r.output;
}

// GP baselines predict at any D_x from the columns x1, x2, ...; gp-bayes draws coherent
// samples; the oracle, which needs the generating process, is refused.
TEST_F(NpeCli, PredictWithGpBaselinesInTwoDimensions) {
  write_text(dir / "context.csv", "# stations\nx1,x2,y\n0,0,1\n1,0,0.5\n0,1,0.2\n1,1,oops\n");
  write_text(dir / "targets.csv", "x1\tx2\n0.5\t0.5\n2\t2\n");
  const auto out = dir / "prediction.csv";
  auto r = run_npe("predict --model gp-fitted --fit-iterations 20 --context " +
                   (dir / "context.csv").string() + " --targets " + (dir / "targets.csv").string() +
                   " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("line 6"), std::string::npos) << r.output;  // the bad row, by line
  auto rows = read_csv(out);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"x1", "x2", "mean", "std"}));
  // Far from the data the GP returns to its prior: a larger std than between the stations.
  EXPECT_GT(std::stod(rows[2][3]), std::stod(rows[1][3]));

  write_text(dir / "context-1d.csv", "t,value\n-1,0.5\n0,1\n1,-0.5\n");
  write_text(dir / "targets-1d.csv", "t\n-0.5\n0.5\n");
  r = run_npe(
      "predict --model gp-bayes --bayes-grid 8 --bayes-periodic-grid 16 --samples 3 "
      "--x-columns t --y-columns value --context " +
      (dir / "context-1d.csv").string() + " --targets " + (dir / "targets-1d.csv").string() +
      " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  rows = read_csv(out);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"t", "mean", "std", "sample_1", "sample_2", "sample_3"}));
  // It also says what the context says about the kernel; the fitted GP does not weigh kernels.
  EXPECT_NE(r.output.find("what the context says about the kernel (posterior): se "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("periodic"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("what the context says"), r.output.rfind("what the context says"));
  r = run_npe("predict --model gp-oracle --context " + (dir / "context.csv").string() +
              " --targets " + (dir / "targets.csv").string() + " --out " + out.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("needs the process that generated the data"), std::string::npos)
      << r.output;
}

// npe predict --image: a picture and a mask in; the mean and standard deviation out as PNG
// pictures of the same size (the in-process prediction to within the 8-bit rounding) or as a CSV
// of every pixel. A mask of another size and a model that is not an image model are clear errors
// that write nothing.
TEST_F(NpeCli, PredictOverAPictureWritesPngAndCsv) {
  const auto model = (dir / "cnp.pt").string();
  const auto trained =
      run_npe("train --model cnp --task tfmnist --steps 2 --val-tasks 0 --out " + model);
  ASSERT_EQ(trained.status, 0) << trained.output;
  const int64_t h = 20, w = 31;  // not square, odd width: centres are row h/2, column w/2
  auto picture = torch::zeros({h, w, 1});
  picture.slice(0, 5, 15).slice(1, 8, 22).fill_(0.8);  // a light block on black
  torch::manual_seed(0);
  const auto mask = (torch::rand({h, w, 1}) > 0.7).to(torch::kFloat32);
  npe::write_png(dir / "picture.png", picture);
  npe::write_png(dir / "mask.png", mask);
  const std::string inputs = " --checkpoint " + model + " --image " +
                             (dir / "picture.png").string() + " --mask " +
                             (dir / "mask.png").string();

  // The same prediction in process.
  const auto is_context = mask.reshape({-1}).ge(0.5);
  const auto index = is_context.nonzero().squeeze(1);
  const auto x = npe::pixel_coordinates(h, w);
  npe::TaskBatch batch;
  batch.task.xc = x.index_select(0, index).unsqueeze(0);
  batch.task.yc =
      npe::read_png(dir / "picture.png", 1).reshape({-1, 1}).index_select(0, index).unsqueeze(0);
  batch.task.xt = x.unsqueeze(0);
  const auto expected = npe::load_predictor(model, torch::kCPU)->predict(batch);
  const auto mean = expected.mean[0].reshape({-1});
  const auto stddev = expected.stddev[0].reshape({-1});

  auto r = run_npe("predict" + inputs + " --out " + (dir / "mean.png").string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto mean_png = npe::read_png(dir / "mean.png", 1);
  const auto std_png = npe::read_png(dir / "mean-std.png", 1);
  ASSERT_EQ(mean_png.sizes(), (std::vector<int64_t>{h, w, 1}));
  ASSERT_EQ(std_png.sizes(), (std::vector<int64_t>{h, w, 1}));
  const double rounding = 0.5 / 255 + 1e-6;
  EXPECT_LE((mean_png.reshape({-1}) - mean.clamp(0, 1)).abs().max().item<double>(), rounding);
  EXPECT_LE((std_png.reshape({-1}) - stddev.clamp(0, 1)).abs().max().item<double>(), rounding);

  r = run_npe("predict" + inputs + " --out " + (dir / "pixels.csv").string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto table = npe::read_point_table(dir / "pixels.csv");
  EXPECT_EQ(table.columns,
            (std::vector<std::string>{"row", "column", "y", "context", "mean", "std"}));
  ASSERT_EQ(static_cast<int64_t>(table.rows.size()), h * w);
  double context_rows = 0;
  for (int64_t i = 0; i < h * w; ++i) {
    const auto& row = table.rows[static_cast<size_t>(i)];
    EXPECT_EQ(row[0], i / w);
    EXPECT_EQ(row[1], i % w);
    context_rows += row[3];
    EXPECT_NEAR(row[4], mean[i].item<double>(), 1e-6);
    EXPECT_NEAR(row[5], stddev[i].item<double>(), 1e-6);
  }
  EXPECT_EQ(context_rows, is_context.sum().item<double>());

  npe::write_png(dir / "small-mask.png", torch::ones({h - 1, w, 1}));
  r = run_npe("predict --checkpoint " + model + " --image " + (dir / "picture.png").string() +
              " --mask " + (dir / "small-mask.png").string() + " --out " +
              (dir / "bad.png").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("small-mask.png"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "bad.png"));
  EXPECT_FALSE(fs::exists(dir / "bad-std.png"));

  const auto curve_model = (dir / "curves.pt").string();
  ASSERT_EQ(run_npe("train --model cnp --steps 1 --val-tasks 0 --out " + curve_model).status, 0);
  r = run_npe("predict --checkpoint " + curve_model + " --image " + (dir / "picture.png").string() +
              " --mask " + (dir / "mask.png").string() + " --out " + (dir / "bad.png").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("needs a model of pictures"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "bad.png"));
}

// npe predict --grid: an ERA5 model over a whole grid that is not laid out like its training file
// (one time, a block of missing cells), written as CF NetCDF with values exactly where the data
// has them.
TEST_F(NpeCli, PredictOverAGridWritesCfNetcdf) {
  const fs::path checkpoint = fs::path(NPE_SOURCE_DIR) / "models" / "era5" / "tepttnp.pt";
  ASSERT_TRUE(fs::exists(checkpoint)) << "no shipped ERA5 model " << checkpoint;
  npe::GridOutput grid;
  const int rows = 20, cols = 24;
  for (int r = 0; r < rows; ++r) grid.latitudes.push_back(56.0 - 0.25 * r);
  for (int c = 0; c < cols; ++c) grid.longitudes.push_back(-8.0 + 0.25 * c);
  grid.valid_time = npe::utc_seconds(2019, 3, 10, 12);
  auto r_index = torch::arange(rows, torch::kFloat64).view({rows, 1});
  auto c_index = torch::arange(cols, torch::kFloat64).view({1, cols});
  auto t2m = 278.0 + 0.15 * r_index - 0.1 * c_index + torch::sin(c_index / 3.0);
  t2m.index_put_({torch::indexing::Slice(2, 6), torch::indexing::Slice(3, 9)}, std::nan(""));
  grid.variables = {{"t2m", "2 metre temperature", "K", "air_temperature", t2m}};
  const auto data = dir / "grid.nc";
  npe::write_grid_netcdf(data, grid);

  const auto out = dir / "prediction.nc";
  auto r = run_npe("predict --checkpoint " + checkpoint.string() + " --grid " + data.string() +
                   " --context-fraction 0.2 --seed 3 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("456 cells from 91 context points"), std::string::npos) << r.output;
  npe::GriddedReadOptions mean_only;
  mean_only.variable = "mean";
  const auto mean = npe::read_gridded_field(out, mean_only);
  mean_only.variable = "std";
  const auto stddev = npe::read_gridded_field(out, mean_only);
  ASSERT_EQ(mean.values.sizes(), (std::vector<int64_t>{1, rows, cols}));
  EXPECT_EQ(mean.latitudes, grid.latitudes);
  EXPECT_EQ(mean.longitudes, grid.longitudes);
  EXPECT_EQ(mean.valid_times, std::vector<int64_t>{grid.valid_time});
  EXPECT_EQ(mean.units, "K");
  const auto has_value = torch::isfinite(t2m);
  // Values exactly where the data has them; close to the truth there.
  EXPECT_TRUE(torch::equal(torch::isfinite(mean.values[0]), has_value));
  EXPECT_TRUE(torch::equal(torch::isfinite(stddev.values[0]), has_value));
  const auto error = (mean.values[0].to(torch::kFloat64) - t2m).masked_select(has_value);
  EXPECT_LT(error.abs().mean().item<double>(), 1.5);
  EXPECT_GT(stddev.values[0].masked_select(has_value).min().item<float>(), 0.0f);
  // What tools see: a CF header with the coordinates' units.
  if (std::system("command -v ncdump > /dev/null 2>&1") == 0) {
    FILE* pipe = ::popen(("ncdump -h " + out.string()).c_str(), "r");
    std::string header;
    std::array<char, 512> buffer{};
    while (pipe && std::fgets(buffer.data(), buffer.size(), pipe)) header += buffer.data();
    if (pipe) ::pclose(pipe);
    EXPECT_NE(header.find(":Conventions = \"CF-1.8\""), std::string::npos) << header;
    EXPECT_NE(header.find("latitude:units = \"degrees_north\""), std::string::npos) << header;
    EXPECT_NE(header.find("float mean(time, latitude, longitude)"), std::string::npos) << header;
  }

  // A model of another task, or a mistake in the options: an error, and nothing written.
  const auto refused = dir / "refused.nc";
  r = run_npe("predict --checkpoint " +
              (fs::path(NPE_SOURCE_DIR) / "models/gp1d/tetnp.pt").string() + " --grid " +
              data.string() + " --context-fraction 0.2 --out " + refused.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("needs a model trained on gridded temperatures"), std::string::npos)
      << r.output;
  r = run_npe("predict --checkpoint " + checkpoint.string() + " --grid " + data.string() +
              " --out " + refused.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("exactly one of --stations and --context-fraction"), std::string::npos);
  EXPECT_FALSE(fs::exists(refused));
}

// A model trained with elevation and land fraction over a grid that reaches beyond the
// invariants file (34-72 N): cells without them have no prediction; tiles of the training
// window's size; the held-out summary.
TEST_F(NpeCli, PredictOverAGridGivesPlaceFeaturesWhereKnown) {
  ASSERT_TRUE(fs::exists(npe::default_era5_invariants_path()) &&
              fs::exists(npe::default_era5_path()))
      << "the shipped ERA5 data (data/era5) is missing";
  const auto model = (dir / "placed.pt").string();
  ASSERT_EQ(run_npe("train --model cnp --task era5 --steps 1 --val-tasks 0 --out " + model).status,
            0);
  npe::GridOutput grid;
  const int rows = 16, cols = 12;  // 35.5 down to 31.75 N: the last 9 rows are not covered
  for (int r = 0; r < rows; ++r) grid.latitudes.push_back(35.5 - 0.25 * r);
  for (int c = 0; c < cols; ++c) grid.longitudes.push_back(5.0 + 0.25 * c);
  grid.valid_time = npe::utc_seconds(2017, 1, 1, 12);
  auto t2m = 285.0 + 0.1 * torch::arange(rows * cols, torch::kFloat64).view({rows, cols});
  grid.variables = {{"t2m", "2 metre temperature", "K", "air_temperature", t2m}};
  const auto data = dir / "south.nc";
  npe::write_grid_netcdf(data, grid);
  const auto out = dir / "south-prediction.nc";
  auto r = run_npe("predict --checkpoint " + model + " --grid " + data.string() +
                   " --context-fraction 0.25 --tile 6 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  // 7 covered rows (35.5 to 34.0 N) x 12 columns, a quarter of them context.
  EXPECT_NE(r.output.find("84 cells from 21 context points"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("held-out cells 63: log-likelihood"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("108 cells without elevation or land fraction"), std::string::npos)
      << r.output;
  npe::GriddedReadOptions mean_only;
  mean_only.variable = "mean";
  const auto mean = npe::read_gridded_field(out, mean_only);
  const auto predicted = torch::isfinite(mean.values[0]);
  EXPECT_TRUE(predicted.narrow(0, 0, 7).all().item<bool>());
  EXPECT_FALSE(predicted.narrow(0, 7, rows - 7).any().item<bool>());
}

// "Trained here, predicts there": a model of the 0.25° British Isles file (kelvin) on a 0.5°
// grid in degrees Celsius with a hole of missing cells and one time step, through eval (the
// file as a whole is the test set) and predict (values in the file's units, distances in
// degrees whatever the resolution).
TEST_F(NpeCli, EvalAndPredictOnAGridOfAnotherResolutionAndUnits) {
  const fs::path checkpoint = fs::path(NPE_SOURCE_DIR) / "models" / "era5" / "tepttnp.pt";
  ASSERT_TRUE(fs::exists(checkpoint)) << "no shipped ERA5 model " << checkpoint;
  npe::GridOutput grid;
  const int rows = 24, cols = 24;
  for (int r = 0; r < rows; ++r) grid.latitudes.push_back(58.0 - 0.5 * r);
  for (int c = 0; c < cols; ++c) grid.longitudes.push_back(-10.0 + 0.5 * c);
  grid.valid_time = npe::utc_seconds(2019, 3, 20, 12);
  auto r_index = torch::arange(rows, torch::kFloat64).view({rows, 1});
  auto c_index = torch::arange(cols, torch::kFloat64).view({1, cols});
  // Smooth at the training data's scale: 0.3 K per 0.5° north to south, 0.1 K per 0.5° east.
  auto celsius = 5.0 + 0.3 * r_index - 0.1 * c_index;
  celsius.index_put_({torch::indexing::Slice(0, 8), torch::indexing::Slice(0, 6)}, std::nan(""));
  grid.variables = {{"Tair", "near-surface air temperature", "degC", "air_temperature", celsius}};
  const auto data = dir / "half-degree-celsius.nc";
  npe::write_grid_netcdf(data, grid);

  auto e = run_npe("eval --checkpoint " + checkpoint.string() + " --data " + data.string() +
                   " --tasks 8 --threads 1");
  ASSERT_EQ(e.status, 0) << e.output;
  const auto at = e.output.find("log-likelihood ");
  ASSERT_NE(at, std::string::npos) << e.output;
  const double ll = std::stod(e.output.substr(at + 15));
  EXPECT_TRUE(std::isfinite(ll)) << e.output;
  EXPECT_GT(ll, -10.0) << e.output;  // in standardised units; °C read as kelvin would be ~-1e4
  // A baseline on the same file: the file as a whole, with its own statistics (coordinates
  // only, so that the test needs no invariants file).
  auto b = run_npe("eval --model gp-se-ard --task era5 --data " + data.string() +
                   " --task-option 'features=[]' --tasks 4 --fit-iterations 20 --threads 1");
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find("log-likelihood"), std::string::npos) << b.output;

  const auto out = dir / "half-degree-prediction.nc";
  auto r = run_npe("predict --checkpoint " + checkpoint.string() + " --grid " + data.string() +
                   " --context-fraction 0.3 --seed 1 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  npe::GriddedReadOptions mean_only;
  mean_only.variable = "mean";
  const auto mean = npe::read_gridded_field(out, mean_only);
  EXPECT_EQ(mean.units, "degC");
  const auto has_value = torch::isfinite(celsius);
  EXPECT_TRUE(torch::equal(torch::isfinite(mean.values[0]), has_value));
  const auto error = (mean.values[0].to(torch::kFloat64) - celsius).masked_select(has_value);
  EXPECT_LT(error.abs().mean().item<double>(), 1.0);
}

// Every subcommand has its own --help listing its typed options.
TEST_F(NpeCli, EverySubcommandHasHelp) {
  for (const auto& [command, option] :
       std::vector<std::pair<std::string, std::string>>{{"train --help", "--model"},
                                                        {"eval --help", "--checkpoint"},
                                                        {"predict --help", "--targets"},
                                                        {"bench accuracy --help", "--shifts"},
                                                        {"bench latency --help", "--repeats"},
                                                        {"bench train --help", "--steps"},
                                                        {"import-reference --help", "--heads"}}) {
    auto r = run_npe(command);
    EXPECT_EQ(r.status, 0) << command;
    EXPECT_NE(r.output.find(option), std::string::npos) << command << ": " << r.output;
  }
}

TEST_F(NpeCli, OptionsAreRangeCheckedAndNamed) {
  auto r = run_npe("train --model cnp --steps 0 --out x.pt");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--steps: Value 0 not in range 1 to 1000000000"), std::string::npos)
      << r.output;
  r = run_npe("eval --model gp-oracle --split training");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--split"), std::string::npos) << r.output;
  r = run_npe("eval --model gp-oracle --checkpoint x.pt");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("excludes"), std::string::npos) << r.output;
  // An absurd thread count is refused at once (100,000 threads took minutes to start).
  r = run_npe("eval --model gp-oracle --threads 100000");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--threads: Value 100000 not in range"), std::string::npos) << r.output;
  // So is an absurd batch (1e8 tasks used to fill memory for minutes before the first step).
  r = run_npe("train --model cnp --batch-size 100000000 --out x.pt");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--batch-size: Value 100000000 not in range"), std::string::npos)
      << r.output;
}

TEST_F(NpeCli, CudaWithoutAGpuIsAClearError) {
  auto r = run_npe("eval --model gp-oracle --tasks 4 --device cuda");
  // On a machine with a GPU this succeeds; without one it must say why it cannot.
  if (r.status != 0) {
    EXPECT_NE(r.output.find("no CUDA device"), std::string::npos) << r.output;
  }
}

// TorchScript models scripted by PyTorch (tests/torchscript/make_torchscript_models.py, made at
// build time): npe runs them as PyTorch does.
class NpeTorchScript : public NpeCli {
 protected:
  void SetUp() override {
    NpeCli::SetUp();
    models = NPE_TORCHSCRIPT_MODELS_DIR;
    if (!fs::exists(models / "te_np.pt"))
      GTEST_SKIP() << "no TorchScript test models (python3 cannot import torch)";
  }
  fs::path models;
};

TEST_F(NpeTorchScript, PredictReproducesPyTorchsMeanAndStd) {
  for (const std::string name : {"te_np.pt", "absolute_np.pt", "joint_np.pt"}) {
    SCOPED_TRACE(name);
    const auto out = dir / (name + ".csv");
    auto r = run_npe("predict --checkpoint " + (models / name).string() + " --context " +
                     (models / "context.csv").string() + " --targets " +
                     (models / "targets.csv").string() + " --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.output;
    const auto got = npe::read_point_table(out);
    const auto want = npe::read_point_table(models / (name + ".expected.csv"));
    ASSERT_EQ(got.rows.size(), want.rows.size());
    for (const char* column : {"mean", "std"}) {
      const int g = got.column_index(column), w = want.column_index(column);
      ASSERT_GE(g, 0);
      for (size_t i = 0; i < got.rows.size(); ++i)
        EXPECT_NEAR(got.rows[i][g], want.rows[i][w], 1e-5) << column << " row " << i;
    }
  }
}

TEST_F(NpeTorchScript, WhatWasAssumedIsSaid) {
  auto r = run_npe("predict --checkpoint " + (models / "absolute_np.pt").string() + " --context " +
                   (models / "context.csv").string() + " --targets " +
                   (models / "targets.csv").string() + " --out " + (dir / "p.csv").string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("D_x = 1 and D_y = 1 were found by a trial call"), std::string::npos)
      << r.output;
}

double eval_ll(const std::string& output) {
  return nlohmann::json::parse(output).at("ll_mean").get<double>();
}

TEST_F(NpeTorchScript, EvalUnderAShiftIsUnchangedOnlyForTheEquivariantModel) {
  auto eval = [&](const std::string& name, const char* shift) {
    auto r = run_npe("eval --checkpoint " + (models / name).string() +
                     " --tasks 32 --seed 3 --json --shift " + shift);
    EXPECT_EQ(r.status, 0) << r.output;
    return eval_ll(r.stdout_only);
  };
  EXPECT_NEAR(eval("te_np.pt", "0"), eval("te_np.pt", "3.7"), 1e-5);
  EXPECT_GT(std::abs(eval("absolute_np.pt", "0") - eval("absolute_np.pt", "3.7")), 1e-3);
}

TEST_F(NpeTorchScript, BenchAccuracyAndLatencyTakeTheFile) {
  const auto file = (models / "te_np.pt").string();
  auto accuracy =
      run_npe("bench accuracy --model " + file + " --models gp-oracle --tasks 16 --shifts 0,2");
  ASSERT_EQ(accuracy.status, 0) << accuracy.output;
  EXPECT_NE(accuracy.output.find("te_np "), std::string::npos) << accuracy.output;
  auto latency = run_npe("bench latency --model " + file + " --models none --repeats 2 --warmup 1");
  ASSERT_EQ(latency.status, 0) << latency.output;
  EXPECT_NE(latency.output.find("te_np "), std::string::npos) << latency.output;
}

TEST_F(NpeTorchScript, ABrokenModelIsAnErrorNotACrash) {
  auto r = run_npe("predict --checkpoint " + (models / "throws.pt").string() + " --context " +
                   (models / "context.csv").string() + " --targets " +
                   (models / "targets.csv").string() + " --out " + (dir / "p.csv").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("this model refuses every context"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "p.csv"));
}

// npe place: the proposals of a translation-equivariant model move with the data; a GP
// baseline's come from its exact variance reduction.
TEST_F(NpeCli, PlaceProposalsMoveWithTheDataForAnEquivariantModel) {
  auto write = [&](const fs::path& path, const std::string& text) { std::ofstream(path) << text; };
  auto place = [&](double shift, const std::string& model) {
    std::ostringstream context, candidates;
    context << "x,y\n";
    const double xs[] = {-1.5, -0.4, 0.3, 1.1}, ys[] = {0.2, -0.7, 0.5, 1.3};
    for (int i = 0; i < 4; ++i) context << xs[i] + shift << "," << ys[i] << "\n";
    candidates << "x\n";
    for (int i = 0; i <= 40; ++i) candidates << -2.0 + 0.1 * i + shift << "\n";
    write(dir / "context.csv", context.str());
    write(dir / "candidates.csv", candidates.str());
    auto r = run_npe("place " + model + " --context " + (dir / "context.csv").string() +
                     " --candidates " + (dir / "candidates.csv").string() + " --count 3 --out " +
                     (dir / "placed.csv").string());
    EXPECT_EQ(r.status, 0) << r.output;
    return npe::read_point_table(dir / "placed.csv");
  };
  const auto tetnp = "--checkpoint " + std::string(NPE_SOURCE_DIR) + "/models/gp1d/tetnp.pt";
  const auto here = place(0.0, tetnp), there = place(3.5, tetnp);
  ASSERT_EQ(here.rows.size(), 3u);
  ASSERT_EQ(there.rows.size(), 3u);
  EXPECT_EQ(here.columns, (std::vector<std::string>{"order", "x", "score"}));
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(here.rows[k][0], double(k + 1));
    EXPECT_NEAR(there.rows[k][1] - here.rows[k][1], 3.5, 1e-6);
    EXPECT_NEAR(there.rows[k][2], here.rows[k][2], 1e-3);
  }
  const auto gp = place(0.0, "--model gp-fitted --fit-iterations 20");
  ASSERT_EQ(gp.rows.size(), 3u);
  EXPECT_GT(gp.rows[0][2], 0.0);
}

// npe place --grid: stations by latitude and longitude in a window of a grid, as the Maps tab
// places them (core's era5_scene). The field repeats every 8 columns, so moving the stations and
// the window 8 columns east shows the translation-equivariant model the same data 2 degrees
// further east: the proposals are the same cells moved 8 columns, with the same scores. They are
// never a station's cell or one without a value.
TEST_F(NpeCli, PlaceOnAGridProposesFreeCellsThatMoveWithTheStations) {
  const fs::path checkpoint = fs::path(NPE_SOURCE_DIR) / "models" / "era5" / "tepttnp.pt";
  ASSERT_TRUE(fs::exists(checkpoint)) << "no shipped ERA5 model " << checkpoint;
  npe::GridOutput grid;
  const int rows = 20, cols = 40;
  for (int r = 0; r < rows; ++r) grid.latitudes.push_back(56.0 - 0.25 * r);
  for (int c = 0; c < cols; ++c) grid.longitudes.push_back(-8.0 + 0.25 * c);
  grid.valid_time = npe::utc_seconds(2019, 3, 10, 12);
  auto r_index = torch::arange(rows, torch::kFloat64).view({rows, 1});
  auto c_index = torch::arange(cols, torch::kFloat64).view({1, cols});
  auto t2m = 278.0 + 0.15 * r_index + 2.0 * torch::sin(c_index * (2.0 * M_PI / 8.0));
  // Missing cells in both windows, 8 columns apart.
  t2m.index_put_({torch::indexing::Slice(4, 7), torch::indexing::Slice(10, 12)}, std::nan(""));
  t2m.index_put_({torch::indexing::Slice(4, 7), torch::indexing::Slice(18, 20)}, std::nan(""));
  grid.variables = {{"t2m", "2 metre temperature", "K", "air_temperature", t2m}};
  const auto data = dir / "grid.nc";
  npe::write_grid_netcdf(data, grid);

  auto place = [&](int east, const std::string& extra) {
    std::ofstream(dir / "stations.csv") << "latitude,longitude\n"
                                        << "55.0," << grid.longitudes[size_t(12 + east)] << "\n"
                                        << "53.5," << grid.longitudes[size_t(16 + east)] << "\n"
                                        << "54.25," << grid.longitudes[size_t(9 + east)] << "\n"
                                        << "40.0,-30.0\n";
    const auto out = dir / ("placed" + std::to_string(east) + ".csv");
    auto r = run_npe("place --checkpoint " + checkpoint.string() + " --grid " + data.string() +
                     " --stations " + (dir / "stations.csv").string() + " --centre 54," +
                     std::to_string(grid.longitudes[size_t(15 + east)]) + " --count 2 " + extra +
                     " --out " + out.string());
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("1 stations left out"), std::string::npos) << r.output;
    return npe::read_point_table(out);
  };
  const auto here = place(0, ""), there = place(8, "");
  ASSERT_EQ(here.rows.size(), 2u);
  ASSERT_EQ(there.rows.size(), 2u);
  EXPECT_EQ(here.columns,
            (std::vector<std::string>{"order", "latitude", "longitude", "row", "column", "score"}));
  const std::set<std::pair<int, int>> stations = {{4, 12}, {10, 16}, {7, 9}};
  std::set<std::pair<int, int>> proposed;
  for (size_t k = 0; k < 2; ++k) {
    const auto& p = here.rows[k];
    const int row = int(p[3]), col = int(p[4]);
    EXPECT_EQ(p[0], double(k + 1));
    EXPECT_EQ(p[1], grid.latitudes[size_t(row)]);
    EXPECT_EQ(p[2], grid.longitudes[size_t(col)]);
    // In the window (rows 1-15, columns 8-22), free, with a value; each once.
    EXPECT_TRUE(row >= 1 && row <= 15 && col >= 8 && col <= 22) << row << ", " << col;
    EXPECT_FALSE(stations.count({row, col})) << row << ", " << col;
    EXPECT_TRUE(std::isfinite(t2m[row][col].item<double>())) << row << ", " << col;
    EXPECT_TRUE(proposed.insert({row, col}).second);
    EXPECT_GT(p[5], 0.0);
    EXPECT_EQ(there.rows[k][3], p[3]);
    EXPECT_EQ(there.rows[k][4], p[4] + 8);
    EXPECT_NEAR(there.rows[k][5], p[5], 1e-3 * p[5]);
  }
  // The cheaper score ranks by the predictive std (K) at the cell.
  const auto by_std = place(0, "--score std");
  ASSERT_EQ(by_std.rows.size(), 2u);
  EXPECT_GT(by_std.rows[0][5], 0.0);

  // Mistakes are errors, and nothing is written.
  const auto refused = dir / "refused.csv";
  auto r =
      run_npe("place --checkpoint " + (fs::path(NPE_SOURCE_DIR) / "models/gp1d/tetnp.pt").string() +
              " --grid " + data.string() + " --stations " + (dir / "stations.csv").string() +
              " --out " + refused.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("needs a model trained on gridded temperatures"), std::string::npos)
      << r.output;
  r = run_npe("place --model gp-fitted --grid " + data.string() + " --stations " +
              (dir / "stations.csv").string() + " --out " + refused.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--grid needs --checkpoint"), std::string::npos) << r.output;
  std::ofstream(dir / "no-latitude.csv") << "lat_deg,longitude\n54,-4\n";
  r = run_npe("place --checkpoint " + checkpoint.string() + " --grid " + data.string() +
              " --stations " + (dir / "no-latitude.csv").string() + " --out " + refused.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("no column named latitude"), std::string::npos) << r.output;
  r = run_npe("place --checkpoint " + checkpoint.string() + " --grid " + data.string() +
              " --stations " + (dir / "stations.csv").string() + " --time 2020-01-01T00:00 --out " +
              refused.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("has no time 2020-01-01"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(refused));
}

}  // namespace
