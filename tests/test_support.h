#pragma once
// Helpers shared by the test suites: deterministic seeding and tiny model configurations.

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "npe/data/task.h"
#include "npe/errors.h"
#include "npe/models/model_config.h"

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

/// A configuration small enough that every test runs in well under a second on two cores.
inline ModelConfig tiny_config(const std::string& kind, int64_t dim_x = 1, int64_t dim_y = 1) {
  ModelConfig c(kind, dim_x, dim_y);
  c.set_options_where_present({{"dim_model", 16},
                               {"num_layers", 2},
                               {"num_heads", 2},
                               {"head_dim", 8},
                               {"pairwise_width", 16},
                               {"num_pseudo_tokens", 4},
                               {"conv_channels", 8},
                               {"kernel_size", 5},
                               {"unet_depth", 2},
                               {"points_per_unit", 16.0},
                               {"cnn_layers", 2}});
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
