#pragma once
// Off-GUI-thread predictions for the 1-D explorer. The GUI posts requests; a newer request
// supersedes one still waiting, so the plot follows the mouse and the GUI never waits.

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>
#include <QThread>

#include "model_entry.h"
#include "npe/kernels.h"

namespace npe::widgets {

/// Everything one prediction round needs, copied (the worker never touches GUI state).
struct PredictionRequest {
  uint64_t serial = 0;
  double shift = 0.0;
  /// Context and query points in display coordinates (already shifted by `shift`).
  std::vector<double> xc, yc, xt;
  /// Held-out observations in display coordinates (empty without ground truth).
  std::vector<double> held_out_x, held_out_y;
  /// The ground truth's kernel and noise (for the GP oracle); none in free-hand mode.
  std::optional<KernelSpec> truth_kernel;
  double truth_noise_std = 0.2;
  std::vector<ModelEntry> models;
  /// Refinement pass: full fitted-GP iterations and the equivariance metric.
  bool refine = false;
  int interactive_fit_iterations = 60;
  int refined_fit_iterations = 500;
};

struct ModelPrediction {
  QString id;
  std::vector<double> mean, stddev;
  double held_out_ll = std::numeric_limits<double>::quiet_NaN();
  double equivariance_error = std::numeric_limits<double>::quiet_NaN();
  double milliseconds = 0.0;
  QString error;  ///< non-empty when this model failed; the others still report
};

struct PredictionResult {
  uint64_t serial = 0;
  bool refine = false;
  std::vector<double> xt;
  std::vector<ModelPrediction> models;
};

/// Attention of one model's prediction at one query point over the context points.
struct AttentionRequest {
  uint64_t serial = 0;
  std::vector<double> xc, yc;
  double x = 0.0;
  ModelEntry model;
};
struct AttentionResult {
  uint64_t serial = 0;
  double x = 0.0;
  double mean = 0.0;
  std::vector<double> weights;  ///< one per context point, normalised to sum to 1
};

/// Computes one request (runs on the worker thread; exposed for tests).
PredictionResult compute_predictions(const PredictionRequest& request);
AttentionResult compute_attention(const AttentionRequest& request);

/// Owns the worker thread and coalesces requests.
class PredictionService final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(PredictionService)

 public:
  explicit PredictionService(QObject* parent = nullptr);
  ~PredictionService() override;

  /// Queues a request; if one is already waiting it is replaced (only the newest matters).
  void request(PredictionRequest request);
  void request_attention(AttentionRequest request);

 Q_SIGNALS:
  void predictionsReady(const npe::widgets::PredictionResult& result);
  void attentionReady(const npe::widgets::AttentionResult& result);

 private:
  void dispatch();

  QThread m_thread;
  QObject* m_worker = nullptr;  // lives in m_thread
  std::optional<PredictionRequest> m_pending;
  std::optional<AttentionRequest> m_pending_attention;
  bool m_busy = false;
};

}  // namespace npe::widgets
