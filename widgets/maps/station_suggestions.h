#pragma once
// The maps tab's "Suggest stations" group: one model's greedy sensor placement (Andersson et al.
// 2023; npe/predictors/sensor_placement.h) over the cells of the target window, run on the
// prediction worker with progress and Cancel. Its first round's score of every cell becomes a
// map layer, its proposals are marked on the map in the model's colour, "Add best" adds the
// first as a station and "Place all" every one (each one undoable step). The proposals belong
// to the stations, window and hour they were computed for: any change to those withdraws them.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <QGroupBox>
#include <QPoint>
#include <QRect>

#include <torch/types.h>

#include "common/prediction_service.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace npe::widgets {

class ModelList;

class StationSuggestions final : public QGroupBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(StationSuggestions)

 public:
  /// `scene` gives the tab's prediction request now (context: the stations; targets: every cell
  /// of `window()`, row-major), or nothing without data; `observable(cell)` whether a station
  /// could be added at a window cell (usable and free); `output_scale` the standard deviation
  /// of the standardised outputs in kelvin (scores are shown in K² or K).
  StationSuggestions(PredictionService* service, const ModelList* models,
                     std::function<std::optional<PredictionRequest>()> scene,
                     std::function<QRect()> window,
                     std::function<bool(const QPoint& cell)> observable,
                     std::function<double()> output_scale, QWidget* parent = nullptr);

  /// Models that can propose (every model of the tab).
  void addModel(const QString& name, const QString& id);
  void setModel(const QString& id);
  void setCount(int count);
  int count() const;
  void setScore(AcquisitionScore score);

  /// Starts the search for the current stations, window and hour.
  void suggest();
  void cancel();
  bool running() const { return m_running; }
  /// The proposals shown (window-relative cells, best first), their model's id, and the first
  /// round's score of every window cell ([w, w] float64, K² or K, NaN where the cell could not
  /// be observed); empty while there are none.
  const std::vector<QPoint>& proposals() const { return m_proposals; }
  QString proposalModel() const { return m_model_id; }
  const torch::Tensor& scoreMap() const { return m_score_map; }
  QString scoreTitle() const;
  /// The stations, window or hour changed: the proposals no longer apply.
  void withdraw();

 Q_SIGNALS:
  /// Proposals arrived or were withdrawn (redraw the map and its layers).
  void proposalsChanged();
  /// Add these window cells as stations, as one undoable step.
  void placeRequested(const std::vector<QPoint>& cells, const QString& text);
  void statusMessage(const QString& message);
  /// A search ended (proposals shown, cancelled or failed).
  void finished();

 private:
  void onPlacement(const PlacementResult& result);
  void updateButtons();

  PredictionService* m_service;
  const ModelList* m_models;
  std::function<std::optional<PredictionRequest>()> m_scene;
  std::function<QRect()> m_window;
  std::function<bool(const QPoint&)> m_observable;
  std::function<double()> m_output_scale;
  QComboBox* m_model = nullptr;
  QComboBox* m_score = nullptr;
  QSpinBox* m_count = nullptr;
  QPushButton* m_suggest = nullptr;
  QPushButton* m_add_best = nullptr;
  QPushButton* m_place_all = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_result = nullptr;
  uint64_t m_serial = 0;
  bool m_running = false;
  // The window cell of each candidate of the running search, row-major indices.
  std::vector<int64_t> m_candidate_cells;
  int m_window_width = 0;
  std::vector<QPoint> m_proposals;
  QString m_model_id;
  torch::Tensor m_score_map;
  AcquisitionScore m_shown_score = AcquisitionScore::variance_reduction;
};

}  // namespace npe::widgets
