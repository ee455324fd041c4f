#pragma once
// The 1-D tab's suggestion of where to observe next: after every prediction round, asks the
// prediction service for the chosen model's sensor placement over the view (candidates and
// targets on grids over the visible x range, the context as shown), draws the acquisition
// score in a strip under the plot with a marker at the proposal, and adds the proposal as a
// context point (at the model's mean there) on request.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <QObject>
#include <QPointF>

#include "npe/data/function_scene.h"

namespace npe::widgets {

class FunctionPlot;
class ModelList;
class PredictionService;
class SuggestionBox;
struct PlacementResult;

class ObservationSuggester final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ObservationSuggester)

 public:
  /// `scene` gives the data as shown (the context, Δ included, and the truth's kernel when
  /// there is one, for the GP oracle); the suggester sets its query range to the view.
  ObservationSuggester(FunctionPlot* plot, PredictionService* service, const ModelList* models,
                       SuggestionBox* box, std::function<FunctionScene()> scene,
                       QObject* parent = nullptr);

  /// Candidates scored over the view, and targets whose uncertainty counts.
  static constexpr int64_t kCandidates = 121;
  static constexpr int64_t kTargets = 64;

  /// Asks for a new proposal (after a prediction round, or a change of model or score); the one
  /// shown fades until it arrives.
  void refresh();
  /// The proposal shown: (x, the model's mean there); none while off, failed or computing the
  /// first one.
  std::optional<QPointF> proposal() const { return m_proposal; }
  /// The last proposal's search on the worker thread, in milliseconds, and its model's name.
  double lastMilliseconds() const { return m_milliseconds; }
  QString lastModelName() const { return m_model_name; }
  /// A proposal was asked for and has not arrived yet.
  bool pending() const { return m_answered != m_serial; }

 Q_SIGNALS:
  /// The user asked to observe at the proposal (display coordinates).
  void addRequested(QPointF point);
  /// The proposal asked for last was drawn, or failed.
  void answered();

 private:
  void onPlacement(const PlacementResult& result);

  FunctionPlot* m_plot;
  PredictionService* m_service;
  const ModelList* m_models;
  SuggestionBox* m_box;
  std::function<FunctionScene()> m_scene;
  uint64_t m_serial = 0, m_answered = 0;
  std::optional<QPointF> m_proposal;
  double m_milliseconds = 0.0;
  QString m_model_name;
};

}  // namespace npe::widgets
