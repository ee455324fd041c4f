#include "models/kinds/convcnp/convcnp.h"

#include <cmath>

#include <torch/torch.h>

#include "models/flop_terms.h"
#include "models/parameter_terms.h"
#include "npe/errors.h"

namespace npe {
namespace F = torch::nn::functional;

namespace {
// The on-grid ConvCNP's largest grid (cells, over every slice) before a ResourceLimitError.
constexpr int64_t kMaxGridCells = int64_t{1} << 18;
}  // namespace

UNet1dImpl::UNet1dImpl(int64_t in_channels, int64_t channels, int64_t kernel_size, int64_t depth) {
  auto conv = [&](int64_t in, int64_t out) {
    return torch::nn::Conv1d(
        torch::nn::Conv1dOptions(in, out, kernel_size).padding(kernel_size / 2));
  };
  m_in = register_module("in", conv(in_channels, channels));
  for (int64_t i = 0; i < depth; ++i) {
    m_down.push_back(register_module("down" + std::to_string(i), conv(channels, channels)));
    m_up.push_back(register_module("up" + std::to_string(i), conv(2 * channels, channels)));
  }
}

torch::Tensor UNet1dImpl::forward(torch::Tensor x) {
  x = torch::relu(m_in->forward(x));
  std::vector<torch::Tensor> skips;
  for (auto& down : m_down) {
    skips.push_back(x);
    x = F::avg_pool1d(torch::relu(down->forward(x)), F::AvgPool1dFuncOptions(2));
  }
  for (int64_t i = static_cast<int64_t>(m_up.size()) - 1; i >= 0; --i) {
    const auto& skip = skips[i];
    x = F::interpolate(x, F::InterpolateFuncOptions()
                              .size(std::vector<int64_t>{skip.size(-1)})
                              .mode(torch::kLinear)
                              .align_corners(false));
    x = torch::relu(m_up[i]->forward(torch::cat({x, skip}, 1)));
  }
  return x;
}

ConvCnpImpl::ConvCnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto& conv = c.options<ConvCnpOptions>();
  if (c.dim_x != 1) {
    throw ConfigError("the off-grid ConvCNP is 1-D (D_x = 1); use convcnp2d for gridded 2-D data");
  }
  if (!(conv.points_per_unit > 0.0)) throw ConfigError("ConvCNP points_per_unit must be positive");
  if (conv.kernel_size < 1 || conv.kernel_size % 2 == 0)
    throw ConfigError("ConvCNP kernel_size must be odd");
  const double spacing = 1.0 / conv.points_per_unit;
  m_log_encoder_lengthscale =
      register_parameter("log_encoder_lengthscale", torch::full({1}, std::log(2.0 * spacing)));
  m_log_decoder_lengthscale =
      register_parameter("log_decoder_lengthscale", torch::full({1}, std::log(2.0 * spacing)));
  m_unet = register_module(
      "unet", UNet1d(1 + c.dim_y, conv.conv_channels, conv.kernel_size, conv.unet_depth));
  m_head = register_module("head", GaussianHead(conv.conv_channels, conv.conv_channels, c.dim_y,
                                                c.heteroscedastic, c.min_stddev));
}

