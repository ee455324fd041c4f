#include "function1d/samples_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QPushButton>
#include <QSpinBox>

namespace npe::widgets {

SamplesBox::SamplesBox(int estimated_from, QWidget* parent) : QGroupBox(tr("Samples"), parent) {
  auto* form = new QFormLayout(this);
  m_draw = new QCheckBox(tr("Draw samples"), this);
  m_draw->setToolTip(
      tr("Coherent function samples from every shown model with a joint predictive (GP "
         "baselines exactly, TNP-ND, TE-TNP-ND, TNP-A target by target), as thin lines in "
         "the model's colour. Models that predict each point independently draw none."));
  m_lines = new QSpinBox(this);
  m_lines->setRange(1, 50);
  m_lines->setValue(5);
  m_lines->setSuffix(tr(" per model"));
  auto* resample = new QPushButton(tr("Resample"), this);
  resample->setToolTip(tr("Draw new samples"));
  auto* row = new QHBoxLayout;
  row->addWidget(m_lines, 1);
  row->addWidget(resample);
  form->addRow(m_draw, row);
  m_correlation = new QCheckBox(tr("Correlation of"), this);
  m_correlation->setToolTip(
      tr("Hover over the plot: a dashed curve (right-hand axis) shows the model's predictive "
         "correlation between y at the hovered x and y at every other x. Exact for the GP "
         "baselines and TNP-ND kinds; estimated from %1 samples for TNP-A once you pause.")
          .arg(estimated_from));
  m_correlation_model = new QComboBox(this);
  form->addRow(m_correlation, m_correlation_model);

  connect(m_draw, &QCheckBox::toggled, this, &SamplesBox::requestChanged);
  connect(m_lines, &QSpinBox::valueChanged, this, [this] {
    if (m_draw->isChecked()) Q_EMIT requestChanged();
  });
  connect(resample, &QPushButton::clicked, this, &SamplesBox::resampleRequested);
  connect(m_correlation, &QCheckBox::toggled, this, [this] {
    Q_EMIT correlationChanged();
    Q_EMIT requestChanged();
  });
  connect(m_correlation_model, &QComboBox::currentIndexChanged, this, [this] {
    Q_EMIT correlationChanged();
    if (m_correlation->isChecked()) Q_EMIT requestChanged();
  });
}

int SamplesBox::samples() const {
  return m_draw->isChecked() ? m_lines->value() : 0;
}

void SamplesBox::setSamples(int count) {
  if (count > 0) m_lines->setValue(count);
  m_draw->setChecked(count > 0);
}

void SamplesBox::addJointModel(const QString& name, const QString& id) {
  m_correlation_model->addItem(name, id);
}

QString SamplesBox::correlationModel() const {
  return m_correlation->isChecked() ? m_correlation_model->currentData().toString() : QString();
}

void SamplesBox::setCorrelationModel(const QString& id) {
  const int index = m_correlation_model->findData(id);
  if (index >= 0) m_correlation_model->setCurrentIndex(index);
  m_correlation->setChecked(index >= 0);
}

}  // namespace npe::widgets
