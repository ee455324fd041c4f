#include "function1d/suggestion_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>

namespace npe::widgets {

SuggestionBox::SuggestionBox(QWidget* parent) : QGroupBox(tr("Where to observe next?"), parent) {
  auto* form = new QFormLayout(this);
  m_on = new QCheckBox(tr("Suggest with"), this);
  m_on->setToolTip(
      tr("The x where one more observation would tell the chosen model most: its score over the "
         "view is drawn under the plot, its best x marked (Andersson et al. 2023's greedy "
         "sensor placement)"));
  m_model = new QComboBox(this);
  m_score = new QComboBox(this);
  m_score->addItem(tr("Variance reduction"), int(AcquisitionScore::variance_reduction));
  m_score->addItem(tr("Predictive std"), int(AcquisitionScore::predictive_std));
  m_score->setItemData(
      0,
      tr("How much observing x (at the model's own mean there) lowers the summed predictive "
         "variance over the view: one forward per candidate, batched. For a GP this is exact"),
      Qt::ToolTipRole);
  m_score->setItemData(1,
                       tr("The model's predictive standard deviation at x: one forward for all "
                          "candidates, but blind to how an observation there informs others"),
                       Qt::ToolTipRole);
  m_proposal = new QLabel(this);
  m_proposal->setWordWrap(true);
  m_progress = new QProgressBar(this);
  m_progress->setMaximumHeight(10);
  m_progress->setTextVisible(false);
  m_progress->hide();
  m_add = new QPushButton(tr("Add"), this);
  m_add->setToolTip(
      tr("Observe at the proposed x: a context point there at the model's mean "
         "(undoable)"));
  m_add->setEnabled(false);
  auto* proposal_row = new QHBoxLayout;
  proposal_row->addWidget(m_proposal, 1);
  proposal_row->addWidget(m_add);
  form->addRow(m_on, m_model);
  form->addRow(tr("Score"), m_score);
  form->addRow(proposal_row);
  form->addRow(m_progress);
  auto changed = [this] { Q_EMIT settingsChanged(); };
  connect(m_on, &QCheckBox::toggled, this, changed);
  connect(m_model, qOverload<int>(&QComboBox::currentIndexChanged), this, changed);
  connect(m_score, qOverload<int>(&QComboBox::currentIndexChanged), this, changed);
  connect(m_add, &QPushButton::clicked, this, &SuggestionBox::addRequested);
}

void SuggestionBox::addModel(const QString& name, const QString& id) {
  if (m_model->findData(id) < 0) m_model->addItem(name, id);
}

QString SuggestionBox::model() const {
  return m_on->isChecked() ? m_model->currentData().toString() : QString();
}

void SuggestionBox::setModel(const QString& id) {
  const int index = m_model->findData(id);
  if (index >= 0) m_model->setCurrentIndex(index);
}

void SuggestionBox::setEnabledSuggestion(bool on) {
  m_on->setChecked(on);
}

AcquisitionScore SuggestionBox::score() const {
  return static_cast<AcquisitionScore>(m_score->currentData().toInt());
}

void SuggestionBox::setScore(AcquisitionScore score) {
  m_score->setCurrentIndex(m_score->findData(int(score)));
}

void SuggestionBox::showProposal(const QString& text, bool can_add) {
  m_proposal->setText(text);
  m_add->setEnabled(can_add);
}

void SuggestionBox::showProgress(qint64 done, qint64 total) {
  m_progress->setVisible(done < total);
  m_progress->setRange(0, int(std::min<qint64>(total, 1 << 30)));
  m_progress->setValue(int(std::min(done, total)));
}

}  // namespace npe::widgets
