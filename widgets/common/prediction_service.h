#pragma once
// Off-GUI-thread predictions for every explorer tab. A tab posts requests; a newer request
// supersedes one still waiting, so the view follows the mouse and the GUI never waits.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>
#include <QThread>

#include "common/context_budget.h"
#include "common/model_entry.h"
#include "common/placement_job.h"
#include "npe/data/task_source.h"
#include "npe/predictors/kernel_posterior.h"

namespace npe::widgets {

/// Everything one prediction round needs, copied (the worker never touches GUI state).
struct PredictionRequest {
  uint64_t serial = 0;
  /// Settled round: refined predictors (more fitted-GP iterations) and the equivariance metric.
  bool refine = false;
  /// One task (batch size 1, any D_x): the context and the query points xt, plus the oracle
  /// when the data's generating process is known.
  TaskBatch batch;
  /// The translation the data are shown at. On the refined round the equivariance error
  /// compares the prediction with the prediction for the data translated back by -shift.
  Translation shift;
  /// The last place_features inputs (and shift components) are properties of the place (ERA5:
  /// elevation, land fraction); a checkpoint whose task had none sees the coordinates only.
  int64_t place_features = 0;
  /// Held-out observations for the live log-likelihood (and the exported predictions), either as
  /// extra points
  /// (held_out_x [1,Nh,Dx], held_out_y [1,Nh,Dy]) ...
  torch::Tensor held_out_x, held_out_y;
  /// ... or as known outputs of some query points: indices [Nh] into xt and outputs [Nh,Dy].
  torch::Tensor held_out_index, held_out_index_y;
  std::vector<ModelEntry> models;
  /// Coherent samples per model with a joint predictive (0: none), drawn with sample_seed at
  /// sample_points query points spread evenly over xt (fewer than the query points, since
  /// joint predictions cost the square or cube of their number).
  int samples = 0;
  uint64_t sample_seed = 0;
  int64_t sample_points = 64;
  /// The model (id) whose predictive correlation between those points is wanted (empty: none):
  /// exact where the covariance is known (GP, TNP-ND kinds), else estimated from
  /// kCorrelationSamples samples (TNP-A) on refined rounds only.
  QString correlation_model;
};

/// Samples behind an estimated correlation matrix.
inline constexpr int kCorrelationSamples = 128;

struct ModelPrediction {
  QString id;
  torch::Tensor mean, stddev;  ///< [Nt, Dy] on the CPU; undefined on error
  double held_out_ll = std::numeric_limits<double>::quiet_NaN();
  /// [Nh, Dy] at the request's held-out points (held_out_x or held_out_index), when it has them.
  torch::Tensor held_out_mean, held_out_stddev;
  double equivariance_error = std::numeric_limits<double>::quiet_NaN();
  double milliseconds = 0.0;
  QString error;  ///< non-empty when this model failed; the others still report
  /// [K, Ns] samples of the first output at PredictionResult::sample_x; undefined when none.
  torch::Tensor samples;
  /// [Ns, Ns] predictive correlation at sample_x (first output); undefined when none.
  torch::Tensor correlation;
  bool correlation_estimated = false;
  double sample_milliseconds = 0.0;
  QString sample_error;  ///< why samples or correlation failed (the prediction still stands)
  /// What the context says about the kernel, from predictors that weigh kernel hypotheses
  /// (gp-bayes); empty for every other.
  std::optional<KernelPosterior> kernel_posterior;
  /// How much of the context the model saw (context_budget.h): all of it unless its estimated
  /// time for the whole context exceeded the round's budget.
  ContextPlan context;
  /// "on 4,096 of 200,000 points" when the model saw a subset, else empty.
  QString subsetNote() const { return describe_subset(context); }
  /// Where the scene leaves what the model saw in training (training_regime.h), one phrase
  /// each; empty inside it, for models whose regime is unknown, and for baselines.
  QStringList outside_training;
  /// A model file that records no task this program knows (a TorchScript NP, an imported
  /// model): what it saw in training is unknown, so no guardrail can be drawn for it.
  bool training_unknown = false;
  /// The legend's note: the context subset, then "outside training: ..." or "training
  /// unknown".
  QString note() const {
    auto text = subsetNote();
    if (!outside_training.isEmpty()) {
      text += (text.isEmpty() ? "" : ", ") + QStringLiteral("outside training: ") +
              outside_training.join("; ");
    } else if (training_unknown) {
      text += (text.isEmpty() ? "" : ", ") + QStringLiteral("training unknown");
    }
    return text;
  }
  /// This is the model's previous prediction, shown (faded, "updating…") until its prediction
  /// for the newest round arrives (with_previous_predictions).
  bool updating = false;
};

struct PredictionResult {
  uint64_t serial = 0;
  bool refine = false;
  /// When the worker started computing this round (timings tell rounds from before an edit).
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point finished;  ///< when its last model was done
  torch::Tensor xt;                                ///< [Nt, Dx] query points
  /// The request's extra held-out points, [Nh, Dx] and [Nh, Dy] (undefined when none); for
  /// held-out query points (held_out_index), held_out_y only.
  torch::Tensor held_out_x, held_out_y;
  torch::Tensor sample_x;  ///< [Ns, Dx] where samples and correlations are given
  /// The models done so far, in the request's order.
  std::vector<ModelPrediction> models;
  /// false for a delivery while the round is still running: `models` holds those done, the
  /// others are in `pending`. The round's last delivery is complete; its `pending` then lists
  /// the models it skipped because a newer request was waiting (the next round computes them).
  bool complete = true;
  std::vector<QString> pending;
};

/// Attention of one model's prediction at one query point over the context points.
struct AttentionRequest {
  uint64_t serial = 0;
  TaskBatch batch;  ///< one task with exactly one target
  ModelEntry model;
};
struct AttentionResult {
  uint64_t serial = 0;
  double mean = 0.0;
  std::vector<double> weights;  ///< one per context point, normalised to sum to 1
};

/// What a round tells its caller while it runs, and how it learns the models' speed.
struct RoundHooks {
  /// Before each model starts, from the thread that runs it.
  std::function<void(const QString& id)> on_model;
  /// After each model of a round of several models but the last: the results so far (complete
  /// = false), from the thread that ran the model, so that a tab draws each model as it
  /// finishes and never waits for the slowest.
  std::function<void(const PredictionResult& so_far)> on_progress;
  /// True when a newer request waits: the round's remaining slow models are skipped.
  std::function<bool()> newer_request_waiting;
  /// Learns each model's speed (nullptr: a fresh calibration per round).
  CostCalibration* calibration = nullptr;
};

/// Models expected to take longer than this are skipped when a newer request waits.
inline constexpr double kSkippableModelMs = 50.0;

/// Computes one request (runs on the worker thread; exposed for tests). Models may run side by
/// side on helper threads (see model_lanes), the cheapest first; each sees the context its
/// budget allows (plan_context: kLiveBudgetMs, or kSettledBudgetMs on refined rounds).
PredictionResult compute_predictions(const PredictionRequest& request,
                                     const RoundHooks& hooks = {});
AttentionResult compute_attention(const AttentionRequest& request);

/// What the tab shows for a delivery: the delivery, plus, for each model still pending in it,
/// the model's prediction from the delivery shown before (`shown`) marked `updating`, where
/// both are at the same query points (elsewhere the tab keeps what it drew, if it can).
PredictionResult with_previous_predictions(PredictionResult delivery,
                                           const PredictionResult& shown);

/// Owns the worker thread and coalesces requests, and the deliveries of a running round (the
/// GUI thread draws the newest one; deliveries it had no time for are dropped).
class PredictionService final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(PredictionService)

