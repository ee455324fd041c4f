#pragma once
// Initial tokens shared by the transformer NPs.

#include <torch/torch.h>

#include "npe/ground/task.h"
#include "npe/models/model_config.h"
#include "npe/models/model_option_groups.h"
#include "npe/models/modules.h"

namespace npe {

/// The token embedder of the transformer NPs: an MLP with two hidden layers of width D_z
/// (paper Appendix F.1).
inline Mlp token_embedder(int64_t in, int64_t dim_model) {
  return Mlp(in, std::vector<int64_t>{dim_model, dim_model}, dim_model);
}

struct Tokens {
  torch::Tensor context;  ///< [B,Nc,Dz]
  torch::Tensor target;   ///< [B,Nt,Dz]
};

/// TNP tokens: context MLP([x, y, 1]), targets MLP([x, 0, 0]); embed maps Dx+Dy+1 -> Dz.
inline Tokens input_output_tokens(Mlp& embed, const Task& task) {
  const auto b = task.batch_size(), nc = task.num_context(), nt = task.num_targets();
  auto opts = task.xt.options();
  return {embed->forward(torch::cat({task.xc, task.yc, torch::ones({b, nc, 1}, opts)}, -1)),
          embed->forward(torch::cat({task.xt, torch::zeros({b, nt, task.dim_y() + 1}, opts)}, -1))};
}

/// Translation-equivariant tokens, independent of the coordinates: context MLP([y, 0]), every
/// target the same learned constant MLP([0, 1]); embed maps Dy+1 -> Dz. With place features
/// (the last dim_features inputs, which move with the place), context MLP([y, f, 0]) and target
/// MLP([0, f, 1]); embed maps Dy+Df+1 -> Dz.
inline Tokens output_only_tokens(Mlp& embed, const Task& task, int64_t dim_model,
                                 int64_t dim_features = 0) {
  const auto b = task.batch_size(), nc = task.num_context(), nt = task.num_targets();
  auto opts = task.xt.options();
  if (dim_features > 0) {
    const auto first = task.dim_x() - dim_features;
    auto fc = task.xc.narrow(-1, first, dim_features);
    auto ft = task.xt.narrow(-1, first, dim_features);
    return {
        embed->forward(torch::cat({task.yc, fc, torch::zeros({b, nc, 1}, opts)}, -1)),
        embed->forward(torch::cat(
            {torch::zeros({b, nt, task.dim_y()}, opts), ft, torch::ones({b, nt, 1}, opts)}, -1))};
  }
  auto target_token = torch::cat({torch::zeros({task.dim_y()}, opts), torch::ones({1}, opts)});
  return {embed->forward(torch::cat({task.yc, torch::zeros({b, nc, 1}, opts)}, -1)),
          embed->forward(target_token).expand({b, nt, dim_model})};
}

/// Where a translation-equivariant model takes the place features (ModelConfig::dim_features):
/// into every token (the default), or as differences between places into the pairwise MLPs,
/// beside the coordinates (TeAttentionOptions::place_features = "differences").
struct PlaceFeatureRoute {
  int64_t token_features;  // features each token embeds
  int64_t pairwise_dims;   // inputs whose differences the TE attention sees
};

inline PlaceFeatureRoute place_feature_route(const ModelConfig& c) {
  const auto* te = c.find_options<TeAttentionOptions>();
  if (te && te->place_features == "differences") return {0, c.dim_x};
  return {c.dim_features, c.dim_coordinates()};
}

/// The task with its inputs cut to the coordinates (without the trailing place features), for
/// the distances of translation-equivariant attention.
inline Task coordinates_only(const Task& task, int64_t dim_features) {
  if (dim_features == 0) return task;
  const auto dc = task.dim_x() - dim_features;
  return {task.xc.narrow(-1, 0, dc), task.yc, task.xt.narrow(-1, 0, dc), task.yt};
}

}  // namespace npe