Prediction ConvCnpImpl::forward_impl(const Task& task) {
  const auto& c = config();
  const auto& conv = c.options<ConvCnpOptions>();
  const auto b = task.batch_size(), nc = task.num_context();
  const double spacing = 1.0 / conv.points_per_unit;
  const int64_t granularity = int64_t{1} << conv.unet_depth;
  // Receptive-field margin (in grid cells) so that the CNN sees the same neighbourhood
  // wherever the data lie.
  const int64_t margin = (conv.kernel_size / 2) * (int64_t{2} << conv.unet_depth);
  if (task.num_context() + task.num_targets() == 0) {
    auto empty = torch::zeros({b, 0, c.dim_y}, task.xt.options());
    return {empty, empty.clone()};
  }
  // Each task's grid is anchored at its leftmost context point (its leftmost target without a
  // context): inputs are measured from there, so translating a task by any Δ leaves these
  // relative inputs, the grid and every layer's alignment (pooling included) unchanged, and the
  // predictions move with the data exactly. A grid fixed in absolute coordinates would be
  // exact only for shifts by whole multiples of 2^depth grid spacings.
  auto xc = task.xc.select(-1, 0);                                         // [B,Nc]
  auto xt = task.xt.select(-1, 0);                                         // [B,Nt]
  auto origin = std::get<0>((nc > 0 ? xc : xt).min(1, /*keepdim=*/true));  // [B,1]
  xc = xc - origin;
  xt = xt - origin;
  auto all_x = torch::cat({xc, xt}, 1);
  const double lo = all_x.min().item<double>() / spacing;
  const double hi = all_x.max().item<double>() / spacing;
  // Count in floating point first: an absurd spread must give an error, not an overflow.
  const double needed = std::ceil(hi) - std::floor(lo) + 2.0 * margin + 2.0 * granularity;
  if (!(needed <= static_cast<double>(conv.max_grid_points))) {
    throw ResourceLimitError("ConvCNP: the inputs span " + std::to_string((hi - lo) * spacing) +
                             " units, which needs about " + std::to_string(needed) +
                             " grid points at " + std::to_string(conv.points_per_unit) +
                             " points per unit; the limit is " +
                             std::to_string(conv.max_grid_points) + " (max_grid_points)");
  }
  auto floor_to = [&](int64_t v) {
    return (v >= 0 ? v / granularity : -((-v + granularity - 1) / granularity)) * granularity;
  };
  // The grid's first point lies a whole number of pooling blocks from the anchor, so the
  // U-Net's down-sampling stages see the anchor at the same phase in every task.
  const int64_t first = floor_to(static_cast<int64_t>(std::floor(lo)) - margin);
  int64_t count = static_cast<int64_t>(std::ceil(hi)) + margin - first + 1;
  count = (count + granularity - 1) / granularity * granularity;
  auto opts = task.xt.options();
  auto grid = ((torch::arange(count, opts.dtype(torch::kFloat64)) + double(first)) * spacing)
                  .to(opts.dtype());

  auto enc_ls = m_log_encoder_lengthscale.exp();
  torch::Tensor channels;
  if (nc == 0) {
    channels = torch::zeros({b, 1 + c.dim_y, count}, opts);
  } else {
    auto d = grid.view({1, count, 1}) - xc.unsqueeze(1);  // [B,G,Nc]
    auto w = torch::exp(-0.5 * (d / enc_ls).square());
    auto density = w.sum(-1, true);                              // [B,G,1]
    auto data = w.matmul(task.yc) / (density + 1e-8);            // [B,G,Dy]
    channels = torch::cat({density, data}, -1).transpose(1, 2);  // [B,1+Dy,G]
  }
  auto features = m_unet->forward(channels);  // [B,C,G]
  auto dec_ls = m_log_decoder_lengthscale.exp();
  auto d = xt.unsqueeze(-1) - grid.view({1, 1, count});  // [B,Nt,G]
  auto w = torch::exp(-0.5 * (d / dec_ls).square());
  auto at_targets = w.matmul(features.transpose(1, 2));  // [B,Nt,C]
  return m_head->forward(at_targets);
}

ConvCnp2dImpl::ConvCnp2dImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto& cnn = c.options<ConvCnp2dOptions>();
  if (c.dim_coordinates() < 2)
    throw ConfigError("the on-grid ConvCNP needs D_x >= 2 (grid-cell coordinates)");
  if (cnn.cnn_layers < 1) throw ConfigError("ConvCNP 2-D needs at least one convolution layer");
  if (cnn.kernel_size < 1 || cnn.kernel_size % 2 == 0)
    throw ConfigError("ConvCNP kernel_size must be odd");
  int64_t in = 1 + c.dim_y + (c.dim_features > 0 ? 1 + c.dim_features : 0);
  for (int64_t l = 0; l < cnn.cnn_layers; ++l) {
    m_convs.push_back(register_module(
        "conv" + std::to_string(l),
        torch::nn::Conv2d(torch::nn::Conv2dOptions(in, cnn.conv_channels, cnn.kernel_size)
                              .padding(cnn.kernel_size / 2))));
    in = cnn.conv_channels;
  }
  m_head = register_module("head", GaussianHead(cnn.conv_channels, cnn.conv_channels, c.dim_y,
                                                c.heteroscedastic, c.min_stddev));
}

Prediction ConvCnp2dImpl::predict_grid(const torch::Tensor& values, const torch::Tensor& mask) {
  if (config().dim_features > 0) {
    throw ConfigError("this ConvCNP 2-D takes place features: predict through its inputs");
  }
  if (config().centre_per_task) {
    throw ConfigError(
        "this ConvCNP 2-D centres each task on its context: predict through its "
        "inputs");
  }
  return run_grid(values, mask, {});
}

