#include "model_file.h"

#include <cstdio>

#include "npe/predictors/predictor_registry.h"
#include "npe/predictors/torchscript_predictor.h"

namespace npe::cli {

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
