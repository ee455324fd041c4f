#pragma once
// The "Models" group of a tab: the model list and an "Open checkpoint…" button.

#include <QGroupBox>

namespace npe::widgets {

class ModelList;

class ModelsBox final : public QGroupBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ModelsBox)

 public:
  explicit ModelsBox(QWidget* parent = nullptr);
  ModelList* list() const { return m_list; }

 Q_SIGNALS:
  /// The user chose a checkpoint file to open.
  void checkpointChosen(const QString& path);

 private:
  ModelList* m_list = nullptr;
};

}  // namespace npe::widgets
