#pragma once
// The 1-D tab's "Samples" group: coherent function samples from the models with a joint
// predictive, and the predictive correlation of one of them shown on hover.

#include <QGroupBox>

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace npe::widgets {

class SamplesBox final : public QGroupBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(SamplesBox)

 public:
  /// `estimated_from`: how many samples the correlation of models without a closed form (TNP-A)
  /// is estimated from (the tooltip says so).
  explicit SamplesBox(int estimated_from, QWidget* parent = nullptr);

  /// Samples per joint model; 0 when samples are off.
  int samples() const;
  /// 0 switches samples off.
  void setSamples(int count);
  /// A model with a joint predictive the correlation can be shown for.
  void addJointModel(const QString& name, const QString& id);
  /// The model whose correlation is shown; empty when the correlation is off.
  QString correlationModel() const;
  /// Shows this model's correlation; an id that is not a joint model switches it off.
  void setCorrelationModel(const QString& id);

 Q_SIGNALS:
  /// Something the next prediction round must include changed (samples, their count, the
  /// correlation or its model).
  void requestChanged();
  void resampleRequested();
  /// The correlation was switched off, or its model changed: the curve shown is stale.
  void correlationChanged();

 private:
  QCheckBox* m_draw = nullptr;
  QSpinBox* m_lines = nullptr;
  QCheckBox* m_correlation = nullptr;
  QComboBox* m_correlation_model = nullptr;
};

}  // namespace npe::widgets
