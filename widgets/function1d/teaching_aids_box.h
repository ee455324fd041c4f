#pragma once
// The 1-D tab's "Teaching aids" group: the Δ sweep (the paper's Figure 2, live) and the
// attention of a model, drawn as lines to the context points on hover.

#include <QGroupBox>

class QCheckBox;
class QComboBox;

namespace npe::widgets {

class TeachingAidsBox final : public QGroupBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TeachingAidsBox)

 public:
  explicit TeachingAidsBox(QWidget* parent = nullptr);

  /// A model whose attention can be shown.
  void addAttentionModel(const QString& name, const QString& id);
  /// The model whose attention is shown on hover; empty when off.
  QString attentionModel() const;

 Q_SIGNALS:
  void sweepRequested();
  /// The attention overlay was switched off.
  void attentionOff();

 private:
  QCheckBox* m_attention = nullptr;
  QComboBox* m_attention_model = nullptr;
};

}  // namespace npe::widgets
