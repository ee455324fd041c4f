// npe predict: a trained model's (or a GP baseline's) predictions at the user's own points.
// Context and targets come from delimited text files (the explorer's CSV reader); the output is
// a CSV of the target inputs followed by the predictive mean and standard deviation.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include <torch/torch.h>

#include "baseline_options.h"
#include "commands.h"
#include "model_file.h"
#include "npe/data/point_table.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/ground/prediction.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/chunked_prediction.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"
#include "option_values.h"
#include "point_columns.h"
#include "predict_grid.h"
#include "predict_image.h"
#include "predict_series.h"

namespace npe::cli {
namespace {

struct PredictArguments {
  std::optional<std::string> checkpoint;
  BaselineArguments baseline;
  std::string context, targets, out;
  std::string x_columns, y_columns;
  int64_t samples = 0;
  uint64_t seed = 0;
  int64_t chunk = 4096;
  std::string device = "cpu";
  RuntimeArguments runtime;
  GridPredictArguments grid;    // --grid and its options
  ImagePredictArguments image;  // --image, --mask
};

/// Targets whose samples are drawn at once: a joint predictive costs the square (or cube) of
/// their number.
constexpr int64_t kMaxSampledTargets = 4096;

// What the context says about the kernel, from predictors that weigh kernel hypotheses
// (gp-bayes): each family's posterior probability and median scale.
void print_kernel_posterior(Predictor& predictor, const torch::Tensor& xc, const torch::Tensor& yc,
                            const torch::Tensor& xt) {
  TaskBatch batch;
  batch.task.xc = xc;
  batch.task.yc = yc;
  batch.task.xt = xt.slice(0, 0, std::min<int64_t>(xt.size(0), 1)).unsqueeze(0);
  const auto posteriors = predictor.kernel_posteriors(batch);
  if (posteriors.empty()) return;
  std::printf("  what the context says about the kernel (posterior):");
  const char* separator = " ";
  for (const auto& family : posteriors.front().families) {
    std::printf("%s%s %.1f %%", separator, kernel_name(family.kind).c_str(),
                100.0 * family.probability);
    if (std::isfinite(family.median_scale)) {
      std::printf(" (median %s %.3g)",
                  family.kind == KernelKind::Periodic ? "period" : "lengthscale",
                  family.median_scale);
    }
    separator = ", ";
  }
  std::printf("\n");
}

int run_predict(const PredictArguments& a) {
  apply_runtime_options(a.runtime);
  if (!a.grid.grid.empty()) {
    if (!a.checkpoint) throw UsageError("--grid needs --checkpoint (a model trained on ERA5)");
    if (!a.context.empty() || !a.targets.empty()) {
      throw UsageError("--grid takes its targets from the grid: leave out --context and --targets");
    }
    if (a.grid.stations.empty() == !(a.grid.context_fraction > 0.0)) {
      throw UsageError("--grid needs exactly one of --stations and --context-fraction");
    }
    auto grid = a.grid;
    grid.checkpoint = *a.checkpoint;
    grid.out = a.out;
    grid.seed = a.seed;
    grid.chunk = a.chunk;
    grid.device = a.device;
    return run_predict_grid(grid);
  }
  if (!a.image.image.empty() || !a.image.mask.empty()) {
    if (!a.checkpoint) throw UsageError("--image needs --checkpoint (a model of pictures)");
    if (a.image.image.empty() || a.image.mask.empty()) {
      throw UsageError("--image and --mask go together: the picture and its context pixels");
    }
    if (!a.context.empty() || !a.targets.empty() || !a.grid.grid.empty()) {
      throw UsageError(
          "--image takes its context from --mask and predicts every pixel: leave "
          "out --context, --targets and --grid");
    }
    auto image = a.image;
    image.checkpoint = *a.checkpoint;
    image.out = a.out;
    image.chunk = a.chunk;
    image.device = a.device;
    return run_predict_image(image);
  }
  if (a.context.empty() || a.targets.empty()) {
    throw UsageError("give --context and --targets (point files), --grid, or --image and --mask");
  }
  const auto device = parse_device(a.device);
  if (a.checkpoint) {
    // A model of the user's own series takes and gives the data's columns and units.
    const auto metadata = read_model_metadata(*a.checkpoint);
    if (metadata.task_name() == "series" || metadata.task.value("kind", "") == "series") {
      if (!a.x_columns.empty() || !a.y_columns.empty() || a.samples > 0) {
        throw UsageError("a series model reads its own columns (" +
                         metadata.task.value("x", std::string()) +
                         ", ...): leave out --x-columns, --y-columns and --samples");
      }
      auto model = load_model_file(*a.checkpoint, device);
      SeriesPredictArguments series{a.context, a.targets, a.out, a.chunk};
      return run_predict_series(series, *model, SeriesTaskConfig::from_json(metadata.task));
    }
  }
  // Plain variables, not a structured binding: C++17 lambdas cannot capture those (clang).
  auto chosen = point_predictor("predict", a.checkpoint, a.baseline, device);
  auto predictor = std::move(chosen.predictor);
  int64_t dim_x = chosen.dim_x, dim_y = chosen.dim_y;

  const auto context_table = read_point_table(a.context);
  const auto target_table = read_point_table(a.targets, /*min_columns=*/1);
  report_warnings("npe predict", context_table, a.context);
  report_warnings("npe predict", target_table, a.targets);
  const auto cx = variable_columns(context_table, "x", a.x_columns, a.context);
  const auto cy = variable_columns(context_table, "y", a.y_columns, a.context);
  const auto tx = variable_columns(target_table, "x", a.x_columns, a.targets);
  const auto ty = variable_columns(target_table, "y", a.y_columns, a.targets, /*required=*/false);
  auto need = [](const std::vector<int>& columns, const std::string& file, const char* what,
                 const char* stem) {
    if (columns.empty()) {
      throw DataError(file + ": no " + what + " columns: name them " + stem + " (or " + stem +
                      "1, " + stem + "2, ...), or choose them with --" + stem + "-columns");
    }
  };
  need(cx, a.context, "input", "x");
  need(cy, a.context, "output", "y");
  need(tx, a.targets, "input", "x");
  if (dim_x < 0) dim_x = static_cast<int64_t>(cx.size());
  if (dim_y < 0) dim_y = static_cast<int64_t>(cy.size());
  auto check_count = [](const std::vector<int>& columns, int64_t expected, const std::string& file,
                        const char* what) {
    if (static_cast<int64_t>(columns.size()) != expected) {
      throw DataError(file + ": " + std::to_string(columns.size()) + " " + what +
                      " columns, the model takes " + std::to_string(expected));
    }
  };
  check_count(cx, dim_x, a.context, "input");
  check_count(cy, dim_y, a.context, "output");
  check_count(tx, dim_x, a.targets, "input");
  const bool targets_have_y = static_cast<int64_t>(ty.size()) == dim_y;

  std::vector<bool> context_x_ok, context_y_ok, target_ok;
  auto xc_all = gather(context_table, cx, context_x_ok);
  auto yc_all = gather(context_table, cy, context_y_ok);
  std::vector<bool> context_ok(context_x_ok.size());
  int64_t context_skipped = 0;
  for (size_t i = 0; i < context_ok.size(); ++i) {
    context_ok[i] = context_x_ok[i] && context_y_ok[i];
    context_skipped += context_ok[i] ? 0 : 1;
  }
  if (context_skipped > 0) {
    std::fprintf(stderr,
                 "npe predict: %s: %lld context rows with NaN or infinite values left out\n",
                 a.context.c_str(), static_cast<long long>(context_skipped));
  }
  const auto xc = rows_where(xc_all, context_ok).unsqueeze(0);
  const auto yc = rows_where(yc_all, context_ok).unsqueeze(0).to(torch::kFloat32);
  const auto xt_all = gather(target_table, tx, target_ok);
  const auto xt = rows_where(xt_all, target_ok);
  const int64_t nt = xt.size(0);
  const int64_t target_skipped = static_cast<int64_t>(target_ok.size()) - nt;
  if (target_skipped > 0) {
    std::fprintf(stderr,
                 "npe predict: %s: %lld target rows have NaN or infinite inputs: their "
                 "predictions are written as nan\n",
                 a.targets.c_str(), static_cast<long long>(target_skipped));
  }

  const bool joint = predictor->info().capabilities.joint;
  Task task;
  task.xc = xc;
  task.yc = yc;
  task.xt = xt.unsqueeze(0);
  const auto prediction = predict_in_chunks(*predictor, task, a.chunk);
  const auto mean = prediction.mean[0];
  const auto stddev = prediction.stddev[0];
  if (!torch::isfinite(mean).all().item<bool>() || !torch::isfinite(stddev).all().item<bool>()) {
    throw Error("the prediction is not finite (NaN or infinite): nothing written");
  }

  torch::Tensor samples;  // [K, Nt, Dy]
  if (a.samples > 0) {
    if (!joint) {
      throw UsageError("--samples: " + predictor->info().display_name +
                       " has no joint predictive (its targets are independent given the "
                       "context); joint models: the GPs, TNP-ND and TNP-A kinds");
    }
    if (nt > kMaxSampledTargets) {
      throw UsageError("--samples: at most " + std::to_string(kMaxSampledTargets) +
                       " targets can be sampled jointly, the file has " + std::to_string(nt));
    }
    TaskBatch batch;
    batch.task.xc = xc;
    batch.task.yc = yc;
    batch.task.xt = xt.unsqueeze(0);
    samples = predictor->sample(batch, a.samples, a.seed).select(1, 0);
  }

  // The table: the target file's inputs (and outputs, when it has them), then the prediction.
  PointTable out;
  auto& header = out.columns;
  for (int c : tx) header.push_back(target_table.columns[static_cast<size_t>(c)]);
  if (targets_have_y) {
    for (int c : ty) header.push_back(target_table.columns[static_cast<size_t>(c)]);
  }
  auto suffixed = [&](const std::string& name, int64_t j) {
    return dim_y == 1 ? name : name + "_" + std::to_string(j + 1);
  };
  for (int64_t j = 0; j < dim_y; ++j) header.push_back(suffixed("mean", j));
  for (int64_t j = 0; j < dim_y; ++j) header.push_back(suffixed("std", j));
  for (int64_t k = 0; k < a.samples; ++k) {
    for (int64_t j = 0; j < dim_y; ++j) {
      header.push_back(suffixed("sample_" + std::to_string(k + 1), j));
    }
  }
  const auto m = mean.to(torch::kFloat64), s = stddev.to(torch::kFloat64);
  const auto samples64 = samples.defined() ? samples.to(torch::kFloat64) : samples;
  double ll_sum = 0.0;
  int64_t ll_count = 0;
  int64_t predicted = 0;
  for (size_t row = 0; row < target_table.rows.size(); ++row) {
    const auto& values = target_table.rows[row];
    auto& line = out.rows.emplace_back();
    line.reserve(header.size());
    auto put = [&](double v) { line.push_back(v); };
    for (int c : tx) put(values[static_cast<size_t>(c)]);
    if (targets_have_y) {
      for (int c : ty) put(values[static_cast<size_t>(c)]);
    }
    if (!target_ok[row]) {
      for (int64_t j = 0; j < dim_y * (2 + a.samples); ++j) put(std::nan(""));
    } else {
      const int64_t i = predicted++;
      for (int64_t j = 0; j < dim_y; ++j) put(m[i][j].item<double>());
      for (int64_t j = 0; j < dim_y; ++j) put(s[i][j].item<double>());
      for (int64_t k = 0; k < a.samples; ++k) {
        for (int64_t j = 0; j < dim_y; ++j) put(samples64[k][i][j].item<double>());
      }
      if (targets_have_y) {
        for (int64_t j = 0; j < dim_y; ++j) {
          const double y = values[static_cast<size_t>(ty[static_cast<size_t>(j)])];
          if (!std::isfinite(y)) continue;
          const double mu = m[i][j].item<double>(), sd = s[i][j].item<double>();
          ll_sum += gaussian_log_density(y, mu, sd);
          ++ll_count;
        }
      }
    }
  }
  write_point_table(a.out, out);
  std::printf("%s: %lld targets from %lld context points, written to %s\n",
              predictor->info().display_name.c_str(), static_cast<long long>(nt),
              static_cast<long long>(xc.size(1)), a.out.c_str());
  if (ll_count > 0) {
    std::printf(
        "  the targets' outputs under the predictive marginals: mean log-likelihood %.4f "
        "(%lld values)\n",
        ll_sum / static_cast<double>(ll_count), static_cast<long long>(ll_count));
  }
  print_kernel_posterior(*predictor, xc, yc, xt);
  return 0;
}

}  // namespace

Command add_predict_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "predict",
      "Predictive mean and standard deviation of a checkpoint or GP baseline at your own points "
      "(CSV/TSV in, CSV out), of an ERA5 model over a whole grid (--grid: NetCDF/GRIB in, "
      "CF NetCDF out), or of an image model over a picture (--image, --mask: PNG in, PNG or CSV "
      "out)");
  auto a = std::make_shared<PredictArguments>();
  auto* checkpoint = command->add_option("--checkpoint", a->checkpoint, "Trained model");
  add_baseline_options(*command, a->baseline, checkpoint);
  command->add_option(
      "--context", a->context,
      "Context points: a delimited text file with a header; inputs in columns x or "
      "x1, x2, ..., outputs in y or y1, y2, ... (in the units the model was trained "
      "on)");
  command->add_option("--targets", a->targets,
                      "Target inputs, the same columns (outputs, when present, are copied to the "
                      "output and scored)");
  command
      ->add_option("--out", a->out,
                   "CSV to write (with --grid: NetCDF; with --image: PNG of the mean, the "
                   "standard deviation beside it as NAME-std.png, or CSV); atomically, nothing "
                   "on failure")
      ->required();
  command->add_option("--image", a->image.image,
                      "A picture (PNG, grey or RGB, values as the model was trained on: "
                      "Fashion-MNIST models expect a light object on black, about 28 pixels "
                      "across): predict every pixel");
  command->add_option("--mask", a->image.mask,
                      "--image: a PNG of the same size whose white pixels (at least half grey) "
                      "are the context");
  command->add_option("--grid", a->grid.grid,
                      "Gridded data (NetCDF or GRIB): predict every cell with a value");
  command->add_option(
      "--variable", a->grid.variable,
      "--grid: the variable (default: the only gridded one, or the first in a temperature unit)");
  command->add_option("--time", a->grid.time,
                      "--grid: the time, YYYY-MM-DDTHH:MM UTC (default: the file's first)");
  command->add_option("--stations", a->grid.stations,
                      "--grid: context stations, a CSV with columns latitude, longitude, value "
                      "(in the data's units)");
  command
      ->add_option("--context-fraction", a->grid.context_fraction,
                   "--grid: use this fraction of the grid's cells, drawn with --seed, as context")
      ->check(CLI::Range(0.0, 1.0));
  command
      ->add_option("--tile", a->grid.tile,
                   "--grid: predict tiles of this many cells per side, each from the context "
                   "inside it (0: the whole grid at once)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
  command->add_option("--x-columns", a->x_columns, "Input columns by name (comma-separated)");
  command->add_option("--y-columns", a->y_columns, "Output columns by name (comma-separated)");
  command
      ->add_option("--samples", a->samples,
                   "Coherent samples per target from joint models (columns sample_1, ...)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000}))
      ->capture_default_str();
  command->add_option("--seed", a->seed, "Seed of the samples (with --grid: of the context cells)")
      ->capture_default_str();
  command
      ->add_option("--chunk", a->chunk,
                   "Targets predicted at once (memory is bounded by this; joint models see all)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24))
      ->capture_default_str();
  command->add_option("--device", a->device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  // Predictions stay float32 unless asked: their numbers must not depend on the CPU.
  a->runtime.precision = "fp32";
  add_runtime_options(*command, a->runtime);
  return {command, [a] { return run_predict(*a); }};
}

}  // namespace npe::cli
