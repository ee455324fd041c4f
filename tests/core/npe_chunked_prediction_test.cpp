// Predictions over many targets, a chunk at a time (npe predict's points, pictures and grids),
// and a picture with a mask of its known pixels as an image model's task.

#include <vector>

#include "npe/data/image_tasks.h"
#include "npe/data/masked_picture.h"
#include "npe/errors.h"
#include "npe/predictors/chunked_prediction.h"
#include "npe/predictors/predictor_registry.h"
#include "test_support.h"

namespace npe {
namespace {

PredictorInfo call_size_info(bool joint) {
  PredictorInfo info{"calls", "calls", "counts the targets of each call", {}};
  info.capabilities.joint = joint;
  return info;
}

// Each target's mean is the number of targets in its call and its spread its input, so the
// result shows how the targets were split and whether they came back in order.
class CallSize final : public Predictor {
 public:
  explicit CallSize(bool joint) : Predictor(call_size_info(joint)) {}
  Prediction predict(const TaskBatch& batch) override {
    const auto nt = batch.task.num_targets();
    sizes.push_back(nt);
    return {torch::full({batch.task.batch_size(), nt, 1}, double(nt)),
            batch.task.xt.select(2, 0).unsqueeze(2).to(torch::kFloat32)};
  }
  std::vector<int64_t> sizes;
};

Task points(int64_t num_targets) {
  Task task;
  task.xc = torch::zeros({1, 3, 1});
  task.yc = torch::zeros({1, 3, 1});
  task.xt = torch::arange(num_targets, torch::kFloat32).view({1, num_targets, 1});
  return task;
}

TEST(ChunkedPrediction, MarginalsComeInChunksAndJointPredictivesSeeEveryTarget) {
  CallSize marginal(false), joint(true);
  const auto split = predict_in_chunks(marginal, points(10), 4);
  EXPECT_EQ(marginal.sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_TRUE(split.stddev.view({-1}).equal(torch::arange(10, torch::kFloat32)));
  EXPECT_EQ(split.mean[0][9][0].item<double>(), 2.0);
  predict_in_chunks(joint, points(10), 4);
  EXPECT_EQ(joint.sizes, (std::vector<int64_t>{10}));

  const auto none = predict_in_chunks(marginal, points(0), 4);
  EXPECT_EQ(none.mean.sizes(), (std::vector<int64_t>{1, 0, 1}));
  NPE_EXPECT_THROW_WITH(predict_in_chunks(marginal, points(10), 0), ConfigError, "at least 1");
}

TEST(ChunkedPrediction, ChunksChangeNoNumberOfAModel) {
  torch::manual_seed(3);
  PredictorOptions options;
  options.untrained = true;
  auto predictor = make_predictor("tetnp", options);
  auto task = points(37);
  task.xc = torch::randn({1, 6, 1});
  task.yc = torch::randn({1, 6, 1});
  task.xt = torch::linspace(-3, 3, 37).view({1, 37, 1});
  const auto whole = predict_in_chunks(*predictor, task, 37);
  const auto chunked = predict_in_chunks(*predictor, task, 5);
  EXPECT_LT(npe::testing::max_abs_diff(whole.mean, chunked.mean), 1e-6);
  EXPECT_LT(npe::testing::max_abs_diff(whole.stddev, chunked.stddev), 1e-6);
}

TEST(MaskedPicture, MaskedPixelsAreTheContextAndEveryPixelATarget) {
  const int64_t h = 5, w = 4;
  const auto picture = torch::arange(h * w * 3, torch::kFloat32).view({h, w, 3}) / 100;
  auto mask = torch::zeros({h, w, 1});
  mask[1][2][0] = 1.0;
  mask[4][0][0] = 0.5;  // half grey counts
  mask[0][0][0] = 0.49;
  const auto masked = masked_picture_task(picture, mask);
  ASSERT_EQ(masked.num_context(), 2);
  EXPECT_TRUE(masked.task.xt[0].equal(pixel_coordinates(h, w)));
  // Pixel (1, 2) is index 6; its input measured from the centre (row 2, column 2).
  EXPECT_TRUE(masked.task.xc[0][0].equal(torch::tensor({-1.0f, 0.0f})));
  EXPECT_TRUE(masked.task.yc[0][0].equal(picture[1][2]));
  EXPECT_TRUE(masked.task.yc[0][1].equal(picture[4][0]));
  EXPECT_EQ(masked.is_context.sum().item<int64_t>(), 2);
  EXPECT_TRUE(masked.values.equal(picture.view({-1, 3})));
  validate_task(masked.task);

  NPE_EXPECT_THROW_WITH(masked_picture_task(picture, torch::ones({h - 1, w, 1})), InvalidInputError,
                        "the mask is 4 x 4 pixels, the picture 4 x 5");
  NPE_EXPECT_THROW_WITH(masked_picture_task(picture, torch::zeros({h, w})), InvalidInputError,
                        "marks no context pixel");
  NPE_EXPECT_THROW_WITH(masked_picture_task(picture.view({-1}), mask), InvalidInputError,
                        "[height, width, channels]");
}

}  // namespace
}  // namespace npe
