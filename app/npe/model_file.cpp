#include "model_file.h"

#include <cmath>
#include <cstdio>

#include "npe/errors.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/predictors/torchscript_predictor.h"

namespace npe::cli {

Era5TaskConfig era5_task_of_model(const std::filesystem::path& checkpoint) {
  const auto metadata = read_model_metadata(checkpoint);
  if (metadata.task.value("kind", std::string()) != "era5") {
    throw DataError("--grid needs a model trained on gridded temperatures (an ERA5 task); '" +
                    checkpoint.string() + "' was trained on " +
                    metadata.task.value("name", std::string("?")));
  }
  auto task = Era5TaskConfig::from_json(metadata.task);
  if (!std::isfinite(task.mean) || !std::isfinite(task.stddev) ||
      !std::isfinite(task.origin_longitude)) {
    throw DataError(checkpoint.string() + ": its task has no standardisation or coordinate origin");
  }
  return task;
}

std::unique_ptr<Predictor> load_model_file(const std::filesystem::path& path,
                                           torch::Device device) {
  auto predictor = load_predictor(path, device);
  if (predictor->info().name == kTorchScriptKind) {
    std::fprintf(stderr, "npe: %s: %s\n", predictor->info().display_name.c_str(),
                 predictor->info().description.c_str());
  }
  return predictor;
}

std::string row_name(const Predictor& predictor) {
  const auto& info = predictor.info();
  return info.name == kTorchScriptKind ? info.display_name : info.name;
}

}  // namespace npe::cli
