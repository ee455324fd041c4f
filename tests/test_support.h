#pragma once
// Helpers shared by the test suites: deterministic seeding and tiny model configurations.

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "file_size_limit.h"
#include "npe/data/task_source.h"
#include "npe/errors.h"
#include "npe/ground/task.h"
#include "npe/models/model.h"
#include "npe/models/model_config.h"
#include "npe/models/size_preset.h"

namespace npe::testing {

/// Seeds libtorch before every test so weights and random inputs are reproducible.
class SeededTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::manual_seed(1234); }
};

/// A seeded test with a fresh folder of its own, `dir`, removed afterwards. The folder is named
/// after the process and the test, so tests that ctest runs in parallel never share one.
class TemporaryFolderTest : public SeededTest {
 protected:
  void SetUp() override {
    SeededTest::SetUp();
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = std::filesystem::temp_directory_path() /
          ("npe-" + std::string(test->test_suite_name()) + "-" + std::to_string(::getpid()) + "-" +
           test->name());
    std::filesystem::create_directories(dir);
  }
  void TearDown() override {
    std::error_code ignored;  // a folder left behind in /tmp is no reason to fail a test
    std::filesystem::remove_all(dir, ignored);
  }

  std::filesystem::path dir;
};

/// ProcessFileSizeLimit whose failure to take effect fails the test.
class FileSizeLimit : public ProcessFileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) : ProcessFileSizeLimit(bytes) { EXPECT_TRUE(set()); }
};

// Learning tests: a training run must lower a loss. What they assert is measured, not guessed:
// tests/measure-learning-spread.sh runs them under several BLAS kernels, thread counts and seeds
// and tabulates the figures report_learning prints; each threshold sits several times that
// spread below what training achieves (docs/developers/testing.md, "Learning tests").

/// Added to a learning test's seeds: NPE_LEARNING_TEST_SEED, 0 when unset (the spread script
/// sets 0, 1, 2).
inline uint64_t learning_seed() {
  const char* text = std::getenv("NPE_LEARNING_TEST_SEED");
  return text ? std::strtoull(text, nullptr, 10) : 0;
}

/// A task source that always gives the same batch, drawn once from `source`. Training on it must
/// lower that batch's loss by far more than the summation order can move it, so a learning test
/// on it tells a model that learns from one that does not on any machine; held-out gains of a
/// few short steps lie inside what BLAS kernels and thread counts move.
class FixedBatch final : public TaskSource {
 public:
  FixedBatch(const TaskSource& source, int64_t batch_size, uint64_t seed)
      : m_source(source), m_batch(source.sample(batch_size, seed)) {}

  const Task& task() const { return m_batch.task; }
  std::string name() const override { return m_source.name(); }
  int64_t dim_x() const override { return m_source.dim_x(); }
  int64_t dim_y() const override { return m_source.dim_y(); }
  TaskBatch sample(int64_t, uint64_t, const Translation& tau = {},
                   Split = Split::Train) const override {
    if (tau.empty()) return m_batch;
    return {m_batch.task.translated(tau), nullptr};
  }
  nlohmann::json to_json() const override { return m_source.to_json(); }
  Translation out_of_range_translation() const override {
    return m_source.out_of_range_translation();
  }

 private:
  const TaskSource& m_source;
  TaskBatch m_batch;
};

/// The training objective on `task` (nats per target, lower is better), without gradients.
inline double training_loss(NeuralProcessImpl& model, const Task& task) {
  torch::NoGradGuard no_grad;
  const bool training = model.is_training();
  model.eval();
  const double loss = -model.log_likelihood(task).mean().item<double>();
  model.train(training);
  return loss;
}

/// Prints the figures of a learning test for tests/measure-learning-spread.sh.
inline void report_learning(const std::string& what, double before, double after) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf("[learning] %s.%s %s: before %.6f after %.6f\n", test->test_suite_name(),
              test->name(), what.c_str(), before, after);
}

/// A configuration small enough that every test runs in well under a second on two cores.
inline ModelConfig tiny_config(const std::string& kind, int64_t dim_x = 1, int64_t dim_y = 1) {
  ModelConfig c(kind, dim_x, dim_y);
  SizePreset tiny;
  tiny.dim_model = 16;
  tiny.num_layers = 2;
  tiny.num_heads = 2;
  tiny.head_dim = 8;
  tiny.pairwise_width = 16;
  tiny.num_pseudo_tokens = 4;
  tiny.conv_channels = 8;
  tiny.kernel_size = 5;
  tiny.unet_depth = 2;
  tiny.points_per_unit = 16.0;
  tiny.cnn_layers = 2;
  tiny.apply_to(c);
  return c;
}

/// Random task with inputs in [-2, 2].
inline Task random_task(int64_t batch, int64_t nc, int64_t nt, int64_t dim_x = 1,
                        int64_t dim_y = 1) {
  return {torch::rand({batch, nc, dim_x}) * 4 - 2, torch::randn({batch, nc, dim_y}),
          torch::rand({batch, nt, dim_x}) * 4 - 2, torch::randn({batch, nt, dim_y})};
}

/// Largest absolute difference between two tensors.
inline double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

/// Expects `statement` to throw `Exception` whose message contains `fragment`.
#define NPE_EXPECT_THROW_WITH(statement, Exception, fragment)                       \
  do {                                                                              \
    try {                                                                           \
      statement;                                                                    \
      ADD_FAILURE() << "expected " #Exception " containing '" << (fragment) << "'"; \
    } catch (const Exception& e) {                                                  \
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)            \
          << "message was: " << e.what();                                           \
    }                                                                               \
  } while (0)

}  // namespace npe::testing