 public:
  explicit PredictionService(QObject* parent = nullptr);
  ~PredictionService() override;

  /// Queues a request; if one is already waiting it is replaced (only the newest matters).
  /// Requests made before the event loop first runs start from it.
  void request(PredictionRequest request);
  void request_attention(AttentionRequest request);
  /// Queues a sensor placement (placement_job.h), replacing one that waits and stopping one that
  /// runs. Predictions go first: a placement running when a prediction is requested stops after
  /// its current block of candidates and starts again after the prediction.
  void request_placement(PlacementRequest request);
  /// Stops the running placement and drops a waiting one (placementReady reports it cancelled).
  void cancelPlacement();
  /// While paused, requests wait (the newest of each kind) and start once resumed; a round
  /// already running finishes and is delivered.
  void setPaused(bool paused);

 Q_SIGNALS:
  void predictionsReady(const npe::widgets::PredictionResult& result);
  void attentionReady(const npe::widgets::AttentionResult& result);
  void placementReady(const npe::widgets::PlacementResult& result);
  /// Candidates scored so far of all the placement's rounds.
  void placementProgress(uint64_t serial, qint64 done, qint64 total);
  /// A model of the running request started computing (for "computing…" indicators).
  void modelStarted(const QString& id, uint64_t serial);

 private:
  void dispatch();

  QThread m_thread;
  QObject* m_worker = nullptr;    // lives in m_thread
  CostCalibration m_calibration;  // used on the worker thread
  std::atomic<bool> m_newer_request{false};
  // The newest delivery of the running round the GUI thread has not taken yet (see dispatch).
  std::mutex m_progress_mutex;
  std::optional<PredictionResult> m_progress;
  std::optional<PredictionRequest> m_pending;
  std::optional<AttentionRequest> m_pending_attention;
  std::optional<PlacementRequest> m_pending_placement;
  std::atomic<bool> m_stop_placement{false};  // a newer placement or Cancel: drop the running one
  bool m_busy = false;
  bool m_paused = false;
  bool m_constructing = true;  // until the event loop first runs
};

}  // namespace npe::widgets
