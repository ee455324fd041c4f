#pragma once
// The 1-D tab's "Where to observe next?" group: which model proposes, by which score, what it
// proposes, and Add to observe there (function1d/observation_suggester.h does the work).

#include <QGroupBox>

#include "npe/predictors/sensor_placement.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;

namespace npe::widgets {

class SuggestionBox final : public QGroupBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(SuggestionBox)

 public:
  explicit SuggestionBox(QWidget* parent = nullptr);

  /// A model that can propose (every model with a predictive std).
  void addModel(const QString& name, const QString& id);
  /// The proposing model; empty while the suggestion is off.
  QString model() const;
  void setModel(const QString& id);
  void setEnabledSuggestion(bool on);
  AcquisitionScore score() const;
  void setScore(AcquisitionScore score);

  /// What the last proposal was (or why there is none); Add is offered only with a proposal.
  void showProposal(const QString& text, bool can_add);
  /// Progress of a running search (done of total candidates); hidden when done >= total.
  void showProgress(qint64 done, qint64 total);

 Q_SIGNALS:
  /// The model, the score or the switch changed.
  void settingsChanged();
  void addRequested();

 private:
  QCheckBox* m_on = nullptr;
  QComboBox* m_model = nullptr;
  QComboBox* m_score = nullptr;
  QLabel* m_proposal = nullptr;
  QProgressBar* m_progress = nullptr;
  QPushButton* m_add = nullptr;
};

}  // namespace npe::widgets
