#include "common/prediction_service.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>

#include <torch/torch.h>

#include "common/lane_threads.h"
#include "npe/errors.h"
#include "npe/predictors/equivariance.h"
#include "npe/training/training_regime.h"

namespace npe::widgets {
namespace {

void require_finite(const Prediction& p) {
  if (!torch::isfinite(p.mean).all().item<bool>() ||
      !torch::isfinite(p.stddev).all().item<bool>()) {
    throw InvalidInputError("produced non-finite values for this input");
  }
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Pearson correlation of a covariance matrix [N,N].
torch::Tensor correlation_of(const torch::Tensor& covariance) {
  auto scale = covariance.diagonal().clamp_min(1e-300).sqrt();
  return covariance / (scale.unsqueeze(0) * scale.unsqueeze(1));
}

// Samples and correlation of one joint predictor on the sample points (Dy: first output).
void add_joint_outputs(Predictor& predictor, const PredictionRequest& request,
                       const TaskBatch& points, bool correlation, ModelPrediction& out) {
  const auto dim_y = points.task.dim_y();
  auto first_output = [&](const torch::Tensor& matrix) {
    // Values are target-major (target n, output d at n * Dy + d).
    auto index = torch::arange(0, matrix.size(0), dim_y);
    return matrix.index_select(0, index).index_select(1, index);
  };
  const auto start = std::chrono::steady_clock::now();
  if (request.samples > 0) {
    auto draws = predictor.sample(points, request.samples, request.sample_seed);  // [K,1,Ns,Dy]
    if (!torch::isfinite(draws).all().item<bool>()) {
      throw InvalidInputError("produced non-finite samples for this input");
    }
    out.samples = draws.select(1, 0).select(-1, 0).contiguous();
  }
  if (correlation) {
    auto covariance = predictor.predictive_covariance(points);
    if (covariance.defined()) {
      out.correlation = correlation_of(first_output(covariance[0]));
    } else if (request.refine) {
      auto draws = predictor.sample(points, kCorrelationSamples, request.sample_seed + 1)
                       .select(1, 0)
                       .select(-1, 0)
                       .to(torch::kFloat64);
      auto centred = draws - draws.mean(0, true);
      out.correlation = correlation_of(centred.t().matmul(centred) / double(draws.size(0) - 1));
      out.correlation_estimated = true;
    }
  }
  out.sample_milliseconds = milliseconds_since(start);
}

// What every model of a round shares: the request, the query points with any held-out points
// riding along, and the points where samples are drawn.
struct Round {
  const PredictionRequest& request;
  TaskBatch batch;
  TaskBatch sample_points;
  int64_t num_query = 0;
  bool extra = false;
  bool joint_outputs = false;
};

Predictor& predictor_of(const PredictionRequest& request, const ModelEntry& entry) {
  return request.refine && entry.refined_predictor ? *entry.refined_predictor : *entry.predictor;
}

// A checkpoint whose task configuration names no place features (trained before they existed,
// or without them); baselines (no task) take every input.
bool trained_without_place_features(const ModelEntry& entry) {
  if (!entry.task.is_object()) return false;
  const auto features = entry.task.find("features");
  return features == entry.task.end() || !features->is_array() || features->empty();
}

// The place features a checkpoint was trained with, comma-separated; empty without any.
std::string place_features_of(const ModelEntry& entry) {
  if (trained_without_place_features(entry)) return {};
  std::string names;
  for (const auto& f : entry.task["features"]) {
    if (f.is_string()) names += (names.empty() ? "" : ", ") + f.get<std::string>();
  }
  return names;
}

Task coordinates_of(const Task& t, int64_t dim_coordinates) {
  return {t.xc.narrow(-1, 0, dim_coordinates), t.yc, t.xt.narrow(-1, 0, dim_coordinates), t.yt};
}

ModelPrediction predict_one(const Round& round, const ModelEntry& entry, const ContextPlan& plan) {
  const auto& request = round.request;
  const auto num_query = round.num_query;
  ModelPrediction out;
  out.id = entry.id;
  out.context = plan;
  try {
    auto& predictor = predictor_of(request, entry);
    TaskBatch subset = round.batch;
    auto shift = request.shift;
    auto sample_points = round.sample_points;
    const bool coordinates_only =
        request.place_features > 0 && trained_without_place_features(entry);
    if (coordinates_only) {
      const auto dc = subset.task.dim_x() - request.place_features;
      subset.task = coordinates_of(subset.task, dc);
      if (sample_points.task.xt.defined())
        sample_points.task = coordinates_of(sample_points.task, dc);
      shift.resize(static_cast<size_t>(dc));
    } else if (request.place_features == 0 && entry.task.is_object() &&
               entry.task.value("kind", std::string()) == "era5") {
      // A grid without place features (a user's own file): a model that learned from them
      // cannot predict it, which is said in words rather than as a shape error.
      if (const auto features = place_features_of(entry); !features.empty()) {
        throw DataError("trained with place features (" + features +
                        ") that this grid does not have");
      }
    }
    if (plan.subset()) subset.task = subsample_context(subset.task, plan.context);
    const auto& batch = subset;
    if (batch.task.batch_size() == 1) {
      // The context as this model sees it against what it saw in training (its first input:
      // x of a 1-D task, the latitude coordinate of a gridded one).
      const auto regime = training_regime(entry.task, entry.capabilities.translation_equivariant);
      const auto x = batch.task.xc.select(-1, 0).to(torch::kCPU, torch::kFloat64).contiguous();
      const std::vector<double> xs(x.data_ptr<double>(), x.data_ptr<double>() + x.numel());
      for (const auto& warning : regime_warnings(regime, xs, request.shift)) {
        out.outside_training << QString::fromStdString(warning);
      }
      // Baselines have no training; a model file without a known task has one nobody recorded.
      out.training_unknown = !regime.known && !entry.checkpoint_path.isEmpty();
    }
    const auto start = std::chrono::steady_clock::now();
    auto p = predictor.predict(batch);
    require_finite(p);
    out.milliseconds = milliseconds_since(start);
    out.mean = p.mean[0].narrow(0, 0, num_query);
    out.stddev = p.stddev[0].narrow(0, 0, num_query);
    // Free after predict(): gp-bayes keeps the posterior it predicted from.
    if (auto kernels = predictor.kernel_posteriors(batch); !kernels.empty()) {
      out.kernel_posterior = std::move(kernels.front());
    }
    if (round.extra) {
      Prediction held{p.mean.narrow(1, num_query, p.mean.size(1) - num_query),
                      p.stddev.narrow(1, num_query, p.mean.size(1) - num_query)};
      out.held_out_ll = log_likelihood_per_task(held, request.held_out_y).item<double>();
      out.held_out_mean = held.mean[0];
      out.held_out_stddev = held.stddev[0];
    } else if (request.held_out_index.defined() && request.held_out_index.numel() > 0) {
      Prediction held{out.mean.index_select(0, request.held_out_index).unsqueeze(0),
                      out.stddev.index_select(0, request.held_out_index).unsqueeze(0)};
      out.held_out_ll =
          log_likelihood_per_task(held, request.held_out_index_y.unsqueeze(0)).item<double>();
      out.held_out_mean = held.mean[0];
      out.held_out_stddev = held.stddev[0];
    }
    if (request.refine) {
      // Prediction for the data moved back by -shift, compared with this one moved back:
      // zero for an exactly translation-equivariant model.
      Translation back;
      for (double s : shift) back.push_back(-s);
      out.equivariance_error = back.empty() ? 0.0 : equivariance_error(predictor, batch, back, &p);
    }
    if (round.joint_outputs && entry.capabilities.joint) {
      try {
        if (plan.subset()) {
          sample_points.task = subsample_context(sample_points.task, plan.context);
        }
        add_joint_outputs(predictor, request, sample_points, entry.id == request.correlation_model,
                          out);
      } catch (const std::exception& e) {
        out.sample_error = QString::fromUtf8(e.what());
        out.samples = out.correlation = torch::Tensor();
      }
    }
  } catch (const std::exception& e) {
    out.error = QString::fromUtf8(e.what());
    out.mean = out.stddev = torch::Tensor();
  }
  return out;
}

// How many models of a round run side by side. Where each model runs on one thread (two cores:
// the explorer leaves one to drawing), the models are independent work for separate cores:
// side by side, the functions tab's edit-to-view median fell from 31.8-40.1 ms to 29.4-30.7 ms
// (runs interleaved, Intel Xeon, 2 cores, 2026-11-23). With more intra-op threads a model
// already uses the cores, and lanes would only oversubscribe them.
size_t model_lanes(size_t models) {
  if (at::get_num_threads() != 1) return 1;
  return std::min<size_t>(models, std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

PredictionResult compute_predictions(const PredictionRequest& request, const RoundHooks& hooks) {
  torch::NoGradGuard no_grad;
  PredictionResult result;
  result.serial = request.serial;
  result.refine = request.refine;
  result.started = std::chrono::steady_clock::now();
  const auto& task = request.batch.task;
  result.xt = task.xt[0];
  Round round{request, request.batch, request.batch};
  round.num_query = task.num_targets();
  // Extra held-out points ride along with the query points: one prediction per model.
  round.extra = request.held_out_x.defined() && request.held_out_x.size(1) > 0;
  if (round.extra) {
    round.batch.task.xt = torch::cat({task.xt, request.held_out_x.to(task.xt.dtype())}, 1);
    result.held_out_x = request.held_out_x[0];
    if (request.held_out_y.defined()) result.held_out_y = request.held_out_y[0];
  } else if (request.held_out_index.defined() && request.held_out_index_y.defined()) {
    // Held-out targets chosen among the queries (the Maps and Images tabs): their truth, as
    // for extra ones (the models' held_out_mean is at the same cells).
    result.held_out_y = request.held_out_index_y;
  }
  // The sample points: evenly spread over the query points.
  round.joint_outputs =
      (request.samples > 0 || !request.correlation_model.isEmpty()) && round.num_query > 0;
  if (round.joint_outputs) {
    const auto count =
        std::min<int64_t>(std::max<int64_t>(request.sample_points, 2), round.num_query);
    auto index = torch::linspace(0, double(round.num_query - 1), count, torch::kFloat64)
                     .round()
                     .to(torch::kLong);
    round.sample_points.task.xt = task.xt.index_select(1, index);
    result.sample_x = round.sample_points.task.xt[0];
  }
  const size_t count = request.models.size();

  // How much context each model sees, and what it will cost.
  CostCalibration fresh;
  CostCalibration& calibration = hooks.calibration ? *hooks.calibration : fresh;
  const BatchShape shape{1, task.num_context(), round.batch.task.num_targets(),
                         input_span(round.batch.task)};
  const double budget = request.refine ? kSettledBudgetMs : kLiveBudgetMs;
  std::vector<ContextPlan> plans(count);
  for (size_t i = 0; i < count; ++i) {
    const auto& entry = request.models[i];
    if (!entry.predictor) continue;
    plans[i] = plan_context(calibration, entry.id, predictor_of(request, entry), shape, budget);
  }
  auto expected_ms = [&](size_t i) {
    return std::isfinite(plans[i].estimated_ms) ? plans[i].estimated_ms : 0.0;
  };
  // Helpers only where lanes can be used (made with the first round; the thread count is set
  // once, at start-up).
  static LaneThreads helpers(model_lanes(std::numeric_limits<size_t>::max()) - 1);
  const size_t lanes = std::max<size_t>(1, std::min(model_lanes(count), helpers.helpers() + 1));
  // Which lane runs which models: the most expensive first, each to the lane with the least
  // work so far (the round ends when its busiest lane does: with models of 24, 6.5 and 6 ms on
  // two lanes, 24 ms instead of 30 for the cheapest-first round robin); then, within a lane, the
  // cheapest first, so that they draw while the slow ones compute. While the models' costs keep
  // their order, each model stays on the thread it ran on before.
  std::vector<size_t> by_cost(count);
  for (size_t i = 0; i < count; ++i) by_cost[i] = i;
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](size_t a, size_t b) { return expected_ms(a) > expected_ms(b); });
  std::vector<std::vector<size_t>> lane_models(lanes);
  std::vector<double> lane_ms(lanes, 0.0);
  for (size_t i : by_cost) {
    const auto lane = size_t(std::min_element(lane_ms.begin(), lane_ms.end()) - lane_ms.begin());
    lane_models[lane].push_back(i);
    lane_ms[lane] += expected_ms(i);
  }
  for (auto& models : lane_models) std::reverse(models.begin(), models.end());
  // Every model is delivered as it finishes: a tab draws the fast ones at once and keeps the
  // slow ones' last predictions (faded) until theirs arrive, so no edit waits for the slowest.
  const bool progressive = hooks.on_progress && count > 1;

  result.models.resize(count);
  std::vector<char> done(count, 0);
  std::mutex done_mutex;
  // The results so far, in the request's order.
  auto snapshot = [&](bool complete) {
    PredictionResult so_far = result;
    so_far.models.clear();
    so_far.complete = complete;
    for (size_t i = 0; i < count; ++i) {
      if (done[i]) {
        so_far.models.push_back(result.models[i]);
      } else {
        so_far.pending.push_back(request.models[i].id);
      }
    }
    return so_far;
  };
  helpers.run(lanes, [&](size_t lane) {
    torch::NoGradGuard lane_no_grad;                                     // grad mode is per thread
    if (lane > 0 && at::get_num_threads() != 1) at::set_num_threads(1);  // as model_lanes asks
    for (const size_t i : lane_models[lane]) {
      const auto& entry = request.models[i];
      if (expected_ms(i) > kSkippableModelMs && hooks.newer_request_waiting &&
          hooks.newer_request_waiting()) {
        continue;  // stays pending: the newer round computes it
      }
      if (hooks.on_model) hooks.on_model(entry.id);
      auto prediction = predict_one(round, entry, plans[i]);  // catches what a model throws
      if (prediction.error.isEmpty()) {
        calibration.record(entry.id, plans[i].flops, prediction.milliseconds);
      }
      std::lock_guard lock(done_mutex);
      result.models[i] = std::move(prediction);
      done[i] = 1;
      const bool last = std::all_of(done.begin(), done.end(), [](char d) { return d != 0; });
      if (progressive && !last) hooks.on_progress(snapshot(false));
    }
  });
  result.finished = std::chrono::steady_clock::now();
  return snapshot(true);
}

PredictionResult with_previous_predictions(PredictionResult delivery,
                                           const PredictionResult& shown) {
  if (delivery.pending.empty() || !delivery.xt.defined() || !shown.xt.defined() ||
      delivery.xt.sizes() != shown.xt.sizes() || !torch::equal(delivery.xt, shown.xt)) {
    return delivery;
  }
  std::vector<QString> still_pending;
  for (const auto& id : delivery.pending) {
    const auto previous = std::find_if(
        shown.models.begin(), shown.models.end(),
        [&](const auto& p) { return p.id == id && p.error.isEmpty() && p.mean.defined(); });
    if (previous == shown.models.end()) {
      still_pending.push_back(id);
      continue;
    }
    delivery.models.push_back(*previous);
    delivery.models.back().updating = true;
  }
  delivery.pending = std::move(still_pending);
  return delivery;
}

AttentionResult compute_attention(const AttentionRequest& request) {
  torch::NoGradGuard no_grad;
  AttentionResult result;
  result.serial = request.serial;
  if (!request.model.predictor || request.batch.task.num_context() == 0) return result;
  auto weights = request.model.predictor->target_attention(request.batch.task);
  if (!weights.defined()) return result;
  auto w = weights[0][0].to(torch::kFloat64);
  w = (w / w.sum()).contiguous();
  result.weights.assign(w.data_ptr<double>(), w.data_ptr<double>() + w.numel());
  result.mean = request.model.predictor->predict(request.batch).mean.flatten()[0].item<double>();
  return result;
}

PredictionService::PredictionService(QObject* parent) : QObject(parent) {
  m_worker = new QObject;
  m_worker->moveToThread(&m_thread);
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread.setObjectName("npe-predictions");
  m_thread.start();
  // Requests made before the event loop runs (a tab's first one comes from its constructor)
  // wait for it, so that a tab made behind others is paused before its first round starts.
  // Later requests start at once: queued through the event loop, each edit's round started
  // after the repaints the edit had asked for (functions tab edit-to-view median 0.2-2.0 ms
  // slower in four interleaved runs, 2026-11-24).
  QMetaObject::invokeMethod(
      this,
      [this] {
        m_constructing = false;
        dispatch();
      },
      Qt::QueuedConnection);
}

PredictionService::~PredictionService() {
  m_thread.quit();
  m_thread.wait();
}

void PredictionService::request(PredictionRequest request) {
  m_pending = std::move(request);
  if (m_busy) m_newer_request = true;
  dispatch();
}

void PredictionService::request_attention(AttentionRequest request) {
  m_pending_attention = std::move(request);
  dispatch();
}

void PredictionService::request_placement(PlacementRequest request) {
  m_pending_placement = std::move(request);
  if (m_busy) m_stop_placement = true;
  dispatch();
}

void PredictionService::cancelPlacement() {
  if (m_pending_placement) {
    PlacementResult result;
    result.serial = m_pending_placement->serial;
    result.model_id = m_pending_placement->model.id;
    result.cancelled = true;
    m_pending_placement.reset();
    Q_EMIT placementReady(result);
  }
  if (m_busy) m_stop_placement = true;
}

void PredictionService::setPaused(bool paused) {
  m_paused = paused;
  dispatch();
}

void PredictionService::dispatch() {
  if (m_busy || m_paused || m_constructing) return;
  if (m_pending) {
    auto request = std::move(*m_pending);
    m_pending.reset();
    m_newer_request = false;
    m_busy = true;
    QMetaObject::invokeMethod(m_worker, [this, request = std::move(request)] {
      const auto serial = request.serial;
      RoundHooks hooks;
      hooks.on_model = [this, serial](const QString& id) {
        QMetaObject::invokeMethod(this, [this, id, serial] { Q_EMIT modelStarted(id, serial); });
      };
      // Deliveries are coalesced: while the GUI thread has not taken the last one, a newer one
      // replaces it, so a tab that draws slower than models finish draws only the newest.
      hooks.on_progress = [this](const PredictionResult& so_far) {
        {
          std::lock_guard lock(m_progress_mutex);
          const bool posted = m_progress.has_value();
          m_progress = so_far;
          if (posted) return;
        }
        QMetaObject::invokeMethod(this, [this] {
          std::optional<PredictionResult> newest;
          {
            std::lock_guard lock(m_progress_mutex);
            newest.swap(m_progress);
          }
          if (newest) Q_EMIT predictionsReady(*newest);
        });
      };
      hooks.newer_request_waiting = [this] { return m_newer_request.load(); };
      hooks.calibration = &m_calibration;
      auto result = compute_predictions(request, hooks);
      {
        std::lock_guard lock(m_progress_mutex);  // the complete result supersedes it
        m_progress.reset();
      }
      QMetaObject::invokeMethod(this, [this, result = std::move(result)] {
        m_busy = false;
        Q_EMIT predictionsReady(result);
        dispatch();
      });
    });
    return;
  }
  if (m_pending_placement) {
    auto request = std::move(*m_pending_placement);
    m_pending_placement.reset();
    m_stop_placement = false;
    m_newer_request = false;
    m_busy = true;
    QMetaObject::invokeMethod(m_worker, [this, request = std::move(request)] {
      auto last_report = std::chrono::steady_clock::now();
      const auto serial = request.serial;
      auto result = compute_placement(request, [&](int64_t done, int64_t total) {
        // Reported at most 20 times a second: the GUI thread draws a progress bar from it.
        const auto now = std::chrono::steady_clock::now();
        if (now - last_report > std::chrono::milliseconds(50) || done == total) {
          last_report = now;
          QMetaObject::invokeMethod(
              this, [this, serial, done, total] { Q_EMIT placementProgress(serial, done, total); });
        }
        return !m_stop_placement && !m_newer_request;
      });
      // Stopped for a prediction rather than by a newer placement or Cancel: it runs again.
      const bool preempted = result.cancelled && m_newer_request && !m_stop_placement;
      QMetaObject::invokeMethod(this, [this, result = std::move(result), preempted,
                                       request = std::move(request)]() mutable {
        m_busy = false;
        if (preempted && !m_pending_placement) {
          m_pending_placement = std::move(request);
        } else if (!preempted) {
          Q_EMIT placementReady(result);
        }
        dispatch();
      });
    });
    return;
  }
  if (m_pending_attention) {
    auto request = std::move(*m_pending_attention);
    m_pending_attention.reset();
    m_busy = true;
    QMetaObject::invokeMethod(m_worker, [this, request = std::move(request)] {
      AttentionResult result;
      try {
        result = compute_attention(request);
      } catch (const std::exception&) {
        result.serial = request.serial;  // no weights: the overlay is simply cleared
      }
      QMetaObject::invokeMethod(this, [this, result = std::move(result)] {
        m_busy = false;
        Q_EMIT attentionReady(result);
        dispatch();
      });
    });
  }
}

}  // namespace npe::widgets
