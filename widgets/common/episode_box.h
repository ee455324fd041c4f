#pragma once
// The 1-D tab's "Observe the truth" group: the strategy that chooses where to observe, Observe,
// Replay and End, and a small plot of the shown models' held-out RMSE or log-likelihood against
// the number of observations, one line style per strategy and one colour per model
// (common/truth_episode.h holds the episode; the tab runs it).

#include <QGroupBox>

#include "common/truth_episode.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;

namespace npe::widgets {

class ModelList;

/// What the box says of its tab's places and GP: a place is an x in the 1-D tab, a cell in the
/// Maps tab.
struct EpisodeWording {
  QString box_tip;
  /// Per strategy, in kObserveStrategies' order.
  std::array<QString, kObserveStrategies.size()> strategy_tips;
  /// The unit of the RMSE axis ("" for the data's own).
  QString rmse_unit;
};

class EpisodeBox final : public QGroupBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(EpisodeBox)

 public:
  explicit EpisodeBox(const EpisodeWording& wording, QWidget* parent = nullptr);

  ObserveStrategy strategy() const;
  void setStrategy(ObserveStrategy strategy);
  /// The plot shows the held-out log-likelihood (else the RMSE).
  bool showsLogLikelihood() const;
  void setShowsLogLikelihood(bool ll);

  /// Draws every run's scores of the models in `models` that are enabled (none: clears).
  void showEpisode(const TruthEpisode* episode, const ModelList& models);
  /// One line under the plot: the episode's state, or why observing is not possible.
  void setStatus(const QString& text);
  /// Observing needs a hidden function (GP-sample mode); `why` says what is missing.
  void setObservable(bool observable, const QString& why);
  /// Replay and End are offered while an episode runs.
  void setRunning(bool running);

  QCustomPlot* curves() const { return m_curves; }

 Q_SIGNALS:
  void observeRequested(int count);
  void replayRequested();
  void endRequested();
  void strategyChanged();

 private:
  QComboBox* m_strategy = nullptr;
  QComboBox* m_measure = nullptr;
  QPushButton* m_observe = nullptr;
  QPushButton* m_observe_five = nullptr;
  QPushButton* m_replay = nullptr;
  QPushButton* m_end = nullptr;
  QCustomPlot* m_curves = nullptr;
  QLabel* m_status = nullptr;
  QString m_rmse_unit;
};

}  // namespace npe::widgets
