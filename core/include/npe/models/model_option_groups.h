#pragma once
// The option groups model kinds are made of. A kind's options are the groups it reads (e.g.
// TE-TNP: OptionsOf<TransformerOptions, TeAttentionOptions, LayerSharingOptions>, declared in its
// own header); code shared by several kinds reads the group it needs, whatever the kind.
// Defaults are the paper's sizes (Ashman et al. Appendix F); model_sizes() names smaller ones.

#include <cstdint>
#include <string>

#include "npe/models/model_options.h"

namespace npe {

/// CNP and RCNP: the width of the encoder's representation.
struct TokenOptions {
  int64_t dim_model = 128;
  void fields(OptionVisitor& v) {
    v.field("dim_model", dim_model, 1, 8192, "representation width D_z");
  }
};

/// The transformer every TNP kind is built on.
struct TransformerOptions {
  int64_t dim_model = 128;
  int64_t num_layers = 5;
  int64_t num_heads = 8;
  int64_t head_dim = 16;
  void fields(OptionVisitor& v) {
    v.field("dim_model", dim_model, 1, 8192, "token width D_z");
    v.field("num_layers", num_layers, 1, 256, "transformer layers L");
    v.field("num_heads", num_heads, 1, 1024, "attention heads H");
    v.field("head_dim", head_dim, 1, 4096, "width of each head");
  }
};

/// Translation-equivariant attention (TE-TNP paper eqs. 8-10).
struct TeAttentionOptions {
  int64_t pairwise_width = 128;
  int64_t distance_frequencies = 0;
  int64_t context_frequencies = 0;
  bool update_locations = true;
  std::string place_features = "tokens";
  void fields(OptionVisitor& v) {
    v.field("pairwise_width", pairwise_width, 1, 8192,
            "hidden width of the pairwise MLPs (rho, phi): the main cost of TE attention");
    // Not in the paper (0, its default, is its rho): a ReLU MLP of the raw difference needs
    // about one hidden unit per half cycle to draw a periodic kernel, which the short-period
    // GP tasks measured as the largest gap to the ceiling.
    v.field("distance_frequencies", distance_frequencies, 0, 1024,
            "rho also sees cos and sin of F learnt frequencies of each location difference "
            "(initial periods log-spaced from 1/8 to 16 input units; 0: the paper's rho)");
    // Not in the paper either: distance_frequencies' bank is the same for every task; a
    // periodic task's own period has to be read off its context (context_spectrum.h).
    v.field("context_frequencies", context_frequencies, 0, 16,
            "rho also sees cos and sin of the context's J strongest frequencies per input "
            "dimension (its periodogram's peaks, periods 1/8 to 16 input units), weighted by "
            "their power; translation invariant (0: none; TE-TNP and TE-TNP-ND)");
    // On by default, as in the paper's 1-D models (Appendix F.1; its Table 7 ablates it).
    v.field("update_locations", update_locations,
            "update the input locations after each attention (paper eq. 10)");
    // Absolute features let a model trained on a few weeks of one region tell its places apart
    // and learn each place's weather, which does not carry to another region; their
    // differences (how much higher, how much more land) carry, as a lapse rate does.
    v.field("place_features", place_features, {"tokens", "differences"},
            "place features (ERA5 elevation, land fraction) enter every token as values, or "
            "the pairwise MLPs as differences between places, as the coordinates do");
  }
};

/// TE-TNP, TE-TNP-ND and BSA-TNP: each layer's context self-attention and target
/// cross-attention share weights (as in the TE-TNP authors' public code and BSA-TNP's KRBlocks)
/// instead of having their own (as the TE-TNP paper's text describes).
struct LayerSharingOptions {
  bool share_layer_weights = false;
  void fields(OptionVisitor& v) {
    v.field("share_layer_weights", share_layer_weights,
            "each layer's self- and cross-attention share weights");
  }
};

/// PT-TNP and TE-PT-TNP: the pseudo-tokens M.
struct PseudoTokenOptions {
  int64_t num_pseudo_tokens = 32;
  void fields(OptionVisitor& v) {
    v.field("num_pseudo_tokens", num_pseudo_tokens, 1, 65536, "pseudo-tokens M");
  }
};

/// TE-PT-TNP: how the initial pseudo-locations follow the context. "attention": paper eq. 11,
/// v_m = v0_m + sum_n psi(u_m, z_n) x_n with psi a softmax over the context; "context_mean":
/// v_m = v0_m + mean_n x_n (the authors' public code's default initialiser). Both translate
/// exactly with the data.
struct PseudoLocationOptions {
  std::string pseudo_locations = "attention";
  void fields(OptionVisitor& v) {
    v.field("pseudo_locations", pseudo_locations, {"attention", "context_mean"},
            "how the initial pseudo-locations follow the context (paper eq. 11, or the mean)");
  }
};

/// TNP-ND kinds (Nguyen & Grover Section 3.3): "cholesky" (Sigma = L L^T, L = lower(H H^T),
/// their eq. 10) or "lowrank" (Sigma = diag(exp d) + A A^T); self-attention layers over the
/// target tokens before the projection, the projection MLP's layers, and the dimension p of each
/// target's vector h (their Appendix A.3: 2 layers, 4 layers, p = 20).
struct CovarianceOptions {
  std::string covariance = "cholesky";
  int64_t covariance_layers = 2;
  int64_t projection_layers = 4;
  int64_t projection_dim = 20;
  void fields(OptionVisitor& v) {
    v.field("covariance", covariance, {"cholesky", "lowrank"}, "how the covariance is built");
    v.field("covariance_layers", covariance_layers, 1, 256,
            "self-attention layers over the targets before the projection");
    v.field("projection_layers", projection_layers, 1, 256, "layers of the projection MLP");
    v.field("projection_dim", projection_dim, 1, 4096, "dimension p of each target's vector");
  }
};

/// TNP-A: random target orders averaged (log-mean-exp of the likelihoods, Nguyen & Grover eq. 7)
/// when evaluating; training uses the order of the batch.
struct PermutationOptions {
  int64_t num_permutations = 1;
  void fields(OptionVisitor& v) {
    v.field("num_permutations", num_permutations, 1, 100000,
            "target orders averaged when evaluating");
  }
};

/// BSA-TNP: RBF features F of each head's attention bias sum_f a_f exp(-b_f ||x - x'||^2)
/// (Jenson et al. use 5 for space). time_bias_features = 0 gives one bias over the distance
/// across all coordinates; above 0, the last coordinate is time with its own bias of this many
/// features and bias_features act on space alone (their ERA5 model: 5 for space, 3 for time).
struct AttentionBiasOptions {
  int64_t bias_features = 5;
  int64_t time_bias_features = 0;
  void fields(OptionVisitor& v) {
    v.field("bias_features", bias_features, 1, 64, "RBF features of each head's attention bias");
    v.field("time_bias_features", time_bias_features, 0, 64,
            "RBF features of a separate bias for time, the last coordinate (0: none)");
  }
};

/// The 1-D (off-grid) ConvCNP: its discretisation grid and U-Net.
struct ConvCnpOptions {
  double points_per_unit = 64.0;
  int64_t conv_channels = 128;
  int64_t kernel_size = 9;
  int64_t unet_depth = 5;
  int64_t max_grid_points = int64_t{1} << 18;
  void fields(OptionVisitor& v) {
    v.field("points_per_unit", points_per_unit, 1e-3, 1e6, "grid points per unit of input");
    v.field("conv_channels", conv_channels, 1, 8192, "CNN channels");
    v.field("kernel_size", kernel_size, 1, 255, "convolution kernel size");
    v.field("unet_depth", unet_depth, 0, 12, "U-Net depth");
    v.field("max_grid_points", max_grid_points, 1, int64_t{1} << 40,
            "largest grid before a resource-limit error");
  }
};

/// The on-grid ConvCNP (images, gridded maps): its CNN.
struct ConvCnp2dOptions {
  int64_t conv_channels = 128;
  int64_t kernel_size = 9;
  int64_t cnn_layers = 5;
  void fields(OptionVisitor& v) {
    v.field("conv_channels", conv_channels, 1, 8192, "CNN channels");
    v.field("kernel_size", kernel_size, 1, 255, "convolution kernel size");
    v.field("cnn_layers", cnn_layers, 0, 256, "convolution layers");
  }
};

}  // namespace npe
