#include "function1d/model_presets.h"

#include <QSignalBlocker>

#include "common/model_list.h"

namespace npe::widgets {
namespace {

QString tr_presets(const char* text) {
  return ModelPresets::tr(text);
}

}  // namespace

const std::vector<ModelPreset>& function_model_presets() {
  static const std::vector<ModelPreset> presets = {
      {tr_presets("Does the prediction move with the data?"),
       tr_presets("The teaching comparison: TNP (not translation equivariant) against TE-TNP and "
                  "ConvCNP, with the exact GP of the true kernel. Shift Δ beyond the training "
                  "range and watch TNP break while the others move with the data."),
       {"gp-oracle", "shipped:tnp", "shipped:tetnp-paper", "shipped:convcnp"}},
      {tr_presets("What would an ideal neural process predict?"),
       tr_presets(
           "GP (Bayes over kernels): the best any model trained on the 1-D tasks can do, "
           "since it sees only the context, like the models, and weighs every kernel of "
           "their training prior. Beside it the closest models to it: the paper-size "
           "TE-TNP and ConvCNP; the side panel shows what the context says about the "
           "kernel.\n\nOn a periodic context the GP reads the period off the data (the "
           "side panel's curve over the period) and continues the pattern beyond them, "
           "at 0.05 nats per point from the GP that knows the period. The networks "
           "mostly fail at drawing the oscillation, not at finding its period: a small "
           "TE-TNP trained on one known period still loses 0.35 nats per point to the "
           "exact GP at period 1 and 1.13 at period 0.25, where there are four times as "
           "many cycles to draw; inferring the period adds 0.2-0.4. On the shipped "
           "models' periodic tasks nearly all of the gap is their mean, not their "
           "spread, and it is largest where the context pins the period down: once the "
           "GP knows the period it continues the exact oscillation, while the networks "
           "draw a smoother curve and widen their band to cover it (docs/history/benchmarks.md, "
           "\"The periodic gap\")."),
       // gp-bayes (100-200 ms a prediction) sets the pace here; the others are drawn first.
       {"gp-bayes", "shipped:tetnp-paper", "shipped:convcnp"}},
      {tr_presets("Every translation-equivariant model"),
       tr_presets("TE-TNP (small and paper size), TE-PT-TNP, BSA-TNP and ConvCNP with the "
                  "Bayes-optimal GP: all of them predict the same at any shift Δ."),
       {"gp-bayes", "shipped:tetnp", "shipped:tetnp-paper", "shipped:tepttnp", "shipped:bsatnp",
        "shipped:convcnp"}},
      {tr_presets("Joint models (coherent samples)"),
       tr_presets("Models with a joint predictive: switch on samples or the correlation below to "
                  "see functions rather than pointwise bands."),
       {"gp-bayes", "shipped:tnpa", "shipped:tnpnd", "shipped:tetnpnd"}},
  };
  return presets;
}

ModelPresets::ModelPresets(std::vector<ModelPreset> presets, ModelList* models, QWidget* parent)
    : QComboBox(parent), m_presets(std::move(presets)), m_models(models) {
  setToolTip(tr("Switch on a set of models chosen for one question"));
  for (const auto& preset : m_presets) {
    addItem(preset.name);
    setItemData(count() - 1, preset.tooltip, Qt::ToolTipRole);
  }
  // Shown, never chosen: what the list holds when it matches no preset.
  addItem(tr("Custom selection"));
  setItemData(count() - 1, tr("The models switched on by hand"), Qt::ToolTipRole);
  setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  setMinimumContentsLength(12);
  connect(this, qOverload<int>(&QComboBox::activated), this, [this](int index) {
    if (index >= 0 && index < static_cast<int>(m_presets.size())) {
      apply(m_presets[static_cast<size_t>(index)].name);
    } else {
      follow();  // "Custom selection" changes nothing
    }
  });
  follow();
}

QStringList ModelPresets::available(const ModelPreset& preset) const {
  QStringList ids;
  for (const auto& id : preset.ids) {
    if (m_models->find(id)) ids << id;
  }
  return ids;
}

bool ModelPresets::apply(const QString& name) {
  for (const auto& preset : m_presets) {
    if (preset.name != name) continue;
    m_models->setEnabledIds(available(preset));
    follow();
    Q_EMIT applied();
    return true;
  }
  return false;
}

QString ModelPresets::current() const {
  auto enabled = m_models->enabledIds();
  enabled.sort();
  for (const auto& preset : m_presets) {
    auto ids = available(preset);
    ids.sort();
    if (!ids.isEmpty() && ids == enabled) return preset.name;
  }
  return {};
}

void ModelPresets::follow() {
  const auto name = current();
  const QSignalBlocker block(this);
  setCurrentIndex(name.isEmpty() ? count() - 1 : findText(name));
}

}  // namespace npe::widgets
