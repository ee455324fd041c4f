#pragma once
// The building blocks of the models' analytic FLOP counts (multiply-add = 2 FLOPs), shared by
// the specifications in each model's file.

#include <vector>

#include "models/tokens.h"
#include "npe/models/context_spectrum.h"
#include "npe/models/model_config.h"
#include "npe/models/model_option_groups.h"

namespace npe::flop_terms {

inline double linear(double rows, double in, double out) {
  return 2.0 * rows * in * out;
}

inline double mlp(double rows, double in, const std::vector<double>& hidden, double out) {
  double flops = 0.0, width = in;
  for (double h : hidden) {
    flops += linear(rows, width, h);
    width = h;
  }
  return flops + linear(rows, width, out);
}

/// The Gaussian head: an MLP with two hidden layers of width `hidden`.
inline double gaussian_head(const ModelConfig& c, double rows, double in, double hidden) {
  return mlp(rows, in, {hidden, hidden}, c.heteroscedastic ? 2.0 * c.dim_y : double(c.dim_y));
}

/// The transformer of the token models.
inline const TransformerOptions& transformer(const ModelConfig& c) {
  return c.options<TransformerOptions>();
}

/// The Gaussian head of the token models: hidden width D_z (the transformer's, or CNP's and
/// RCNP's representation width).
inline double head(const ModelConfig& c, double rows, double in) {
  const auto* tokens = c.find_options<TokenOptions>();
  return gaussian_head(c, rows, in, double(tokens ? tokens->dim_model : transformer(c).dim_model));
}

/// Projections plus scores and weighted sum of multi-head attention.
inline double attention_core(const ModelConfig& c, double nq, double nk) {
  const auto& t = transformer(c);
  const double dz = double(t.dim_model), inner = double(t.num_heads * t.head_dim);
  return linear(nq, dz, inner) + 2.0 * linear(nk, dz, inner) + 4.0 * nq * nk * inner +
         linear(nq, inner, dz);
}

inline double feed_forward(const ModelConfig& c, double rows) {
  const double dz = double(transformer(c).dim_model);
  return mlp(rows, dz, {dz}, dz);
}

/// An attention block: attention plus its feed-forward layer.
inline double block(const ModelConfig& c, double nq, double nk) {
  return attention_core(c, nq, nk) + feed_forward(c, nq);
}

/// A translation-equivariant attention block: the pairwise MLPs rho (logits) and, with the
/// location update, phi.
/// `context_spectrum` as parameter_terms::te_attention_block's.
inline double te_block(const ModelConfig& c, double nq, double nk, bool update_locations,
                       bool context_spectrum = true) {
  const double pairs = nq * nk, h = double(transformer(c).num_heads),
               w = double(c.options<TeAttentionOptions>().pairwise_width);
  const double dc = double(place_feature_route(c).pairwise_dims);
  const double f = double(c.options<TeAttentionOptions>().distance_frequencies);
  const double j =
      context_spectrum ? double(c.options<TeAttentionOptions>().context_frequencies) : 0.0;
  double rho =
      linear(pairs, h, w) + linear(pairs, dc, w) + linear(pairs, w, w) + linear(pairs, w, h);
  if (f > 0) rho += linear(pairs, 2.0 * dc * f, w) + pairs * dc * f * 3.0;  // + phases, cos, sin
  if (j > 0) rho += linear(pairs, 2.0 * dc * j, w) + pairs * dc * j * 5.0;  // + weighted cos, sin
  double phi = update_locations ? mlp(pairs, h, {w, w}, 1.0) + 3.0 * pairs * dc : 0.0;
  return attention_core(c, nq, nk) + rho + phi + feed_forward(c, nq);
}

/// The context's periodogram (context_spectrum.h): per context point, input dimension and
/// frequency of the bank, the phase, cos and sin of it and of its double, and four products.
inline double context_spectrum(const ModelConfig& c, double nc) {
  if (c.options<TeAttentionOptions>().context_frequencies == 0) return 0.0;
  return nc * double(place_feature_route(c).pairwise_dims) * double(kSpectrumBankSize) *
         (12.0 + 4.0 * double(c.dim_y));
}

/// The token embedder: two hidden layers of width D_z.
inline double embedder(const ModelConfig& c, double rows, double in) {
  const double dz = double(transformer(c).dim_model);
  return mlp(rows, in, {dz, dz}, dz);
}

/// The tokens of the translation-equivariant models: context MLP([y, 0]) and one target
/// constant, or with place features every token of its own (MLP([y, f, 0]), MLP([0, f, 1])).
inline double te_tokens(const ModelConfig& c, double nc, double nt) {
  const double dy = double(c.dim_y), df = double(place_feature_route(c).token_features);
  return df > 0 ? embedder(c, nc + nt, dy + df + 1) : embedder(c, nc + 1, dy + 1);
}

}  // namespace npe::flop_terms
