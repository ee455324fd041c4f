#pragma once
// Hyperparameters of every neural-process model, as one serialisable record.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npe {

/// Model hyperparameters. Fields a model does not use are ignored by it (and still stored).
struct ModelConfig {
  /// Registry name (model_infos(): "cnp", "tnp", "tnpnd", ...).
  std::string kind;
  int64_t dim_x = 1;
  int64_t dim_y = 1;
  /// Of the D_x inputs, the last dim_features are properties of the place (ERA5: elevation and
  /// land-sea fraction), not coordinates: translation-equivariant models feed them into the
  /// tokens with the outputs and measure distances on the first dim_coordinates() inputs only;
  /// input_scale and the reference point apply to coordinates only. Models that see x directly
  /// (CNP, TNP, PT-TNP, the TNP-D family) take them as further inputs.
  int64_t dim_features = 0;
  /// Token / representation width D_z.
  int64_t dim_model = 128;
  /// Transformer layers L.
  int64_t num_layers = 5;
  int64_t num_heads = 8;
  int64_t head_dim = 16;
  /// Hidden width of the pairwise MLPs of TE attention (rho and phi); the main cost lever.
  int64_t pairwise_width = 128;
  /// TE attention: update input locations after each attention (paper eq. 10). On by default,
  /// as in the paper's 1-D models (Appendix F.1; its Table 7 ablates it).
  bool update_locations = true;
  /// TE-TNP and BSA-TNP: each layer's context self-attention and target cross-attention share
  /// weights (as in the TE-TNP authors' public code and BSA-TNP's KRBlocks) instead of having
  /// their own (as the TE-TNP paper's text describes).
  bool share_layer_weights = false;
  /// Number of pseudo-tokens M (PT-TNP, TE-PT-TNP).
  int64_t num_pseudo_tokens = 32;
  /// TE-PT-TNP: how the initial pseudo-locations follow the context. "attention": paper eq. 11,
  /// v_m = v0_m + sum_n psi(u_m, z_n) x_n with psi a softmax over the context; "context_mean":
  /// v_m = v0_m + mean_n x_n (the authors' public code's default initialiser). Both translate
  /// exactly with the data.
  std::string pseudo_locations = "attention";
  /// Gaussian head: false gives one learned noise level per output dimension.
  bool heteroscedastic = true;
  /// Lower bound added to the predictive standard deviation.
  double min_stddev = 1e-3;
  /// ConvCNP: grid points per unit of input (1-D), CNN channels, kernel size, and U-Net depth.
  double points_per_unit = 64.0;
  int64_t conv_channels = 128;
  int64_t kernel_size = 9;
  int64_t unet_depth = 5;
  /// ConvCNP 2-D: number of convolution layers.
  int64_t cnn_layers = 5;
  /// Inputs are multiplied by this before the model sees them (e.g. pixel coordinates to units
  /// of half an image). Must be 1 for the on-grid ConvCNP, which needs whole-cell coordinates.
  double input_scale = 1.0;
  /// ConvCNP 1-D: largest grid allowed before a ResourceLimitError.
  int64_t max_grid_points = int64_t{1} << 18;
  /// TNP-ND kinds (Nguyen & Grover Section 3.3): "cholesky" (Sigma = L L^T, L = lower(H H^T),
  /// their eq. 10) or "lowrank" (Sigma = diag(exp d) + A A^T); self-attention layers over the
  /// target tokens before the projection, the projection MLP's layers, and the dimension p of
  /// each target's vector h (their Appendix A.3: 2 layers, 4 layers, p = 20).
  std::string covariance = "cholesky";
  int64_t covariance_layers = 2;
  int64_t projection_layers = 4;
  int64_t projection_dim = 20;
  /// TNP-A: random target orders averaged (log-mean-exp of the likelihoods, their eq. 7) when
  /// evaluating; training uses the order of the batch.
  int64_t num_permutations = 1;
  /// BSA-TNP: RBF features F of each head's attention bias sum_f a_f exp(-b_f ||x - x'||^2)
  /// (Jenson et al. use 5 for space).
  int64_t bias_features = 5;
  /// BSA-TNP: 0 gives one bias over the distance across all coordinates; above 0, the last
  /// coordinate is time with its own bias of this many RBF features, and bias_features act on
  /// the other coordinates (space) alone (Jenson et al.'s ERA5 model: 5 for space, 3 for time).
  int64_t time_bias_features = 0;

  int64_t dim_coordinates() const { return dim_x - dim_features; }

  nlohmann::json to_json() const;
  /// Missing fields take their defaults; wrong types throw ConfigError.
  static ModelConfig from_json(const nlohmann::json& json);
};

/// The named sizes, smallest first: "small" (CPU-trainable in minutes), "medium" (small with
/// the paper's transformer: 5 layers of 8 heads x 16) and "paper" (Appendix F).
const std::vector<std::string>& model_sizes();

/// A named size (model_sizes()). Throws ConfigError for an unknown kind or size.
ModelConfig default_model_config(const std::string& kind, const std::string& size,
                                 int64_t dim_x = 1, int64_t dim_y = 1);

class TaskSource;
/// The size preset adapted to a task (D_x, D_y and the task's own settings, such as the
/// paper's D_z = 32 for images). Throws ConfigError.
ModelConfig default_model_config(const std::string& kind, const std::string& size,
                                 const TaskSource& task);

}  // namespace npe
