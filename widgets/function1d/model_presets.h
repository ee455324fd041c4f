#pragma once
// The 1-D tab's model presets: named sets of models for the questions the tab answers (does a
// prediction move with the data; how far are the models from what an ideal neural process
// would predict; ...). Choosing one switches exactly its models on; a hand-made selection
// shows as "Custom selection".

#include <vector>

#include <QComboBox>
#include <QStringList>

namespace npe::widgets {

class ModelList;

struct ModelPreset {
  QString name;
  QString tooltip;
  QStringList ids;  ///< model ids; those the tab does not have (missing shipped models) are skipped
};

/// The 1-D tab's presets, the default selection first.
const std::vector<ModelPreset>& function_model_presets();

class ModelPresets final : public QComboBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ModelPresets)

 public:
  ModelPresets(std::vector<ModelPreset> presets, ModelList* models, QWidget* parent = nullptr);

  /// Switches the preset's models on and every other off (an unknown name changes nothing and
  /// returns false).
  bool apply(const QString& name);
  /// The preset the enabled models match, or an empty string for a hand-made selection.
  QString current() const;
  /// Shows the preset the enabled models match (call after they change).
  void follow();

 Q_SIGNALS:
  /// A preset changed which models are on.
  void applied();

 private:
  QStringList available(const ModelPreset& preset) const;

  std::vector<ModelPreset> m_presets;
  ModelList* m_models = nullptr;
};

}  // namespace npe::widgets