Prediction ConvCnp2dImpl::run_grid(const torch::Tensor& values, const torch::Tensor& mask,
                                   const torch::Tensor& features) {
  const auto dy = config().dim_y;
  if (values.dim() != 4 || values.size(-1) != dy || mask.dim() != 3 ||
      mask.sizes() != values.sizes().slice(0, 3)) {
    std::ostringstream msg;
    msg << "ConvCNP 2-D expects values [B,H,W," << dy << "] and mask [B,H,W]; got values "
        << values.sizes() << ", mask " << mask.sizes();
    throw InvalidInputError(msg.str());
  }
  auto m = (mask != 0).to(values.scalar_type()).unsqueeze(1);  // [B,1,H,W]
  auto masked = values.permute({0, 3, 1, 2}) * m;              // [B,Dy,H,W]
  if (!torch::isfinite(masked).all().item<bool>()) {
    throw InvalidInputError("ConvCNP 2-D: context values contain NaN or infinite values");
  }
  auto x = torch::cat({m, masked}, 1);
  if (features.defined()) x = torch::cat({x, features.permute({0, 3, 1, 2})}, 1);
  for (auto& conv : m_convs) x = torch::relu(conv->forward(x));
  return m_head->forward(x.permute({0, 2, 3, 1}));
}

Prediction ConvCnp2dImpl::forward_impl(const Task& task) {
  const auto& c = config();
  const auto& cnn = c.options<ConvCnp2dOptions>();
  const auto b = task.batch_size(), nc = task.num_context(), nt = task.num_targets();
  const auto dc = c.dim_coordinates(), df = c.dim_features;
  auto xc = task.xc.narrow(-1, 0, dc).round().to(torch::kLong);
  auto xt = task.xt.narrow(-1, 0, dc).round().to(torch::kLong);
  auto all = torch::cat({xc, xt}, 1);
  if (all.size(1) == 0 || nt == 0) {
    auto empty = torch::zeros({b, nt, c.dim_y}, task.xt.options());
    return {empty, empty.clone()};
  }
  // The first two inputs index the grid; further inputs (time for gridded maps) select
  // independent slices, each its own image: the CNN runs per slice.
  const int64_t margin = cnn.cnn_layers * (cnn.kernel_size / 2);
  auto lo = all.amin(std::vector<int64_t>{0, 1});  // [D_coordinates]
  auto hi = all.amax(std::vector<int64_t>{0, 1});
  lo.slice(0, 0, 2) -= margin;
  hi.slice(0, 0, 2) += margin;
  auto extent = (hi - lo + 1).to(torch::kDouble);
  const double cells = extent.prod().item<double>();
  if (cells > static_cast<double>(kMaxGridCells)) {
    std::ostringstream msg;
    msg << "ConvCNP 2-D: inputs span a grid of " << cells << " cells (";
    for (int64_t d = 0; d < dc; ++d) msg << (d ? " x " : "") << (hi[d] - lo[d]).item<int64_t>() + 1;
    msg << "), over the limit of " << kMaxGridCells;
    throw ResourceLimitError(msg.str());
  }
  const int64_t rows = (hi[0] - lo[0]).item<int64_t>() + 1;
  const int64_t cols = (hi[1] - lo[1]).item<int64_t>() + 1;
  int64_t slices = 1;
  for (int64_t d = 2; d < dc; ++d) slices *= (hi[d] - lo[d]).item<int64_t>() + 1;
  // Cell index: slice-major, then row, then column: ((s * rows) + r) * cols + col.
  auto flat_index = [&](const torch::Tensor& x) {
    auto rel = x - lo;
    auto slice = torch::zeros_like(rel.select(-1, 0));
    for (int64_t d = 2; d < dc; ++d) {
      slice = slice * ((hi[d] - lo[d]).item<int64_t>() + 1) + rel.select(-1, d);
    }
    return (slice * rows + rel.select(-1, 0)) * cols + rel.select(-1, 1);
  };
  const int64_t cells_total = slices * rows * cols;
  auto opts = task.xt.options();
  auto values = torch::zeros({b, cells_total, c.dim_y}, opts);
  auto counts = torch::zeros({b, cells_total, 1}, opts);
  if (nc > 0) {
    auto flat = flat_index(xc);  // [B,Nc]
    // Several context points in one cell are averaged.
    values.scatter_add_(1, flat.unsqueeze(-1).expand({b, nc, c.dim_y}), task.yc);
    counts.scatter_add_(1, flat.unsqueeze(-1), torch::ones({b, nc, 1}, opts));
  }
  auto mask = (counts.squeeze(-1) > 0).view({b * slices, rows, cols});
  values = (values / counts.clamp_min(1.0)).view({b * slices, rows, cols, c.dim_y});
  torch::Tensor features;
  if (df > 0) {
    // Features of every point of the task, context and targets, averaged per cell.
    auto known = torch::zeros({b, cells_total, 1 + df}, opts);
    auto points = torch::cat({xc, xt}, 1);
    auto point_features = torch::cat({task.xc, task.xt}, 1).narrow(-1, dc, df);
    auto flat = flat_index(points).unsqueeze(-1);
    known.scatter_add_(1, flat.expand({b, nc + nt, 1 + df}),
                       torch::cat({torch::ones({b, nc + nt, 1}, opts), point_features}, -1));
    auto density = known.narrow(-1, 0, 1);
    auto mean = known.narrow(-1, 1, df) / density.clamp_min(1.0);
    features = torch::cat({(density > 0).to(opts.dtype()), mean}, -1)
                   .view({b * slices, rows, cols, 1 + df});
  }
  auto grid = run_grid(values, mask, features);
  auto flat_t = flat_index(xt).unsqueeze(-1).expand({b, nt, c.dim_y});
  auto gather = [&](const torch::Tensor& t) {
    return t.reshape({b, cells_total, c.dim_y}).gather(1, flat_t);
  };
  return {gather(grid.mean), gather(grid.stddev)};
}

