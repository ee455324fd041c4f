#include "function1d/teaching_aids_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QPushButton>

namespace npe::widgets {

TeachingAidsBox::TeachingAidsBox(QWidget* parent) : QGroupBox(tr("Teaching aids"), parent) {
  auto* form = new QFormLayout(this);
  auto* sweep = new QPushButton(tr("Δ sweep…"), this);
  sweep->setToolTip(
      tr("Log-likelihood against Δ for the shown models on fixed sampled tasks "
         "(the paper's Figure 2, live)"));
  m_attention = new QCheckBox(tr("Show attention of"), this);
  m_attention->setToolTip(
      tr("Hover over the plot: lines show which context points the "
         "prediction at that x attends to (last cross-attention layer, "
         "summed over heads)"));
  m_attention_model = new QComboBox(this);
  form->addRow(sweep);
  form->addRow(m_attention, m_attention_model);
  connect(sweep, &QPushButton::clicked, this, &TeachingAidsBox::sweepRequested);
  connect(m_attention, &QCheckBox::toggled, this, [this](bool on) {
    if (!on) Q_EMIT attentionOff();
  });
}

void TeachingAidsBox::addAttentionModel(const QString& name, const QString& id) {
  m_attention_model->addItem(name, id);
}

QString TeachingAidsBox::attentionModel() const {
  return m_attention->isChecked() ? m_attention_model->currentData().toString() : QString();
}

}  // namespace npe::widgets
