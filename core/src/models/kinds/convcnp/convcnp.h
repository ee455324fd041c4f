#pragma once

#include <torch/nn/modules/conv.h>

#include "npe/models/grid_predictor.h"
#include "npe/models/model.h"
#include "npe/models/model_spec.h"
#include "npe/models/modules.h"

namespace npe {

/// U-Net on a 1-D grid (paper F.1): an input convolution, `depth` down-sampling stages
/// (convolution, then average pooling by 2) and `depth` up-sampling stages (linear
/// up-sampling by 2, concatenation with the skip connection, convolution 2C -> C): 2 depth + 1
/// convolutions of kernel size k, stride 1. Input length must be a multiple of 2^depth.
class UNet1dImpl : public torch::nn::Module {
 public:
  UNet1dImpl(int64_t in_channels, int64_t channels, int64_t kernel_size, int64_t depth);
  torch::Tensor forward(torch::Tensor x);  // [B, Cin, N] -> [B, C, N]

 private:
  torch::nn::Conv1d m_in{nullptr};
  std::vector<torch::nn::Conv1d> m_down, m_up;
};
TORCH_MODULE(UNet1d);

/// Off-grid 1-D ConvCNP. SetConv encoder onto a uniform grid (density channel plus data channels
/// normalised by density, RBF weights with a learnable lengthscale), U-Net, SetConv decoder to
/// the targets, Gaussian head. Each task's grid is anchored at its leftmost context point and
/// covers all inputs plus a receptive-field margin, so translating the data by any Δ translates
/// the representation exactly: predictions are equivariant at every shift, not only at
/// multiples of the grid spacing.
class ConvCnpImpl final : public NeuralProcessImpl {
 public:
  explicit ConvCnpImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  torch::Tensor m_log_encoder_lengthscale, m_log_decoder_lengthscale;
  UNet1d m_unet{nullptr};
  GaussianHead m_head{nullptr};
};

/// On-grid 2-D ConvCNP (paper F.2) for images and gridded maps. Input: a grid of values with a
/// context mask; a CNN of `cnn_layers` convolutions (C channels, kernel k, same padding); a
/// per-cell Gaussian head. Through the common NeuralProcess interface, inputs are grid-cell
/// coordinates (D_x = 2, rounded to integers): the context is rasterised onto a grid that
/// covers context and targets plus the CNN's receptive field, and predictions are read at the
/// targets' cells. Place features (config.dim_features) of every context and target point are
/// rasterised too, as a density channel and the features: the CNN sees the terrain wherever a
/// point of the task lies, targets included.
class ConvCnp2dImpl final : public NeuralProcessImpl, public GridPredictor {
 public:
  explicit ConvCnp2dImpl(const ModelConfig& config);

  /// Without place features only (a grid of values has none): throws ConfigError otherwise.
  Prediction predict_grid(const torch::Tensor& values, const torch::Tensor& mask) override;

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  /// values [B,H,W,Dy], mask [B,H,W]; features [B,H,W,1+Df] (density, features) or undefined.
  Prediction run_grid(const torch::Tensor& values, const torch::Tensor& mask,
                      const torch::Tensor& features);

  std::vector<torch::nn::Conv2d> m_convs;
  GaussianHead m_head{nullptr};
};

// The model kinds of this file, for the registry: each kind's options and specification.

/// The convcnp kind's options.
using ConvCnpModelOptions = OptionsOf<ConvCnpOptions>;
ModelSpec convcnp_spec();
/// The convcnp2d kind's options.
using ConvCnp2dModelOptions = OptionsOf<ConvCnp2dOptions>;
ModelSpec convcnp2d_spec();

}  // namespace npe
