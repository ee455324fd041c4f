#include "function1d/gp_baselines.h"

#include <QCoreApplication>

#include "common/explorer_controller.h"
#include "common/model_entry.h"

namespace npe::widgets {
namespace {

QString function_explorer_tr(const char* text) {
  return QCoreApplication::translate("FunctionExplorer", text);
}

}  // namespace

void add_gp_baselines(ExplorerController& controller) {
  auto oracle = baseline_entry("gp-oracle");
  oracle.tooltip = function_explorer_tr(
      "Exact GP posterior with the kernel, lengthscale and noise chosen under Ground truth: the "
      "best any model can do on this data.\nTranslation equivariant (stationary kernel).");
  controller.addModel(std::move(oracle), true);
  auto bayes = baseline_entry("gp-bayes");
  bayes.tooltip =
      function_explorer_tr(
          "What an ideal neural process would predict: the GP posterior averaged over every "
          "kernel family (SE, periodic, Matérn-5/2) and scale ℓ of the models' training prior, "
          "each weighted by how well it explains the context points. A model trained on that "
          "prior can at best match it; the oracle above is also told the true kernel. While it "
          "is on, the side panel shows what it infers about the kernel.\n") +
      bayes.tooltip.section('\n', 1);
  controller.addModel(std::move(bayes), false);
  controller.addModel(baseline_entry("gp-fitted"), false);
}

}  // namespace npe::widgets
