#include "npe/models/flops.h"

#include <cmath>
#include <vector>

#include "npe/errors.h"

namespace npe {
namespace {

double linear(double rows, double in, double out) {
  return 2.0 * rows * in * out;
}

double mlp(double rows, double in, const std::vector<double>& hidden, double out) {
  double flops = 0.0, width = in;
  for (double h : hidden) {
    flops += linear(rows, width, h);
    width = h;
  }
  return flops + linear(rows, width, out);
}

double head(const ModelConfig& c, double rows, double in) {
  const double dz = double(c.dim_model);
  return mlp(rows, in, {dz, dz}, c.heteroscedastic ? 2.0 * c.dim_y : double(c.dim_y));
}

// Projections plus scores and weighted sum of multi-head attention.
double attention_core(const ModelConfig& c, double nq, double nk) {
  const double dz = double(c.dim_model), inner = double(c.num_heads * c.head_dim);
  return linear(nq, dz, inner) + 2.0 * linear(nk, dz, inner) + 4.0 * nq * nk * inner +
         linear(nq, inner, dz);
}

double feed_forward(const ModelConfig& c, double rows) {
  const double dz = double(c.dim_model);
  return mlp(rows, dz, {dz}, dz);
}

double block(const ModelConfig& c, double nq, double nk) {
  return attention_core(c, nq, nk) + feed_forward(c, nq);
}

double te_block(const ModelConfig& c, double nq, double nk, bool update_locations) {
  const double pairs = nq * nk, h = double(c.num_heads), w = double(c.pairwise_width);
  const double dc = double(c.dim_coordinates());  // pairwise MLPs see coordinates only
  double rho =
      linear(pairs, h, w) + linear(pairs, dc, w) + linear(pairs, w, w) + linear(pairs, w, h);
  double phi = update_locations ? mlp(pairs, h, {w, w}, 1.0) + 3.0 * pairs * dc : 0.0;
  return attention_core(c, nq, nk) + rho + phi + feed_forward(c, nq);
}

// The token embedder: two hidden layers of width D_z.
double embedder(const ModelConfig& c, double rows, double in) {
  const double dz = double(c.dim_model);
  return mlp(rows, in, {dz, dz}, dz);
}

// The TNP-ND head (mean MLP, target self-attention, projection, Sigma from H) on nt targets.
double nd_head(const ModelConfig& c, double nt, bool translation_equivariant) {
  const double dz = double(c.dim_model), dy = double(c.dim_y), p = double(c.projection_dim);
  const bool low_rank = c.covariance == "lowrank";
  double flops = mlp(nt, dz, {dz, dz}, dy);
  for (int64_t l = 0; l < c.covariance_layers; ++l) {
    const bool update = c.update_locations && l + 1 < c.covariance_layers;
    flops += translation_equivariant ? te_block(c, nt, nt, update) : block(c, nt, nt);
  }
  flops += mlp(nt, dz, std::vector<double>(size_t(c.projection_layers - 1), dz),
               dy * (p + (low_rank ? 1.0 : 0.0)));
  const double n = nt * dy;
  flops += 2.0 * n * n * p;                // H H^T (or A A^T)
  if (low_rank) flops += n * n * n / 3.0;  // its Cholesky factorisation
  return flops;
}

}  // namespace

double forward_flops(const ModelConfig& c, const BatchShape& s) {
  const double nc = double(s.num_context), nt = double(s.num_targets);
  const double dz = double(c.dim_model), dx = double(c.dim_x), dy = double(c.dim_y);
  const double layers = double(c.num_layers), m = double(c.num_pseudo_tokens);
  // TE tokens: context MLP([y, 0]) and one target constant, or with place features every
  // token of its own (MLP([y, f, 0]), MLP([0, f, 1])).
  const double df = double(c.dim_features);
  const double te_tokens =
      c.dim_features > 0 ? embedder(c, nc + nt, dy + df + 1) : embedder(c, nc + 1, dy + 1);
  double per_task = 0.0;
  if (c.kind == "cnp") {
    per_task = mlp(nc, dx + dy, std::vector<double>(5, dz), dz) + head(c, nt, dz + dx);
  } else if (c.kind == "rcnp") {
    per_task = linear(nt + nc, dx, dz) + linear(nc, dy, dz) +
               mlp(nt * nc, dz, std::vector<double>(4, dz), dz) + head(c, nt, dz);
  } else if (c.kind == "tnp") {
    per_task = embedder(c, nc + nt, dx + dy + 1) + layers * (block(c, nc, nc) + block(c, nt, nc)) +
               head(c, nt, dz);
  } else if (c.kind == "pttnp") {
    // The last layer has no context update (its result would be unused).
    per_task = embedder(c, nc + nt, dx + dy + 1) + layers * (block(c, m, nc) + block(c, nt, m)) +
               (layers - 1) * block(c, nc, m) + head(c, nt, dz);
  } else if (c.kind == "tnpd") {
    per_task = embedder(c, nc + nt, dx + dy + 1) + layers * block(c, nc + nt, nc) + head(c, nt, dz);
  } else if (c.kind == "tnpnd") {
    per_task =
        embedder(c, nc + nt, dx + dy + 1) + layers * block(c, nc + nt, nc) + nd_head(c, nt, false);
  } else if (c.kind == "tnpa") {
    // The teacher-forced pass: context, targets and padded targets over context and targets.
    per_task = embedder(c, nc + 2 * nt, dx + dy + 1) + layers * block(c, nc + 2 * nt, nc + nt) +
               head(c, nt, dz);
  } else if (c.kind == "tetnpnd") {
    const bool u = c.update_locations;
    per_task = te_tokens + layers * (te_block(c, nc, nc, u) + te_block(c, nt, nc, u)) +
               nd_head(c, nt, true);
  } else if (c.kind == "tetnp") {
    // The last cross-attention skips the unused target location update unless it is shared.
    const bool u = c.update_locations;
    per_task = te_tokens + layers * te_block(c, nc, nc, u) + (layers - 1) * te_block(c, nt, nc, u) +
               te_block(c, nt, nc, u && c.share_layer_weights) + head(c, nt, dz);
  } else if (c.kind == "tepttnp") {
    const bool u = c.update_locations;
    per_task = te_tokens + linear(m + nc, dz, dz) + 2.0 * m * nc * (dz + dx) +
               layers * te_block(c, m, nc, u) + (layers - 1) * te_block(c, nc, m, u) +
               (layers - 1) * te_block(c, nt, m, u) + te_block(c, nt, m, false) + head(c, nt, dz);
  } else if (c.kind == "bsatnp") {
    // Attention blocks plus the logit bias: per pair, the squared distance and, per head and
    // RBF feature, a multiply, an exponential and a multiply-add (counted as 4).
    const double heads = double(c.num_heads), features = double(c.bias_features);
    auto bias = [&](double nq, double nk) { return nq * nk * (3.0 * dx + 4.0 * heads * features); };
    per_task = te_tokens +
               layers * (block(c, nc, nc) + bias(nc, nc) + block(c, nt, nc) + bias(nt, nc)) +
               head(c, nt, dz);
  } else if (c.kind == "convcnp") {
    const double granularity = std::pow(2.0, double(c.unet_depth));
    const int64_t half_kernel = c.kernel_size / 2;  // cells each side of the centre
    const double margin = double(half_kernel) * 2.0 * granularity;
    const double grid =
        std::ceil((s.input_span * c.points_per_unit + 2 * margin) / granularity) * granularity;
    const double ch = double(c.conv_channels), k = double(c.kernel_size);
    double unet = 2.0 * grid * (1 + dy) * ch * k;
    for (int64_t i = 0; i < c.unet_depth; ++i) {
      const double at = grid / std::pow(2.0, double(i));
      unet += 2.0 * at * ch * ch * k + 2.0 * at * 2 * ch * ch * k;
    }
    per_task = 2.0 * grid * nc * (1 + dy) + unet + 2.0 * nt * grid * ch + head(c, nt, ch);
  } else if (c.kind == "convcnp2d") {
    // On a grid covering the targets: one cell per target.
    const double cells = nt, ch = double(c.conv_channels),
                 k2 = double(c.kernel_size * c.kernel_size);
    per_task = 2.0 * cells * (1 + dy) * ch * k2 +
               double(c.cnn_layers - 1) * 2.0 * cells * ch * ch * k2 + head(c, cells, ch);
  } else {
    throw ConfigError("no FLOP model for '" + c.kind + "'");
  }
  return per_task * double(s.batch);
}

}  // namespace npe
