#pragma once
// The building blocks of the models' parameter counts (ModelSpec::parameter_count), shared by the
// specifications in each model's file. Each term follows one module's constructor (modules.cpp,
// tnp_encoders.cpp, tnpnd.cpp), so a model's size is known from its options before anything is
// allocated; a test builds every kind and compares.

#include <vector>

#include "models/tokens.h"
#include "npe/models/model_config.h"
#include "npe/models/model_option_groups.h"

namespace npe::parameter_terms {

inline double linear(double in, double out, bool bias = true) {
  return in * out + (bias ? out : 0.0);
}

/// Mlp(in, hidden, out): a linear layer (with bias) per step.
inline double mlp(double in, const std::vector<double>& hidden, double out) {
  double count = 0.0, width = in;
  for (double h : hidden) {
    count += linear(width, h);
    width = h;
  }
  return count + linear(width, out);
}

inline double layer_norm(double width) {
  return 2.0 * width;
}

/// token_embedder: two hidden layers of width D_z.
inline double token_embedder(double in, double dim_model) {
  return mlp(in, {dim_model, dim_model}, dim_model);
}

/// GaussianHead(in, hidden): an MLP with two hidden layers, plus a learned noise per output when
/// the noise is homoscedastic.
inline double gaussian_head(const ModelConfig& c, double in, double hidden) {
  const double dy = double(c.dim_y);
  return mlp(in, {hidden, hidden}, c.heteroscedastic ? 2.0 * dy : dy) +
         (c.heteroscedastic ? 0.0 : dy);
}

/// The token models' head: in and hidden width D_z.
inline double head(const ModelConfig& c) {
  const double dz = double(c.options<TransformerOptions>().dim_model);
  return gaussian_head(c, dz, dz);
}

/// Multi-head attention's projections: query, key and value without bias, the output with.
inline double attention_projections(const ModelConfig& c) {
  const auto& t = c.options<TransformerOptions>();
  const double dz = double(t.dim_model), inner = double(t.num_heads * t.head_dim);
  return 3.0 * linear(dz, inner, false) + linear(inner, dz);
}

/// What every attention block has besides its attention: three layer norms and the
/// feed-forward layer.
inline double block_rest(const ModelConfig& c) {
  const double dz = double(c.options<TransformerOptions>().dim_model);
  return 3.0 * layer_norm(dz) + mlp(dz, {dz}, dz);
}

/// AttentionBlock.
inline double attention_block(const ModelConfig& c) {
  return attention_projections(c) + block_rest(c);
}

/// TeAttentionBlock: the attention block plus the pairwise MLPs rho (logits from the dot
/// products and the differences, optionally their Fourier features) and, with the location
/// update, phi.
/// `context_spectrum`: the block sees the context's peaks (the encoder's blocks with
/// context_frequencies; not the TE-TNP-ND's covariance layers).
inline double te_attention_block(const ModelConfig& c, bool update_locations,
                                 bool context_spectrum = true) {
  const auto& te = c.options<TeAttentionOptions>();
  const double h = double(c.options<TransformerOptions>().num_heads), w = double(te.pairwise_width),
               f = double(te.distance_frequencies),
               j = context_spectrum ? double(te.context_frequencies) : 0.0,
               dc = double(place_feature_route(c).pairwise_dims);
  double rho = linear(h, w) + linear(dc, w, false) + linear(w, w) + linear(w, h);
  if (f > 0) rho += linear(2.0 * dc * f, w, false) + f;  // + the frequencies themselves
  if (j > 0) rho += linear(2.0 * dc * j, w, false);
  const double phi = update_locations ? mlp(h, {w, w}, 1.0) : 0.0;
  return attention_block(c) + rho + phi;
}

/// TnpdEncoder: the token embedder and one attention block per layer.
inline double tnpd_encoder(const ModelConfig& c) {
  const auto& t = c.options<TransformerOptions>();
  return token_embedder(double(c.dim_x + c.dim_y + 1), double(t.dim_model)) +
         double(t.num_layers) * attention_block(c);
}

/// TeTnpEncoder: per layer a cross-attention and (unless shared with it) a self-attention; the
/// last cross-attention has no location update unless the caller reads the target locations.
inline double te_tnp_encoder(const ModelConfig& c, bool target_locations) {
  const auto& t = c.options<TransformerOptions>();
  const auto& te = c.options<TeAttentionOptions>();
  const bool shared = c.options<LayerSharingOptions>().share_layer_weights;
  double count = token_embedder(double(c.dim_y + place_feature_route(c).token_features + 1),
                                double(t.dim_model));
  for (int64_t l = 0; l < t.num_layers; ++l) {
    const bool last = l + 1 == t.num_layers;
    count += te_attention_block(c, te.update_locations && (!last || target_locations || shared));
    if (!shared) count += te_attention_block(c, te.update_locations);
  }
  return count;
}

/// NdHead: the mean MLP, the covariance attention layers and the projection MLP.
inline double nd_head(const ModelConfig& c, bool translation_equivariant) {
  const auto& cov = c.options<CovarianceOptions>();
  const double dz = double(c.options<TransformerOptions>().dim_model), dy = double(c.dim_y);
  double count = mlp(dz, {dz, dz}, dy);
  for (int64_t l = 0; l < cov.covariance_layers; ++l) {
    count += translation_equivariant
                 ? te_attention_block(c,
                                      c.options<TeAttentionOptions>().update_locations &&
                                          l + 1 < cov.covariance_layers,
                                      /*context_spectrum=*/false)
                 : attention_block(c);
  }
  const double per_value = double(cov.projection_dim) + (cov.covariance == "lowrank" ? 1.0 : 0.0);
  return count +
         mlp(dz, std::vector<double>(size_t(cov.projection_layers - 1), dz), dy * per_value);
}

}  // namespace npe::parameter_terms