ModelSpec convcnp_spec() {
  ModelSpec spec;
  spec.info = {"convcnp", "ConvCNP",
               "Convolutional CNP: data placed on a grid around the inputs, then a U-Net.", true};
  spec.info.place_features = false;
  spec.make_options = options_of<ConvCnpModelOptions>;
  spec.make = make_model_of<ConvCnpImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    const auto& conv = c.options<ConvCnpOptions>();
    const double ch = double(conv.conv_channels), k = double(conv.kernel_size);
    auto conv1d = [&](double in, double out) { return in * out * k + out; };
    return 2.0 /* length scales */ + conv1d(double(1 + c.dim_y), ch) +
           double(conv.unet_depth) * (conv1d(ch, ch) + conv1d(2.0 * ch, ch)) +
           gaussian_head(c, ch, ch);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const auto& conv = c.options<ConvCnpOptions>();
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double dy = double(c.dim_y);
    const double granularity = std::pow(2.0, double(conv.unet_depth));
    const int64_t half_kernel = conv.kernel_size / 2;  // cells each side of the centre
    const double margin = double(half_kernel) * 2.0 * granularity;
    const double grid =
        std::ceil((s.input_span * conv.points_per_unit + 2 * margin) / granularity) * granularity;
    const double ch = double(conv.conv_channels), k = double(conv.kernel_size);
    double unet = 2.0 * grid * (1 + dy) * ch * k;
    for (int64_t i = 0; i < conv.unet_depth; ++i) {
      const double at = grid / std::pow(2.0, double(i));
      unet += 2.0 * at * ch * ch * k + 2.0 * at * 2 * ch * ch * k;
    }
    return 2.0 * grid * nc * (1 + dy) + unet + 2.0 * nt * grid * ch + gaussian_head(c, nt, ch, ch);
  };
  return spec;
}

ModelSpec convcnp2d_spec() {
  ModelSpec spec;
  spec.info = {"convcnp2d", "ConvCNP 2-D", "On-grid convolutional CNP for images and gridded maps.",
               true,        false,         true};
  spec.make_options = options_of<ConvCnp2dModelOptions>;
  spec.make = make_model_of<ConvCnp2dImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    const auto& cnn = c.options<ConvCnp2dOptions>();
    const double ch = double(cnn.conv_channels), k = double(cnn.kernel_size);
    auto conv2d = [&](double in, double out) { return in * out * k * k + out; };
    const double in = double(1 + c.dim_y + (c.dim_features > 0 ? 1 + c.dim_features : 0));
    return conv2d(in, ch) + double(cnn.cnn_layers - 1) * conv2d(ch, ch) + gaussian_head(c, ch, ch);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const auto& cnn = c.options<ConvCnp2dOptions>();
    // On a grid covering the targets: one cell per target.
    const double cells = double(s.num_targets), ch = double(cnn.conv_channels),
                 k2 = double(cnn.kernel_size * cnn.kernel_size), dy = double(c.dim_y);
    return 2.0 * cells * (1 + dy) * ch * k2 +
           double(cnn.cnn_layers - 1) * 2.0 * cells * ch * ch * k2 +
           gaussian_head(c, cells, ch, ch);
  };
  // The paper's image ConvCNP: 64 channels.
  spec.paper_size = [](ModelConfig& c) { c.options<ConvCnp2dOptions>().conv_channels = 64; };
  return spec;
}

}  // namespace npe
